"""A reference router for shardctl's sharding directory, in Python.

It follows the contract of docs/DIRECTORY.md, as the Rust ``Router`` does:

- it loads the whole directory in one consistent read, after checking the directory
  schema's version, and answers lookups from memory (range: the greatest lower bound at or
  below the key; hash: the largest ring point strictly below the MD5 of the key's text,
  else the largest point; list: the key's exact text);
- it asks the directory for its version every ``check_interval`` seconds and after every
  error of the retry rule, and when the version changed follows the change log: it
  re-reads only the shards changed since its version, or everything when the log cannot
  say (docs/DIRECTORY.md, "Following changes");
- it refuses, before sending anything, what the operator closed a shard to
  (``locations.availability``: ``ShardUnavailable``);
- ``Executor.run`` sends a statement to the shard that owns a key and applies the retry
  rule: on 1290/1836 (read-only), 1146/1049 (table or schema gone), a lost connection, or
  a 1644 whose message starts with ``shardctl: `` (a split's guard) it re-reads the
  directory, looks the key up again and retries, until a deadline.

One dependency, PyMySQL (pure Python). Use it as is, or as the model for a router in
another language: nothing here is specific to Python but the syntax.
"""

import bisect
import hashlib
import time
from dataclasses import dataclass, field

import pymysql

#: The directory schema version docs/DIRECTORY.md describes; an older directory lacks
#: tables this router reads.
CONTRACT_SCHEMA_VERSION = 15

#: Client-side errors of a connection that broke or could not be made (CR_*).
LOST_CONNECTION_CODES = frozenset({2002, 2003, 2006, 2013, 2027, 2055})

#: The message prefix of the wrong-shard guard a split leaves on the old shard.
GUARD_MESSAGE_PREFIX = "shardctl: "


def is_refresh_error(code, message):
    """True when a server (or client) error means the route may be stale: re-read the
    directory, look the key up again and retry (docs/DIRECTORY.md, "The retry rule")."""
    if code in (1146, 1049, 1290, 1836):
        return True
    if code == 1644:
        return message.startswith(GUARD_MESSAGE_PREFIX)
    return code in LOST_CONNECTION_CODES


def error_of(exc):
    """(code, message) of a PyMySQL error; a connection that broke without a server error
    counts as a lost connection (2013)."""
    if isinstance(exc, (pymysql.err.InterfaceError, OSError)):
        return 2013, str(exc)
    args = getattr(exc, "args", ())
    if isinstance(exc, pymysql.err.MySQLError) and len(args) >= 2 and isinstance(args[0], int):
        return args[0], str(args[1])
    return None, str(exc)


class NoShard(LookupError):
    """No shard holds the key (below the lowest lower bound, a value no list holds, a
    function without shards), or the function or table is unknown."""


class DirectoryError(RuntimeError):
    """The directory cannot be used by this router (missing, or an older schema)."""


class ShardUnavailable(RuntimeError):
    """The operator closed the key's shard to this access (``shardctl shard
    set-availability``): nothing was sent. ``shard_id`` and ``availability`` say which and
    how; it is not an error of the retry rule, and lasts until the operator reopens it."""

    def __init__(self, shard_id, availability, access):
        super().__init__(
            f"shard {shard_id} is {availability}: the operator closed it to {access}s"
        )
        self.shard_id = shard_id
        self.availability = availability
        self.access = access


#: What an application means to do on a shard, checked against its availability.
READ = "read"
WRITE = "write"

#: What each availability lets through (docs/DIRECTORY.md, "Availability").
ALLOWED = {
    "available": {READ, WRITE},
    "no_writes": {READ},
    "unavailable": set(),
}

#: The most shards an incremental refresh re-reads; past that it reloads everything.
INCREMENTAL_MAX_SHARDS = 1000


def key_text(key_type, key):
    """The key's text, as the directory stores and hashes it: the plain decimal form of an
    integer, the string itself (at most 255 bytes of UTF-8)."""
    if key_type == "INT":
        if isinstance(key, bool) or not isinstance(key, int):
            key = int(str(key).strip())
        if not -(2**63) <= key < 2**63:
            raise ValueError(f"key {key} is not a signed 64-bit integer")
        return str(key)
    text = str(key)
    if len(text.encode("utf-8")) > 255:
        raise ValueError(f"key {text!r} is longer than 255 bytes")
    return text


