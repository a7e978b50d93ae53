"""Tests of the reference router against a real fleet, run by tests/contract.rs
(`the_python_router_follows_the_contract`), which starts the fleet and says where it is:

- SHARDCTL_DIRECTORY_HOST, SHARDCTL_DIRECTORY_PORT, SHARDCTL_DIRECTORY_SCHEMA: the directory;
- SHARDCTL_APP_OPTION_FILE: a [client] option file with the application's account (read
  with PyMySQL's read_default_file: the password is in no argument and no variable);
- SHARDCTL_EXPECTED: a JSON file of what the Rust Router answers (keys per function,
  the retry rule's verdicts, the directory version);
- SHARDCTL_BIN, SHARDCTL_INVENTORY: the shardctl binary and the fleet's inventory, to
  change the directory under the router (a new shard, a move).
"""

import json
import os
import subprocess
import unittest

import shardctl_router as sr


def env(name):
    value = os.environ.get(name)
    if not value:
        raise unittest.SkipTest(f"{name} is not set: run through tests/contract.rs")
    return value


def directory_args():
    return {
        "host": env("SHARDCTL_DIRECTORY_HOST"),
        "port": int(env("SHARDCTL_DIRECTORY_PORT")),
        "database": env("SHARDCTL_DIRECTORY_SCHEMA"),
        "read_default_file": env("SHARDCTL_APP_OPTION_FILE"),
    }


def shard_args():
    return {"read_default_file": env("SHARDCTL_APP_OPTION_FILE")}


