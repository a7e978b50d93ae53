//! How results reach people: tables or JSON on stdout, logs on stderr, colour rules.
//!
//! Every write goes through [`write_out`] / [`write_err`] (or the `out!`, `outln!` and
//! `errln!` macros), which ignore write errors: a closed pipe (`shardctl ops | head -1`,
//! `shardctl -v move ... 2>&1 | head`) must neither panic nor stop an operation half-way.
//! The standard `println!` family panics on EPIPE, because Rust ignores SIGPIPE.

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

static VERBOSITY: AtomicU8 = AtomicU8::new(0);
/// The replication lag the running catch-up last read, for the progress display
/// (`u64::MAX`: none read).
static LAG_SECS: AtomicU64 = AtomicU64::new(u64::MAX);
static COLOR: AtomicBool = AtomicBool::new(false);

/// Output format for results on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Human-readable tables.
    #[default]
    Table,
    /// One JSON document (or one JSON object per event for streaming commands).
    Json,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// When stdout is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    /// Even when stdout is not a terminal.
    Always,
    /// Plain text, even on a terminal.
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

/// Records the lag a catch-up read (None: the server did not know), for the progress bar.
pub fn note_lag(secs: Option<u64>) {
    LAG_SECS.store(secs.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The lag a catch-up last read.
pub fn last_lag() -> Option<u64> {
    Some(LAG_SECS.load(Ordering::Relaxed)).filter(|&s| s != u64::MAX)
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
            crate::clock::now(),
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
            crate::clock::now(),
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
        &format!("{} {node} [{tag}]: {text}\n", crate::clock::now()),
    );
}

/// A table in the project's style.
pub fn table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(headers.iter().map(Cell::new));
    if color_enabled() {
        // `--color always` colours a table that goes to a pipe or a file too.
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t
}

/// `text` in green (good) or red (bad) when colour is on, else as it is.
pub fn paint(text: &str, good: bool) -> String {
    if color_enabled() {
        format!("\x1b[{}m{text}\x1b[0m", if good { 32 } else { 31 })
    } else {
        text.to_string()
    }
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

/// The version of the JSON contract (docs/JSON.md). It goes up when a field changes its
/// meaning or goes away; new fields may appear within a version.
pub const JSON_VERSION: u32 = 1;

/// One command's result as a JSON document: `body`'s fields with `json_version` and
/// `command` beside them. A body that is not an object goes under `result`.
pub fn document(command: &str, body: serde_json::Value) -> serde_json::Value {
    let mut doc = match body {
        serde_json::Value::Object(map) => map,
        other => {
            let mut map = serde_json::Map::new();
            map.insert("result".into(), other);
            map
        }
    };
    doc.insert("json_version".into(), JSON_VERSION.into());
    doc.insert("command".into(), command.into());
    serde_json::Value::Object(doc)
}

/// Prints one command's result document (see [`document`]) as pretty JSON on stdout.
pub fn print_document(command: &str, body: serde_json::Value) {
    print_json(&document(command, body));
}

/// One line of a streaming command's JSON Lines output: `body`'s fields with
/// `json_version`, `command`, `event` and `at` (RFC 3339 UTC) beside them.
pub fn event_line(command: &str, event: &str, body: serde_json::Value) -> String {
    let mut doc = document(command, body);
    if let serde_json::Value::Object(map) = &mut doc {
        map.insert("event".into(), event.into());
        map.insert("at".into(), crate::clock::now().into());
    }
    doc.to_string()
}

/// Prints one event line (see [`event_line`]) on stdout.
pub fn print_event(command: &str, event: &str, body: serde_json::Value) {
    write_out(&format!("{}\n", event_line(command, event, body)));
}

/// Documents printed as one line each (`--watch` under `--output json`).
static COMPACT: AtomicBool = AtomicBool::new(false);

/// Prints every later document on one line (JSON Lines), as `--watch` needs.
pub fn set_compact(on: bool) {
    COMPACT.store(on, Ordering::Relaxed);
}

/// Prints `value` as pretty JSON on stdout (one line each after [`set_compact`]).
pub fn print_json<T: Serialize>(value: &T) {
    let text = if COMPACT.load(Ordering::Relaxed) {
        serde_json::to_string(value)
    } else {
        serde_json::to_string_pretty(value)
    };
    match text {
        Ok(s) => write_out(&format!("{s}\n")),
        Err(e) => write_err(&format!("shardctl: cannot encode JSON: {e}\n")),
    }
}
