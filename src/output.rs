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

/// Writes `msg` to stderr when the verbosity is at least `level`.
pub fn log(level: u8, msg: &str) {
    if VERBOSITY.load(Ordering::Relaxed) >= level {
        write_err(&format!("shardctl: {msg}\n"));
    }
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
