//! The smoke run CI makes of every benchmark (`.ci/run`): with `BENCH_SMOKE` set, each
//! bench takes tiny sizes and one run by default, so that it still runs to its end (a bench
//! that panics fails CI) in seconds; its figures then mean nothing. A size variable set
//! explicitly still wins.

/// True in a smoke run (`BENCH_SMOKE` set).
pub fn on() -> bool {
    std::env::var_os("BENCH_SMOKE").is_some()
}

/// `smoke` in a smoke run, else `real`.
pub fn or<T>(smoke: T, real: T) -> T {
    if on() {
        smoke
    } else {
        real
    }
}