@dataclass(frozen=True)
class Route:
    """Where a key lives."""

    shard_id: int
    function: str
    node: str
    host: str
    port: int
    state: str
    #: What the operator lets reach it: ``available``, ``no_writes`` or ``unavailable``.
    availability: str
    #: The shard's physical schemas, ``<schema>_<shard_id>`` for each logical schema.
    schemas: tuple


@dataclass
class _Function:
    func_id: int
    name: str
    sharding_type: str
    key_type: str
    bounds: list = field(default_factory=list)  # sorted lower bounds (int, or bytes)
    bound_shards: list = field(default_factory=list)
    points: list = field(default_factory=list)  # sorted ring points, 32 lowercase hex digits
    point_shards: list = field(default_factory=list)
    values: dict = field(default_factory=dict)  # key text (bytes) -> shard
    schemas: tuple = ()

    def shard_for(self, text):
        if self.sharding_type == "RANGE":
            k = int(text) if self.key_type == "INT" else text.encode("utf-8")
            i = bisect.bisect_right(self.bounds, k)
            return self.bound_shards[i - 1] if i > 0 else None
        if self.sharding_type == "HASH":
            if not self.points:
                return None
            h = hashlib.md5(text.encode("utf-8")).hexdigest()
            i = bisect.bisect_left(self.points, h)
            return self.point_shards[i - 1] if i > 0 else self.point_shards[-1]
        return self.values.get(text.encode("utf-8"))


class Snapshot:
    """The directory at one version: the rows a router reads, and lookups built from them.

    The location and mapping rows are kept by shard, so that a refresh can replace the
    rows of the shards the change log names (``apply``)."""

    def __init__(self, version, functions, columns, globals_, shards):
        self.version = version
        self._function_rows = functions  # func_id -> (name, sharding_type, key_type)
        self._columns = columns  # [(schema, table, column, func_id)]
        self.globals = globals_  # set of (schema, table)
        #: shard_id -> {"location": (func_id, node, host, port, state, availability),
        #: "ranges": [(func_id, lower, lower_str)], "hashes": [(func_id, hash)],
        #: "lists": [(func_id, value)]}
        self.shards = shards
        self._index()

    def apply(self, version, changed, part):
        """A new snapshot at ``version``: this one with the rows of the shards in
        ``changed`` replaced by ``part`` (theirs as read now; a shard absent from it is
        gone)."""
        shards = {s: rows for s, rows in self.shards.items() if s not in changed}
        shards.update({s: rows for s, rows in part.items() if rows["location"]})
        return Snapshot(version, self._function_rows, self._columns, self.globals, shards)

    def _index(self):
        #: shard_id -> (func_id, node, host, port, state, availability)
        self.locations = {s: r["location"] for s, r in self.shards.items() if r["location"]}
        by_id = {
            func_id: _Function(func_id, name, kind, key_type)
            for func_id, (name, kind, key_type) in self._function_rows.items()
        }
        ranges, hashes = [], []
        for shard, rows in self.shards.items():
            for func_id, lower, lower_str in rows["ranges"]:
                ranges.append((func_id, lower, lower_str, shard))
            for func_id, point in rows["hashes"]:
                hashes.append((func_id, point, shard))
            for func_id, value in rows["lists"]:
                f = by_id.get(func_id)
                if f is not None:
                    f.values[bytes(value)] = shard
        for func_id, lower, lower_str, shard in sorted(
            ranges, key=lambda r: (r[0], r[1] if r[1] is not None else 0, bytes(r[2] or b""))
        ):
            f = by_id.get(func_id)
            if f is None or (lower is None and lower_str is None):
                continue
            f.bounds.append(lower if f.key_type == "INT" else bytes(lower_str))
            f.bound_shards.append(shard)
        for func_id, point, shard in sorted(hashes, key=lambda r: (r[0], r[1].lower())):
            f = by_id.get(func_id)
            if f is not None:
                f.points.append(point.lower())
                f.point_shards.append(shard)
        self.tables = {}  # (schema, table) -> (function name, column)
        schemas = {}
        for schema, table, column, func_id in self._columns:
            f = by_id.get(func_id)
            if f is not None:
                self.tables[(schema, table)] = (f.name, column)
                schemas.setdefault(func_id, set()).add(schema)
        for func_id, names in schemas.items():
            by_id[func_id].schemas = tuple(sorted(names))
        self.functions = {f.name: f for f in by_id.values()}  # name -> _Function


