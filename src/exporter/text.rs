//! The Prometheus text exposition format (version 0.0.4), written by hand: a family is a
//! `# HELP` line, a `# TYPE` line and its samples, one per line, label values escaped;
//! a histogram's buckets are cumulative, end with `le="+Inf"` and come with `_sum` and
//! `_count`.

use std::fmt::Write;

/// The `Content-Type` of a scrape's answer.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What a family's samples measure, as its `# TYPE` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A count that only goes up (reset only when its source is).
    Counter,
    /// Observations counted into buckets.
    Histogram,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        }
    }
}

/// Label names and values of one sample (or of one histogram, its `le` added per bucket).
pub type Labels = Vec<(&'static str, String)>;

/// Observations bucketed by upper bound: each bound's count of observations at or below
/// it, written cumulatively.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// Upper bounds, ascending (`+Inf` is added when written).
    pub bounds: &'static [f64],
    /// Observations at or below each bound (cumulative), one per bound.
    pub cumulative: Vec<u64>,
    /// Every observation's sum.
    pub sum: f64,
    /// Observations in all (the `+Inf` bucket).
    pub count: u64,
}

impl Histogram {
    /// An empty histogram over `bounds`, which must ascend.
    pub fn new(bounds: &'static [f64]) -> Histogram {
        debug_assert!(bounds.windows(2).all(|w| w[0] < w[1]), "bounds ascend");
        Histogram {
            bounds,
            cumulative: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }

    /// Counts one observation.
    pub fn observe(&mut self, value: f64) {
        for (bound, n) in self.bounds.iter().zip(&mut self.cumulative) {
            if value <= *bound {
                *n += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }
}

/// One metric family: its samples share the name, help and type.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The metric's name (`shardctl_node_up`).
    pub name: &'static str,
    /// What it means, one line.
    pub help: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Gauge and counter samples.
    pub samples: Vec<(Labels, f64)>,
    /// Histogram series (for [`Kind::Histogram`]).
    pub histograms: Vec<(Labels, Histogram)>,
}

impl Family {
    /// A family without samples yet.
    pub fn new(name: &'static str, kind: Kind, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
            histograms: Vec::new(),
        }
    }

    /// Adds one sample.
    pub fn push(&mut self, labels: Labels, value: f64) {
        self.samples.push((labels, value));
    }

    /// Adds a sample of 1 (true) or 0 (false).
    pub fn flag(&mut self, labels: Labels, value: bool) {
        self.push(labels, if value { 1.0 } else { 0.0 });
    }
}

/// Escapes a `# HELP` text: backslash and line feed.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Escapes a label value: backslash, double quote and line feed.
pub fn escape_label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value: integers without a fraction, `NaN`, `+Inf` and `-Inf` as the format
/// spells them.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn write_labels(out: &mut String, labels: &[(&str, String)]) {
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{name}=\"{}\"", escape_label_value(value));
    }
    out.push('}');
}

fn write_sample(out: &mut String, name: &str, labels: &[(&str, String)], value: f64) {
    out.push_str(name);
    write_labels(out, labels);
    out.push(' ');
    out.push_str(&format_value(value));
    out.push('\n');
}

/// The families as one scrape's answer.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind.word());
        for (labels, value) in &f.samples {
            write_sample(&mut out, f.name, labels, *value);
        }
        for (labels, h) in &f.histograms {
            let bucket = format!("{}_bucket", f.name);
            for (bound, n) in h.bounds.iter().zip(&h.cumulative) {
                let mut with_le = labels.clone();
                with_le.push(("le", format_value(*bound)));
                write_sample(&mut out, &bucket, &with_le, *n as f64);
            }
            let mut with_le = labels.clone();
            with_le.push(("le", "+Inf".into()));
            write_sample(&mut out, &bucket, &with_le, h.count as f64);
            write_sample(&mut out, &format!("{}_sum", f.name), labels, h.sum);
            write_sample(
                &mut out,
                &format!("{}_count", f.name),
                labels,
                h.count as f64,
            );
        }
    }
    out
}

