"""A writer that routes with the reference router and never checks the directory's version
on its own: it re-reads the directory only when a server's error says to (the retry
rule), as an application trusting the servers to tell it. shardctl's workload check then
looks for every write it acknowledged (tests/contract.rs,
`a_stale_python_router_writes_nothing_to_the_wrong_shard_across_a_move_and_a_split`).

    python stale_writer.py FUNCTION LOW HIGH RATE STOP_FILE HOLD_FILE ACKS_FILE

Writes random integer keys of [LOW, HIGH) at RATE writes per second into the
`shardctl_workload` table of the first schema of each key's shard, until STOP_FILE exists
(or ten minutes pass). While HOLD_FILE exists it writes nothing, so its routes stay as
they were through whatever happens meanwhile (a split it never sees fenced). Each acknowledged write is one JSON line in ACKS_FILE (key, seq,
shard, node, schema); a summary line goes to standard output at the end. The directory
and the account come from the environment, as for test_shardctl_router.py.
"""

import json
import os
import random
import sys
import time

import pymysql

import shardctl_router as sr

LONGEST_RUN_SECS = 600


def main(argv):
    function, low, high, rate, stop_file, hold_file, acks_file = argv
    low, high, rate = int(low), int(high), float(rate)
    option_file = os.environ["SHARDCTL_APP_OPTION_FILE"]
    router = sr.Router(
        {
            "host": os.environ["SHARDCTL_DIRECTORY_HOST"],
            "port": int(os.environ["SHARDCTL_DIRECTORY_PORT"]),
            "database": os.environ["SHARDCTL_DIRECTORY_SCHEMA"],
            "read_default_file": option_file,
        }
    )
    ex = sr.Executor(router, {"read_default_file": option_file}, deadline=60, stale=True)
    rng = random.Random(int(os.environ.get("SHARDCTL_WRITER_SEED", "1")))
    # Unique across runs: a duplicate key can only be this run's own retried write.
    seq = time.time_ns()
    acked = lost = 0
    nodes_written = set()
    interval = 1.0 / rate
    started = time.monotonic()
    next_at = started
    with open(acks_file, "w", encoding="utf-8") as out:
        while not os.path.exists(stop_file) and time.monotonic() - started < LONGEST_RUN_SECS:
            if os.path.exists(hold_file):
                time.sleep(0.01)
                next_at = time.monotonic()
                continue
            now = time.monotonic()
            if now < next_at:
                time.sleep(next_at - now)
            next_at = max(next_at + interval, time.monotonic() - interval)
            key = rng.randrange(low, high)
            seq += 1
            tried = []

            def work(cur, route, key=key, seq=seq, tried=tried):
                tried.append(route)
                cur.execute(
                    f"INSERT INTO `{route.schemas[0]}`.shardctl_workload (k, seq) VALUES (%s, %s)",
                    (key, seq),
                )

            try:
                _, route = ex.run(function, key, work)
            except pymysql.err.IntegrityError as e:
                if e.args[0] != 1062 or not tried:
                    raise
                # Our own earlier attempt went through without its answer.
                route = tried[-1]
            except sr.RetryTimeout:
                lost += 1
                continue
            acked += 1
            nodes_written.add(route.node)
            out.write(
                json.dumps(
                    {
                        "key": key,
                        "seq": seq,
                        "shard": route.shard_id,
                        "node": route.node,
                        "schema": route.schemas[0],
                    }
                )
                + "\n"
            )
            out.flush()
    print(
        json.dumps(
            {
                "acked": acked,
                "lost": lost,
                "failed_attempts": ex.failed_attempts,
                "refresh_errors": ex.refresh_errors,
                "refresh_errors_by_code": {str(c): n for c, n in ex.refresh_errors_by_code.items()},
                "reloads": router.reloads,
                "nodes_written": sorted(nodes_written),
            }
        ),
        flush=True,
    )
    ex.close()
    router.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