def _read_shards(cur, shard_ids=None):
    """The location and mapping rows of ``shard_ids`` (every shard for None), by shard;
    each shard named gets an entry, without a location when it has none."""
    where, args = "", ()
    if shard_ids is not None:
        ids = sorted(shard_ids)
        where = " WHERE shard_id IN (" + ", ".join(["%s"] * len(ids)) + ")"
        args = tuple(ids)
    shards = {}

    def entry(shard):
        return shards.setdefault(
            shard, {"location": None, "ranges": [], "hashes": [], "lists": []}
        )

    for shard in shard_ids or ():
        entry(shard)
    cur.execute(
        "SELECT shard_id, func_id, node, host, port, state, availability FROM locations" + where,
        args,
    )
    for r in cur.fetchall():
        entry(r[0])["location"] = tuple(r[1:])
    cur.execute("SELECT func_id, lower_bound, lower_bound_str, shard_id FROM ranges" + where, args)
    for func_id, lower, lower_str, shard in cur.fetchall():
        entry(shard)["ranges"].append((func_id, lower, lower_str))
    cur.execute("SELECT func_id, hash, shard_id FROM hashes" + where, args)
    for func_id, point, shard in cur.fetchall():
        entry(shard)["hashes"].append((func_id, point))
    cur.execute("SELECT func_id, value, shard_id FROM lists" + where, args)
    for func_id, value, shard in cur.fetchall():
        entry(shard)["lists"].append((func_id, value))
    return shards


def _read_all(cur):
    """The whole directory, inside the caller's consistent read."""
    cur.execute("SELECT version FROM directory_version WHERE id = 1")
    version = cur.fetchone()[0]
    cur.execute("SELECT func_id, name, sharding_type, key_type FROM partition_functions")
    functions = {r[0]: (r[1], r[2], r[3]) for r in cur.fetchall()}
    shards = _read_shards(cur)
    cur.execute("SELECT schema_name, table_name, column_name, func_id FROM columns")
    columns = list(cur.fetchall())
    cur.execute("SELECT schema_name, table_name FROM global_tables")
    globals_ = {(r[0], r[1]) for r in cur.fetchall()}
    return Snapshot(version, functions, columns, globals_, shards)


def load(conn):
    """Reads the whole directory in one consistent read (docs/DIRECTORY.md, "Caching the
    directory"). ``conn``'s default database is the directory schema."""
    with conn.cursor() as cur:
        cur.execute("SELECT version FROM schema_version WHERE id = 1")
        row = cur.fetchone()
        if row is None or row[0] < CONTRACT_SCHEMA_VERSION:
            raise DirectoryError(
                f"the directory has schema version {row and row[0]}, this router reads "
                f"version {CONTRACT_SCHEMA_VERSION} or later: run `shardctl init`"
            )
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        try:
            return _read_all(cur)
        finally:
            cur.execute("COMMIT")


def follow(conn, snapshot):
    """``snapshot`` brought up to the directory's version in one consistent read, through
    the change log (docs/DIRECTORY.md, "Following changes"). Returns the new snapshot and
    how: ``("incremental", shards)`` or ``("full", why)``."""
    with conn.cursor() as cur:
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        try:
            cur.execute("SELECT version FROM directory_version WHERE id = 1")
            now = cur.fetchone()[0]
            since = snapshot.version
            if now == since:
                return snapshot, None
            if now < since:
                return _read_all(cur), ("full", "behind")
            cur.execute(
                "SELECT version, scope, shards FROM directory_changes "
                "WHERE version > %s AND version <= %s ORDER BY version",
                (since, now),
            )
            log = cur.fetchall()
            if len(log) != now - since:
                return _read_all(cur), ("full", "log_too_short")
            changed = set()
            for _, scope, ids in log:
                if scope == "all":
                    return _read_all(cur), ("full", "everything")
                if scope == "shards":
                    changed.update(int(i) for i in ids.split(",") if i)
            if len(changed) > INCREMENTAL_MAX_SHARDS:
                return _read_all(cur), ("full", "many_shards")
            part = _read_shards(cur, changed) if changed else {}
            return snapshot.apply(now, changed, part), ("incremental", tuple(sorted(changed)))
        finally:
            cur.execute("COMMIT")