/// True for a valid metric or label name: `[a-zA-Z_][a-zA-Z0-9_]*` (colons are for
/// recording rules, never for an exporter).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_line_feed_only() {
        assert_eq!(escape_label_value("plain node-1.x"), "plain node-1.x");
        assert_eq!(escape_label_value(r"C:\tmp"), r"C:\\tmp");
        assert_eq!(escape_label_value("say \"hi\""), "say \\\"hi\\\"");
        assert_eq!(escape_label_value("two\nlines"), "two\\nlines");
        // A tab, a carriage return and UTF-8 pass as they are.
        assert_eq!(escape_label_value("a\tb\rc é"), "a\tb\rc é");
    }

    #[test]
    fn every_family_has_help_and_type_lines_then_its_samples() {
        let mut up = Family::new(
            "shardctl_node_up",
            Kind::Gauge,
            "Whether the node answered.",
        );
        up.flag(vec![("node", "node1".into())], true);
        up.flag(vec![("node", "a\"b\\c\nd".into())], false);
        let mut done = Family::new(
            "shardctl_operations_finished_total",
            Kind::Counter,
            "Finished operations.\nBy outcome, with a \\ in the help.",
        );
        done.push(
            vec![("kind", "move".into()), ("outcome", "done".into())],
            3.0,
        );
        let empty = Family::new("shardctl_empty", Kind::Gauge, "No samples.");
        let text = render(&[up, done, empty]);
        assert_eq!(
            text,
            "# HELP shardctl_node_up Whether the node answered.\n\
             # TYPE shardctl_node_up gauge\n\
             shardctl_node_up{node=\"node1\"} 1\n\
             shardctl_node_up{node=\"a\\\"b\\\\c\\nd\"} 0\n\
             # HELP shardctl_operations_finished_total Finished operations.\\nBy outcome, with a \\\\ in the help.\n\
             # TYPE shardctl_operations_finished_total counter\n\
             shardctl_operations_finished_total{kind=\"move\",outcome=\"done\"} 3\n\
             # HELP shardctl_empty No samples.\n\
             # TYPE shardctl_empty gauge\n"
        );
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_end_with_inf_sum_and_count() {
        static BOUNDS: [f64; 3] = [0.5, 1.0, 10.0];
        let mut h = Histogram::new(&BOUNDS);
        for v in [0.25, 0.5, 0.75, 3.0, 42.0] {
            h.observe(v);
        }
        let mut f = Family::new(
            "shardctl_fence_duration_seconds",
            Kind::Histogram,
            "Fences.",
        );
        f.histograms.push((vec![("kind", "move".into())], h));
        assert_eq!(
            render(&[f]),
            "# HELP shardctl_fence_duration_seconds Fences.\n\
             # TYPE shardctl_fence_duration_seconds histogram\n\
             shardctl_fence_duration_seconds_bucket{kind=\"move\",le=\"0.5\"} 2\n\
             shardctl_fence_duration_seconds_bucket{kind=\"move\",le=\"1\"} 3\n\
             shardctl_fence_duration_seconds_bucket{kind=\"move\",le=\"10\"} 4\n\
             shardctl_fence_duration_seconds_bucket{kind=\"move\",le=\"+Inf\"} 5\n\
             shardctl_fence_duration_seconds_sum{kind=\"move\"} 46.5\n\
             shardctl_fence_duration_seconds_count{kind=\"move\"} 5\n"
        );
        // Empty: every bucket 0, +Inf too.
        let mut f = Family::new("shardctl_h", Kind::Histogram, "Empty.");
        f.histograms.push((Vec::new(), Histogram::new(&BOUNDS)));
        let text = render(&[f]);
        assert!(
            text.contains("shardctl_h_bucket{le=\"+Inf\"} 0\n"),
            "{text}"
        );
        assert!(
            text.ends_with("shardctl_h_sum 0\nshardctl_h_count 0\n"),
            "{text}"
        );
    }

    #[test]
    fn values_are_spelled_as_the_format_wants() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(12345678901.0), "12345678901");
        assert_eq!(format_value(-3.0), "-3");
        assert_eq!(format_value(0.25), "0.25");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(format_value(1e20), "100000000000000000000");
    }

    #[test]
    fn names_are_checked() {
        for good in ["shardctl_node_up", "_x", "a1_b2"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "1abc", "a-b", "a:b", "é", "a b"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