def shardctl(*args):
    out = subprocess.run(
        [env("SHARDCTL_BIN"), "--config", env("SHARDCTL_INVENTORY"), *args],
        env={**os.environ, "SHARDCTL_YES": "1", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0:
        raise AssertionError(f"shardctl {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


def expected():
    with open(env("SHARDCTL_EXPECTED"), encoding="utf-8") as f:
        return json.load(f)


class RouterTest(unittest.TestCase):
    def test_1_lookups_agree_with_the_rust_router(self):
        exp = expected()
        router = sr.Router(directory_args())
        self.assertEqual(router.version, exp["version"])
        compared = 0
        for function, answers in exp["functions"].items():
            for key, want in answers:
                try:
                    r = router.route(function, key, access=None)
                    got = [
                        r.shard_id,
                        r.node,
                        r.host,
                        r.port,
                        r.state,
                        r.availability,
                        list(r.schemas),
                    ]
                except sr.NoShard:
                    got = None
                self.assertEqual(got, want, f"{function} key {key!r}")
                compared += 1
        for schema, table, key, want in exp["tables"]:
            self.assertEqual(router.route_table(schema, table, key).shard_id, want)
        with self.assertRaises(sr.NoShard):
            router.route_table("cdb", "nothing", 1)
        self.assertTrue(router.is_global("cdb", "colours"))
        self.assertFalse(router.is_global("cdb", "items"))
        print(f"compared {compared} keys with the Rust router")
        router.close()

    def test_2_the_retry_rule_is_the_rust_routers(self):
        for code, message, want in expected()["refresh_errors"]:
            self.assertEqual(sr.is_refresh_error(code, message), want, f"{code} {message!r}")

    def test_3_the_version_check_reloads_a_changed_directory(self):
        now = [0.0]
        router = sr.Router(directory_args(), check_interval=1.0, clock=lambda: now[0])
        before = router.version
        with self.assertRaises(sr.NoShard):
            router.route("lp", "py1")
        self.assertFalse(router.refresh(), "unchanged directory, no reload")
        shardctl("shard", "add", "--function", "lp", "--node", "node2", "--values", "py1")
        now[0] += 0.5
        self.assertFalse(router.maybe_refresh(), "checked before the interval")
        with self.assertRaises(sr.NoShard):
            router.route("lp", "py1")
        now[0] += 0.6
        self.assertTrue(router.maybe_refresh(), "checked after the interval, reloaded")
        self.assertGreater(router.version, before)
        self.assertEqual(router.route("lp", "py1").node, "node2")
        self.assertEqual(router.reloads, 1)
        # An error that is not about routing never re-reads the directory; one that is does.
        self.assertFalse(router.refresh_after(1062, "Duplicate entry"))
        self.assertFalse(router.refresh_after(1146, "Table doesn't exist"))
        router.close()

    def test_4_a_stale_router_follows_a_moved_shard_through_the_retry_rule(self):
        router = sr.Router(directory_args())
        ex = sr.Executor(router, shard_args(), deadline=60, stale=True)

        def insert(k, note):
            def work(cur, route):
                cur.execute(
                    f"INSERT INTO `{route.schemas[0]}`.items (k, note) VALUES (%s, %s)", (k, note)
                )
                return cur.rowcount

            return ex.run("ri", k, work)

        _, first = insert(50, "before the move")
        self.assertEqual(first.node, "node1")
        self.assertEqual(ex.failed_attempts, 0)
        shardctl("move", "--shard", str(first.shard_id), "--to", "node2")
        # The stale router still sends key 51 to node1: the old copy is gone (1049), the
        # router re-reads the directory and writes on node2.
        self.assertEqual(router.route("ri", 51).node, "node1")
        _, second = insert(51, "after the move")
        self.assertEqual((second.shard_id, second.node), (first.shard_id, "node2"))
        self.assertGreaterEqual(ex.refresh_errors, 1)
        self.assertEqual(router.reloads, 1)

        def keys(cur, route):
            cur.execute(f"SELECT k FROM `{route.schemas[0]}`.items WHERE k IN (50, 51) ORDER BY k")
            return [r[0] for r in cur.fetchall()]

        fresh = sr.Executor(sr.Router(directory_args()), shard_args())
        rows, where = fresh.run("ri", 50, keys)
        self.assertEqual((rows, where.node), ([50, 51], "node2"))
        print(f"moved shard {first.shard_id}: {ex.failed_attempts} failed attempt(s), then node2")
        ex.close()
        fresh.close()
        router.close()

    def test_5_a_shard_the_operator_closed_is_refused_before_anything_is_sent(self):
        router = sr.Router(directory_args())
        shard = router.route("li", 42).shard_id
        shardctl("shard", "set-availability", "--shard", str(shard), "no-writes")
        try:
            self.assertEqual(router.route("li", 42).shard_id, shard, "cached until refreshed")
            self.assertTrue(router.refresh())
            self.assertEqual(router.last_reload, ("incremental", (shard,)))
            with self.assertRaises(sr.ShardUnavailable) as refused:
                router.route("li", 42)
            self.assertEqual(
                (refused.exception.shard_id, refused.exception.availability),
                (shard, "no_writes"),
            )
            self.assertEqual(router.route("li", 42, sr.READ).availability, "no_writes")
            ex = sr.Executor(router, shard_args())
            sent = []
            with self.assertRaises(sr.ShardUnavailable):
                ex.run("li", 42, lambda cur, route: sent.append(route))
            self.assertEqual(sent, [], "nothing was sent")
            self.assertEqual(ex.failed_attempts, 0, "not an error of the retry rule")
            shardctl("shard", "set-availability", "--shard", str(shard), "unavailable")
            self.assertTrue(router.refresh())
            with self.assertRaises(sr.ShardUnavailable):
                router.route("li", 42, sr.READ)
            self.assertEqual(router.route("li", 42, access=None).shard_id, shard)
            ex.close()
        finally:
            shardctl("shard", "set-availability", "--shard", str(shard), "available")
        self.assertTrue(router.refresh())
        self.assertEqual(router.route("li", 42).availability, "available")
        router.close()

    def test_6_a_refresh_re_reads_only_the_shards_the_change_log_names(self):
        router = sr.Router(directory_args())
        shardctl("shard", "add", "--function", "lp", "--node", "node1", "--values", "py6,py7")
        self.assertTrue(router.refresh())
        new = router.route("lp", "py7").shard_id
        self.assertEqual(router.last_reload, ("incremental", (new,)))
        fresh = sr.Router(directory_args())

        def content(snapshot):
            functions = {
                name: (f.bounds, f.bound_shards, f.points, f.point_shards, f.values, f.schemas)
                for name, f in snapshot.functions.items()
            }
            return snapshot.version, snapshot.locations, functions, snapshot.tables

        self.assertEqual(content(router.snapshot), content(fresh.snapshot))
        # A change of more than shards (a function added) reloads everything.
        shardctl("function", "add", "pyf", "--type", "hash", "--key", "int")
        self.assertTrue(router.refresh())
        self.assertEqual(router.last_reload, ("full", "everything"))
        self.assertIn("pyf", router.snapshot.functions)
        shardctl("function", "remove", "pyf")
        self.assertTrue(router.refresh())
        self.assertNotIn("pyf", router.snapshot.functions)
        print(f"shard {new} added: re-read alone")
        fresh.close()
        router.close()


if __name__ == "__main__":
    unittest.main()