class Router:
    """Routes keys to shards from a cached directory, checking its version.

    ``directory`` holds PyMySQL connection arguments for the directory node, with the
    application's read-only account (``directory.application`` in the inventory) and the
    directory schema as ``database``.
    """

    def __init__(self, directory, check_interval=1.0, clock=time.monotonic):
        self._args = dict(directory)
        self._args.setdefault("charset", "utf8mb4")
        self._args.setdefault("connect_timeout", 5)
        self._args.setdefault("read_timeout", 10)
        self._args.setdefault("write_timeout", 10)
        self._args["autocommit"] = True
        self.check_interval = check_interval
        self._clock = clock
        self._conn = None
        self.snapshot = load(self._connection())
        self.checked_at = self._clock()
        #: Times the cache followed a new version.
        self.reloads = 0
        #: How the last of those went: ``("incremental", shard ids)`` or ``("full", why)``.
        self.last_reload = None

    def _connection(self):
        if self._conn is None:
            self._conn = pymysql.connect(**self._args)
        return self._conn

    @property
    def version(self):
        """The directory version the cache was loaded at."""
        return self.snapshot.version

    def refresh(self):
        """Asks the directory for its version now and, when it changed, brings the cache up
        to it through the change log (``follow``). Returns True when the version had
        changed. A broken directory connection is reopened once."""
        for attempt in (1, 2):
            try:
                conn = self._connection()
                with conn.cursor() as cur:
                    cur.execute("SELECT version FROM directory_version WHERE id = 1")
                    version = cur.fetchone()[0]
                reloaded = False
                if version != self.snapshot.version:
                    self.snapshot, how = follow(conn, self.snapshot)
                    if how is not None:
                        self.last_reload = how
                        self.reloads += 1
                        reloaded = True
                self.checked_at = self._clock()
                return reloaded
            except pymysql.err.MySQLError as e:
                code, _ = error_of(e)
                self._close()
                if attempt == 2 or code not in LOST_CONNECTION_CODES:
                    raise
        return False

    def maybe_refresh(self):
        """``refresh`` when the last check is older than the check interval."""
        if self._clock() - self.checked_at >= self.check_interval:
            return self.refresh()
        return False

    def refresh_after(self, code, message):
        """The retry rule after a failed statement: refreshes only on an error that says
        the route may be stale; returns whether the cache was reloaded."""
        return self.refresh() if is_refresh_error(code, message) else False

    def route(self, function, key, access=WRITE):
        """The route of ``key`` under the partition function called ``function``, for
        ``access`` (``READ`` or ``WRITE``): ``ShardUnavailable`` when the operator closed
        the shard to it. ``access=None`` only says where the key lives."""
        f = self.snapshot.functions.get(function)
        if f is None:
            raise NoShard(f"unknown partition function {function!r}")
        if f.sharding_type == "KEY":
            # A per-key function's keys are not cached here: each lookup reads the key's
            # row (the contract's `key` block), so a change log row of scope `keys` has
            # nothing to drop.
            shard = self._key_shard(f, key_text(f.key_type, key))
        else:
            shard = f.shard_for(key_text(f.key_type, key))
        if shard is None:
            raise NoShard(f"no shard of function {function} holds key {key!r}")
        loc = self.snapshot.locations.get(shard)
        if loc is None:
            raise NoShard(f"the directory maps to shard {shard}, which has no location")
        _, node, host, port, state, availability = loc
        if access is not None and access not in ALLOWED.get(availability, set()):
            raise ShardUnavailable(shard, availability, access)
        schemas = tuple(f"{s}_{shard}" for s in f.schemas)
        return Route(shard, function, node, host, port, state, availability, schemas)

    def _key_shard(self, f, text):
        with self._connection().cursor() as cur:
            cur.execute(
                "SELECT shard_id FROM key_shards WHERE func_id = %s AND key_value = CAST(%s AS BINARY)",
                (f.func_id, text),
            )
            row = cur.fetchone()
        return row[0] if row else None

    def route_table(self, schema, table, key, access=WRITE):
        """The route of ``key`` in the sharded table ``schema.table``, as ``route``."""
        mapped = self.snapshot.tables.get((schema, table))
        if mapped is None:
            raise NoShard(f"table {schema}.{table} is not a sharded table in the directory")
        return self.route(mapped[0], key, access)

    def is_global(self, schema, table):
        """True for a global table (copied whole into every shard schema of ``schema``)."""
        return (schema, table) in self.snapshot.globals

    def _close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - the connection is being dropped anyway
                pass
            self._conn = None

    def close(self):
        """Closes the directory connection."""
        self._close()


