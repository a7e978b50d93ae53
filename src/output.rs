//! How results reach people: tables or JSON on stdout, logs on stderr, colour rules.
//!
//! Every write goes through [`write_out`] / [`write_err`] (or the `out!`, `outln!` and
//! `errln!` macros), which ignore write errors: a closed pipe (`shardctl ops | head -1`,
//! `shardctl -v move ... 2>&1 | head`) must neither panic nor stop an operation half-way.
//! The standard `println!` family panics on EPIPE, because Rust ignores SIGPIPE.

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static VERBOSITY: AtomicU8 = AtomicU8::new(0);
static COLOR: AtomicBool = AtomicBool::new(false);

/// Output format for results on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Human-readable tables.
    #[default]
    Table,
    /// One JSON document (or one JSON object per event for streaming commands).
    Json,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Sets the global log level (number of `-v`) and colour choice. Called once by the CLI.
pub fn init(verbosity: u8, color: ColorChoice) {
    VERBOSITY.store(verbosity, Ordering::Relaxed);
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let on = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => !no_color && std::io::stdout().is_terminal(),
    };
    COLOR.store(on, Ordering::Relaxed);
}

/// True when output may be coloured.
pub fn color_enabled() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// Writes `text` to stdout in one call, ignoring errors (a closed pipe, a full disk).
pub fn write_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if text.ends_with('\n') {
        let _ = out.flush();
    }
}

/// Writes `text` to stderr in one call, ignoring errors.
pub fn write_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `print!` that never panics: a result that cannot be shown does not stop the command.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_out(&format!($($arg)*))
    };
}

/// `println!` that never panics: a result that cannot be shown does not stop the command.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::write_out("\n")
    };
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::output::write_out(&line)
    }};
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::output::write_err(&line)
    }};
}

/// The log file of `--log-file`, when one was opened.
static LOG_FILE: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> = std::sync::OnceLock::new();

/// Opens `path` for `--log-file`: appended to, created readable by its owner only (0600).
/// From then on every log line of the run goes there too, whatever the verbosity and
/// whether or not stderr is a terminal. An existing file that group or others may read is
/// used as it is, with a warning.
pub fn open_log_file(path: &std::path::Path) -> crate::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| crate::Error::Config(format!("--log-file {}: {e}", path.display())))?;
    if let Ok(meta) = file.metadata() {
        if meta.permissions().mode() & 0o077 != 0 {
            write_err(&format!(
                "shardctl: warning: the log file {} may be read by others (mode {:o})\n",
                path.display(),
                meta.permissions().mode() & 0o777
            ));
        }
    }
    if LOG_FILE.set(std::sync::Mutex::new(file)).is_err() {
        return Err(crate::Error::Usage("--log-file given twice".into()));
    }
    Ok(())
}

/// True when a `--log-file` is open.
pub fn log_file_enabled() -> bool {
    LOG_FILE.get().is_some()
}

