//! How results reach people: tables or JSON on stdout, logs on stderr, colour rules.

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};
use serde::Serialize;
use std::io::IsTerminal;
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

/// Writes `msg` to stderr when the verbosity is at least `level`.
pub fn log(level: u8, msg: &str) {
    if VERBOSITY.load(Ordering::Relaxed) >= level {
        eprintln!("shardctl: {msg}");
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
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("shardctl: cannot encode JSON: {e}"),
    }
}