class RetryTimeout(RuntimeError):
    """A statement kept failing with errors of the retry rule until the deadline."""


class Executor:
    """Runs statements on the shard owning a key, with one connection per node (the
    application's account, ``shards``: PyMySQL arguments without host and port), and the
    retry rule."""

    def __init__(self, router, shards, deadline=60.0, pause=0.005, stale=False):
        self.router = router
        self._args = dict(shards)
        self._args.setdefault("charset", "utf8mb4")
        self._args.setdefault("connect_timeout", 5)
        self._args.setdefault("read_timeout", 30)
        self._args.setdefault("write_timeout", 30)
        self._args["autocommit"] = True
        self.deadline = deadline
        self.pause = pause
        #: A stale executor never checks the version on its own: only after an error of
        #: the retry rule (as an application trusting the servers to tell it).
        self.stale = stale
        self._conns = {}
        #: Failed attempts, the errors of the retry rule among them, and those by code.
        self.failed_attempts = 0
        self.refresh_errors = 0
        self.refresh_errors_by_code = {}

    def _connection(self, route):
        addr = (route.host, route.port)
        conn = self._conns.get(addr)
        if conn is None:
            conn = pymysql.connect(host=route.host, port=route.port, **self._args)
            self._conns[addr] = conn
        return conn

    def _drop(self, route):
        conn = self._conns.pop((route.host, route.port), None)
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - the connection is being dropped anyway
                pass

    def run(self, function, key, work, access=WRITE):
        """Calls ``work(cursor, route)`` on a connection to the shard owning ``key`` (the
        cursor's default database is not set: name ``route.schemas[i]``) and returns
        ``(result, route)``. Errors of the retry rule are retried until the deadline;
        others are raised, and so is ``ShardUnavailable`` for a shard closed to ``access``
        (nothing sent). ``work`` must be safe to repeat: a write whose connection broke
        after it was sent may have committed."""
        give_up = time.monotonic() + self.deadline
        while True:
            if not self.stale:
                self.router.maybe_refresh()
            route = self.router.route(function, key, access)
            try:
                conn = self._connection(route)
                with conn.cursor() as cur:
                    return work(cur, route), route
            except (pymysql.err.MySQLError, OSError) as e:
                code, message = error_of(e)
                self.failed_attempts += 1
                if code in LOST_CONNECTION_CODES or code is None:
                    self._drop(route)
                if not is_refresh_error(code, message):
                    raise
                self.refresh_errors += 1
                self.refresh_errors_by_code[code] = self.refresh_errors_by_code.get(code, 0) + 1
                if time.monotonic() > give_up:
                    raise RetryTimeout(
                        f"key {key!r} of {function}: still failing after {self.deadline} s: "
                        f"{code} {message}"
                    ) from e
                try:
                    self.router.refresh()
                except pymysql.err.MySQLError:
                    pass  # the directory is unreachable: keep the cache, retry
                time.sleep(self.pause)

    def close(self):
        """Closes every node connection."""
        for conn in self._conns.values():
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
        self._conns.clear()