/// Writes one whole line to the log file, if any (one `write` call under a lock, so lines
/// of worker threads never interleave).
fn to_log_file(line: &str) {
    if let Some(file) = LOG_FILE.get() {
        if let Ok(mut f) = file.lock() {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// Sends a finished log line to stderr when the verbosity is at least `level`, and to the
/// log file in any case.
fn emit_line(level: u8, line: &str) {
    if VERBOSITY.load(Ordering::Relaxed) >= level {
        write_err(line);
    }
    to_log_file(line);
}

/// True when a message of `level` goes anywhere (stderr or the log file): callers skip
/// building costly messages otherwise.
pub fn log_enabled(level: u8) -> bool {
    VERBOSITY.load(Ordering::Relaxed) >= level || log_file_enabled()
}

/// Writes `msg` to stderr when the verbosity is at least `level`, and to the log file
/// (`--log-file`) whatever the level: `2024-02-29T13:05:09.042Z shardctl: MSG`.
pub fn log(level: u8, msg: &str) {
    if !log_enabled(level) {
        return;
    }
    emit_line(
        level,
        &format!(
            "{} shardctl: {}\n",
            rfc3339_utc(SystemTime::now()),
            msg.replace('\n', " ")
        ),
    );
}

/// Writes `msg` to the log file only (never to the terminal): what the terminal already
/// shows in another form, such as a command's result or its final error.
pub fn record(msg: &str) {
    if log_file_enabled() {
        to_log_file(&format!(
            "{} shardctl: {}\n",
            rfc3339_utc(SystemTime::now()),
            msg.replace('\n', " ")
        ));
    }
}

/// Logs one statement sent to `node` (level 1, `-v`): `TIMESTAMP NODE [PURPOSE #CONN]:
/// TEXT`. `text` must already be safe to show — secrets masked, no bound values
/// ([`crate::server::log_text`] makes it so).
pub fn log_statement(node: &str, tag: &str, text: &str) {
    if !log_enabled(1) {
        return;
    }
    emit_line(
        1,
        &format!(
            "{} {node} [{tag}]: {text}\n",
            rfc3339_utc(SystemTime::now())
        ),
    );
}

/// `t` as an RFC 3339 UTC timestamp with millisecond precision,
/// `2024-02-29T13:05:09.042Z`. Written here, from the proleptic Gregorian calendar (the
/// days-from-civil algorithm of H. Hinnant), so no date crate is needed; times before 1970
/// are handled too.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let millis: i128 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i128,
        Err(e) => -(e.duration().as_millis() as i128),
    };
    let days = millis.div_euclid(86_400_000) as i64;
    let in_day = millis.rem_euclid(86_400_000) as u64;
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, ms) = (rest / 1000, rest % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{ms:03}Z")
}

/// The date (year, month 1-12, day 1-31) of `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of the 400-year era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the year from March 1
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A table in the project's style.
pub fn table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(headers.iter().map(Cell::new));
    if !color_enabled() {
        t.force_no_tty();
    }
    t
}

/// A cell coloured by a health verdict when colour is on.
pub fn status_cell(text: &str, good: bool) -> Cell {
    let cell = Cell::new(text);
    if color_enabled() {
        cell.fg(if good { Color::Green } else { Color::Red })
    } else {
        cell
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => write_out(&format!("{s}\n")),
        Err(e) => write_err(&format!("shardctl: cannot encode JSON: {e}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: i64, millis: u64) -> String {
        let t = if secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(secs as u64) + Duration::from_millis(millis)
        } else {
            UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::from_millis(millis)
        };
        rfc3339_utc(t)
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(0, 1), "1970-01-01T00:00:00.001Z");
        // `date -u -d @951782400`: the leap day of 2000 (divisible by 400).
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(951_868_799, 999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(951_868_800, 0), "2000-03-01T00:00:00.000Z");
        // 2024 is a leap year; 2100 is not (divisible by 100, not by 400).
        assert_eq!(at(1_709_208_245, 42), "2024-02-29T12:04:05.042Z");
        assert_eq!(at(1_709_251_199, 0), "2024-02-29T23:59:59.000Z");
        assert_eq!(at(1_709_251_200, 0), "2024-03-01T00:00:00.000Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        // Year ends, the 32-bit rollover, and a day before the epoch.
        assert_eq!(at(1_703_980_800, 0), "2023-12-31T00:00:00.000Z");
        assert_eq!(at(1_704_067_199, 500), "2023-12-31T23:59:59.500Z");
        assert_eq!(at(1_704_067_200, 0), "2024-01-01T00:00:00.000Z");
        assert_eq!(at(2_147_483_647, 0), "2038-01-19T03:14:07.000Z");
        assert_eq!(at(-86_400, 0), "1969-12-31T00:00:00.000Z");
        assert_eq!(at(-1, 250), "1969-12-31T23:59:59.250Z");
        assert_eq!(at(-2_203_977_600, 0), "1900-02-28T00:00:00.000Z");
        assert_eq!(at(-2_203_891_200, 0), "1900-03-01T00:00:00.000Z");
    }

    #[test]
    fn every_day_follows_the_one_before() {
        // Walk 800 years of days (1800-2600, every leap rule twice) and check each date
        // is the day after the one before it.
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut prev = civil_from_days(-62_091); // 1800-01-01
        assert_eq!(prev, (1800, 1, 1));
        for days in -62_090..230_000 {
            let (y, m, d) = civil_from_days(days);
            let (py, pm, pd) = prev;
            let expected = if pd < len(py, pm) {
                (py, pm, pd + 1)
            } else if pm < 12 {
                (py, pm + 1, 1)
            } else {
                (py + 1, 1, 1)
            };
            assert_eq!((y, m, d), expected, "day {days}");
            prev = (y, m, d);
        }
    }
}
