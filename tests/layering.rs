//! The layering of docs/ARCHITECTURE.md, checked in two ways.
//!
//! Layers: every `crate::…` path in every file under src/ is mapped to the layer it names,
//! and a file may only name its own layer or a lower one. The tools (sandbox, simulate,
//! workload) may be named by src/cli alone, and clap only by src/cli and main.rs (a
//! `clap::ValueEnum` derive on a library type counts).
//!
//! Cycles: the module graph has none. Its nodes are modules: a file is a module, and
//! `foo/mod.rs` is module `foo` (src/lib.rs is the crate root; main.rs, the binary, is its
//! own crate and left out). There is an edge A → B when A's code names a path
//! `crate::x::y::…`, `super::…` or `self::…` that resolves to module B: the deepest module
//! the path goes through that exists as a file, after a name re-exported at the crate root
//! is mapped to its owner as [`ROOT_NAMES`] says; a `use` group `crate::a::{b, c::d}` names
//! `crate::a::b` and `crate::a::c::d`, and a module a `use` brought into scope stands for
//! its path (`use crate::copy;` then `copy::native::Progress` names `copy::native`). An
//! edge between a module and its own ancestor or descendant (a parent using its children, a
//! child using its parent's items) is containment and not counted, except that every `pub
//! use` re-export (`pub use model::*` in a parent too) is an edge: whoever imports the
//! parent imports what it re-exports. A cycle is a strongly connected component of two or
//! more modules; the test prints each as a walk through its files, every step with the line
//! that makes it.
//!
//! Both checks read source text (no servers, no build of their own) and so run in
//! milliseconds. Comments and `#[cfg(test)]` modules are skipped: a doc link or a unit test
//! is no dependency of production code.
//!
//! Both are ratchets. [`ALLOWED`] lists the layer violations that exist today, each with how
//! often it occurs: the test fails on any violation not listed, on a listed one that occurs
//! more often than listed, and on a listed one that occurs less often (or no longer), so
//! the list can only shrink and must shrink when a violation is fixed. [`ALLOWED_CYCLES`]
//! lists the cycles still tolerated (only inside src/ops/ and src/cli/), each by its files
//! and with its reason: a cycle not listed fails, and so does a listed one that is gone.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers from the bottom up: a module may import its own layer and those before it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &["error", "clock", "ident", "signal", "output", "fault"],
    ),
    ("config", &["config"]),
    ("servers and hosts", &["server", "remote"]),
    ("directory", &["directory", "control", "ids"]),
    ("data", &["copy", "verify", "prune", "stream"]),
    (
        "services",
        &[
            "reporting",
            "status",
            "query",
            "global",
            "sample",
            "exporter",
        ],
    ),
    ("operations", &["ops", "playbook", "rebalance"]),
    ("cli", &["cli"]),
];

/// Development tools that only src/cli may import (they may import any library layer).
const TOOLS: &[&str] = &["sandbox", "simulate", "workload"];

/// Names re-exported or defined at the crate root, and the module that owns them.
const ROOT_NAMES: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("ExitCode", "error"),
    ("out", "output"),
    ("outln", "output"),
    ("errln", "output"),
];

/// Tolerated violations: (file, path as written, occurrences), each with a comment saying
/// why. Empty since issue 27 removed the last: keep it so, and if one must be tolerated
/// for a while, list it here with its reason, to be removed when its import is gone.
const ALLOWED: &[(&str, &str, usize)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The top-level module a file belongs to (`src/ops/mover/mod.rs` → `ops`).
fn module_of_file(rel: &Path) -> String {
    let first = rel.components().nth(1).expect("a file under src/");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line without a trailing `//` comment (one outside a string literal).
fn code_part(line: &str) -> &str {
    let mut in_string = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

/// Every path starting with `prefix` (`crate::` or `clap::`) on a line of code, as written
/// (`crate::ops::merge::MergePlan`). `$crate::` (a macro naming its own crate) is skipped.
fn paths_on(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        let rest = &code[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        found.push(rest[..end].trim_end_matches(':').to_string());
    }
    found
}

/// One import a file may not make.
struct Violation {
    file: String,
    line: usize,
    path: String,
    why: String,
}

fn violations_in(rel: &str, text: &str) -> Vec<Violation> {
    let module = module_of_file(Path::new(rel));
    let is_cli = module == "cli" || module == "main";
    let own_layer = if module == "main" {
        layer_of("cli")
    } else {
        layer_of(&module)
    };
    let is_tool = TOOLS.contains(&module.as_str());
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
            if next.starts_with("mod ") && next.trim_end().ends_with('{') {
                let mut depth = 0i64;
                i += 1;
                while i < lines.len() {
                    let code = code_part(lines[i]);
                    depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
                    i += 1;
                    if depth <= 0 {
                        break;
                    }
                }
                continue;
            }
        }
        if trimmed.starts_with("//") {
            i += 1;
            continue;
        }
        let code = code_part(lines[i]);
        let mut push = |path: String, why: String| {
            out.push(Violation {
                file: rel.to_string(),
                line: i + 1,
                path,
                why,
            })
        };
        if !is_cli {
            for path in paths_on(code, "clap::") {
                push(path, "clap belongs to src/cli".into());
            }
            if code.contains("use clap") {
                push("clap".into(), "clap belongs to src/cli".into());
            }
        }
        for path in paths_on(code, "crate::") {
            let first = path.split("::").nth(1).unwrap_or("");
            let target = ROOT_NAMES
                .iter()
                .find(|(name, _)| *name == first)
                .map_or(first, |(_, owner)| owner)
                .to_string();
            let target = target.as_str();
            if target == module {
                continue;
            }
            if TOOLS.contains(&target) {
                if !is_cli && !is_tool {
                    push(path, format!("{target} is a tool only src/cli may import"));
                }
                continue;
            }
            let Some(target_layer) = layer_of(target) else {
                push(
                    path,
                    format!("{target} is in no layer of tests/layering.rs"),
                );
                continue;
            };
            if is_tool {
                if target == "cli" {
                    push(path, "a tool may not import cli".into());
                }
                continue;
            }
            let Some(own) = own_layer else {
                push(
                    path,
                    format!("{module} is in no layer of tests/layering.rs"),
                );
                continue;
            };
            if target_layer > own {
                push(
                    path,
                    format!(
                        "{module} (layer {}) imports {target} (higher layer {})",
                        LAYERS[own].0, LAYERS[target_layer].0
                    ),
                );
            }
        }
        i += 1;
    }
    out
}

fn all_violations() -> Vec<Violation> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let module = module_of_file(Path::new(&rel));
        if module != "lib" && module != "main" && layer_of(&module).is_none() {
            assert!(
                TOOLS.contains(&module.as_str()),
                "{rel}: module {module} is in no layer of tests/layering.rs (nor a tool); \
                 add it there and to docs/ARCHITECTURE.md"
            );
        }
        out.extend(violations_in(&rel, &fs::read_to_string(&file).unwrap()));
    }
    out
}

#[test]
fn imports_only_go_down_the_layers() {
    let found = all_violations();
    let mut counts: BTreeMap<(String, String), Vec<&Violation>> = BTreeMap::new();
    for v in &found {
        counts
            .entry((v.file.clone(), v.path.clone()))
            .or_default()
            .push(v);
    }
    let mut problems = Vec::new();
    for ((file, path), at) in &counts {
        let allowed = ALLOWED
            .iter()
            .find(|(f, p, _)| f == file && p == path)
            .map_or(0, |(_, _, n)| *n);
        if at.len() > allowed {
            for v in at {
                problems.push(format!(
                    "{}:{}: forbidden import {} ({})",
                    v.file, v.line, v.path, v.why
                ));
            }
            if allowed > 0 {
                problems.push(format!(
                    "{file}: {path} occurs {} times, ALLOWED lists {allowed}",
                    at.len()
                ));
            }
        }
    }
    for (file, path, n) in ALLOWED {
        let actual = counts
            .get(&(file.to_string(), path.to_string()))
            .map_or(0, Vec::len);
        if actual < *n {
            problems.push(format!(
                "{file}: {path} is allowed {n} times but occurs {actual}: shrink ALLOWED in \
                 tests/layering.rs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "layering (docs/ARCHITECTURE.md):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_import_a_tool_and_clap() {
    let text = "use crate::ops::mover::Effect;\n\
                // crate::cli::Cli in a comment is fine\n\
                #[derive(clap::ValueEnum)]\n\
                fn f() { crate::sandbox::write_private(); crate::server::x(); }\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::ops::plan;\n}\n";
    let found = violations_in("src/directory/journal.rs", text);
    let seen: Vec<(usize, &str)> = found.iter().map(|v| (v.line, v.path.as_str())).collect();
    assert_eq!(
        seen,
        [
            (1, "crate::ops::mover::Effect"),
            (3, "clap::ValueEnum"),
            (4, "crate::sandbox::write_private")
        ]
    );
    assert!(violations_in("src/cli/mv.rs", text).is_empty());
}

// ---------------------------------------------------------------------------------------
// The module graph has no cycle.

/// One dependency of a module on another: the file and line naming it, the path as written.
#[derive(Clone, Debug)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
    path: String,
}

/// `text` with comments, string and character literals blanked to spaces (newlines kept,
/// so line numbers stay), then with every `#[cfg(test)]` module blanked the same way.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push(' ');
                    out.push(' ');
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push(' ');
                    out.push(' ');
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !out.last().is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
            while i < chars.len() && !chars[i..].starts_with(&closing) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.extend(std::iter::repeat_n(' ', closing.len()));
            i += closing.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('"', '\n', '\''); a lifetime ('a) has no closing quote.
            let mut j = i + 1;
            if chars.get(j) == Some(&'\\') {
                j += 2;
            } else {
                j += 1;
            }
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.truncate(chars.len());
    let mut code: String = out.into_iter().collect();
    while let Some(at) = code.find("#[cfg(test)]") {
        let after = at + "#[cfg(test)]".len();
        let rest = code[after..].trim_start();
        let item_start = code.len() - rest.len();
        let is_module = rest.starts_with("mod ") || rest.starts_with("pub mod ");
        let end = match (is_module, rest.find(['{', ';'])) {
            (true, Some(open)) if rest.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let mut end = code.len();
                for (k, ch) in code[item_start + open..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = item_start + open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            _ => after,
        };
        let blanked: String = code[at..end].chars().map(blank).collect();
        code.replace_range(at..end, &blanked);
    }
    code
}

/// The module of a file under src/, as a path (`src/ops/mover/mod.rs` → `ops::mover`,
/// `src/ops/effects.rs` → `ops::effects`, `src/lib.rs` → the crate root, ``).
fn module_path_of_file(rel: &str) -> String {
    let inner = rel.strip_prefix("src/").expect("a file under src/");
    let inner = inner.trim_end_matches(".rs");
    let inner = inner.strip_suffix("/mod").unwrap_or(inner);
    if inner == "lib" {
        String::new()
    } else {
        inner.replace('/', "::")
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn skip_space(code: &[u8], mut at: usize) -> usize {
    while at < code.len() && code[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

fn ident_at(code: &[u8], at: usize) -> &str {
    let mut end = at;
    while end < code.len() && is_ident_byte(code[end]) {
        end += 1;
    }
    std::str::from_utf8(&code[at..end]).unwrap_or("")
}

/// Parses the path or `use` tree starting at `at` and pushes each path it names, a group
/// `a::{b, c::d}` expanded to `a::b` and `a::c::d`; returns where the tree ends.
fn parse_tree(code: &[u8], at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut i = skip_space(code, at);
    loop {
        match code.get(i) {
            Some(b'{') => {
                i += 1;
                loop {
                    i = skip_space(code, i);
                    match code.get(i) {
                        None => return i,
                        Some(b'}') => return i + 1,
                        Some(b',') => i += 1,
                        Some(_) => {
                            let end = parse_tree(code, i, path.clone(), out);
                            if end == i {
                                return i;
                            }
                            i = skip_rename(code, end);
                        }
                    }
                }
            }
            Some(b'*') => {
                out.push(path);
                return i + 1;
            }
            _ => {}
        }
        let ident = ident_at(code, i);
        if ident.is_empty() {
            if !path.is_empty() {
                out.push(path);
            }
            return i;
        }
        path.push(ident.to_string());
        i += ident.len();
        let j = skip_space(code, i);
        if code[j..].starts_with(b"::") && code.get(skip_space(code, j + 2)) != Some(&b'<') {
            i = skip_space(code, j + 2);
            continue;
        }
        out.push(path);
        return i;
    }
}

/// Past a rename (`as name`, `as _`) at `at`, if there is one.
fn skip_rename(code: &[u8], at: usize) -> usize {
    let i = skip_space(code, at);
    if ident_at(code, i) != "as" {
        return at;
    }
    let name = skip_space(code, i + 2);
    name + ident_at(code, name).len()
}

/// Whether the `use` at `at` is a re-export: `pub use`, `pub(crate) use`, `pub(super) use`.
fn is_reexport(code: &[u8], at: usize) -> bool {
    let before = std::str::from_utf8(&code[..at]).unwrap_or("").trim_end();
    let before = match before.strip_suffix(')') {
        Some(inner) => inner
            .rfind('(')
            .map_or(before, |open| inner[..open].trim_end()),
        None => before,
    };
    before.ends_with("pub")
        && !before[..before.len() - 3]
            .bytes()
            .next_back()
            .is_some_and(is_ident_byte)
}

/// One path a module's code names.
struct Named {
    line: usize,
    segments: Vec<String>,
    /// Named by a `use`.
    in_use: bool,
    /// Named by a `pub use`: a re-export.
    reexport: bool,
}

/// Every path a module's code names. Paths start with `crate::`, `super::` or `self::`, or
/// with one of `aliases`, the modules a `use` brought into scope (`use crate::copy;` then
/// `copy::native::Progress`); in a `use`, a path may also start with the name of a child
/// module (`pub use model::*`). `$crate::` (a macro's) is skipped.
fn named_paths(code: &str, aliases: &BTreeMap<String, String>) -> Vec<Named> {
    let bytes = code.as_bytes();
    let newlines: Vec<usize> = code.match_indices('\n').map(|(at, _)| at).collect();
    let line_at = |at: usize| newlines.partition_point(|&n| n < at) + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident_byte(bytes[i]) || (i > 0 && (is_ident_byte(bytes[i - 1]))) {
            i += 1;
            continue;
        }
        let ident = ident_at(bytes, i);
        let prev = i.checked_sub(1).map(|p| bytes[p]);
        let mut paths = Vec::new();
        let end;
        let mut reexport = false;
        if ident == "use" {
            reexport = is_reexport(bytes, i);
            let start = skip_space(bytes, i + 3);
            end = if bytes[start..].starts_with(b"::") {
                start
            } else {
                parse_tree(bytes, start, Vec::new(), &mut paths)
            };
        } else if (matches!(ident, "crate" | "super" | "self") || aliases.contains_key(ident))
            && !matches!(prev, Some(b'$' | b':' | b'.'))
            && bytes[skip_space(bytes, i + ident.len())..].starts_with(b"::")
        {
            end = parse_tree(bytes, i, Vec::new(), &mut paths);
        } else {
            i += ident.len().max(1);
            continue;
        }
        let line = line_at(i);
        let in_use = ident == "use";
        found.extend(paths.into_iter().map(|segments| Named {
            line,
            segments,
            in_use,
            reexport,
        }));
        i = end.max(i + ident.len());
    }
    found
}

/// The module a path names: the deepest module of `modules` it goes through, after
/// `crate`, `super`, `self` and `aliases` are resolved from `module` and a name re-exported
/// at the crate root is mapped to its owner ([`ROOT_NAMES`]); with whether the path names
/// that module itself. `None` for another crate's path.
fn resolve(
    module: &str,
    path: &[String],
    modules: &BTreeSet<String>,
    aliases: &BTreeMap<String, String>,
) -> Option<(String, bool)> {
    let mut abs: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    let mut segments = path.iter().map(String::as_str).peekable();
    match segments.peek().copied() {
        Some("crate") => {
            abs.clear();
            segments.next();
        }
        Some("super") => {
            while segments.peek() == Some(&"super") {
                abs.pop();
                segments.next();
            }
        }
        Some("self") => {
            segments.next();
        }
        Some(first) => {
            let mut candidate = abs.clone();
            candidate.push(first);
            if !modules.contains(&candidate.join("::")) {
                let alias = aliases.get(first)?;
                abs = alias.split("::").collect();
                segments.next();
            }
        }
        None => return None,
    }
    abs.extend(segments.filter(|s| *s != "self"));
    if let Some(first) = abs.first() {
        if !modules.contains(*first) {
            if let Some((_, owner)) = ROOT_NAMES.iter().find(|(name, _)| name == first) {
                abs = vec![owner];
            }
        }
    }
    (0..=abs.len())
        .rev()
        .find(|n| modules.contains(&abs[..*n].join("::")))
        .map(|n| (abs[..n].join("::"), n == abs.len()))
}

/// Whether `a` contains `b` (is `b` or one of its ancestors): `ops` contains `ops::mover`.
fn contains(a: &str, b: &str) -> bool {
    a.is_empty() || a == b || b.strip_prefix(a).is_some_and(|rest| rest.starts_with("::"))
}

/// The module graph of src/ (main.rs, the binary's own crate, aside): each module's
/// file, and every edge with where it is named.
fn module_graph(sources: &[(String, String)]) -> (BTreeMap<String, String>, Vec<Edge>) {
    let files: BTreeMap<String, String> = sources
        .iter()
        .map(|(rel, _)| (module_path_of_file(rel), rel.clone()))
        .collect();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut edges = Vec::new();
    for (rel, text) in sources {
        let from = module_path_of_file(rel);
        let code = code_only(text);
        let no_aliases = BTreeMap::new();
        let mut aliases = BTreeMap::new();
        for named in named_paths(&code, &no_aliases) {
            let Some(name) = named.segments.iter().rev().find(|s| *s != "self") else {
                continue;
            };
            if let Some((to, true)) = resolve(&from, &named.segments, &modules, &no_aliases) {
                if named.in_use && !matches!(name.as_str(), "crate" | "super") {
                    aliases.insert(name.clone(), to);
                }
            }
        }
        for named in named_paths(&code, &aliases) {
            let Some((to, _)) = resolve(&from, &named.segments, &modules, &aliases) else {
                continue;
            };
            if to == from || (!named.reexport && (contains(&from, &to) || contains(&to, &from))) {
                continue;
            }
            edges.push(Edge {
                from: from.clone(),
                to,
                file: rel.clone(),
                line: named.line,
                path: named.segments.join("::"),
            });
        }
    }
    (files, edges)
}

/// The strongly connected components of two or more modules (Tarjan's algorithm).
fn cycles(modules: &BTreeSet<String>, edges: &[Edge]) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        next: BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in w.next.get(v).cloned().unwrap_or_default() {
            if !w.index.contains_key(u) {
                visit(w, u);
                let low = w.low[v].min(w.low[u]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(u) {
                let low = w.low[v].min(w.index[u]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = BTreeSet::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack.remove(u);
                component.insert(u.to_string());
                if u == v {
                    break;
                }
            }
            if component.len() > 1 {
                w.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for e in edges {
        walk.next.entry(&e.from).or_default().insert(&e.to);
    }
    for m in modules {
        if !walk.index.contains_key(m.as_str()) {
            visit(&mut walk, m);
        }
    }
    walk.found.sort();
    walk.found
}

/// A closed walk through every module of a cycle, each step with the first place that
/// names the next module: `src/a.rs:3 crate::b::f -> src/b.rs:9 crate::a::X -> src/a.rs`.
fn describe_cycle(
    component: &BTreeSet<String>,
    files: &BTreeMap<String, String>,
    edges: &[Edge],
) -> String {
    let inside: Vec<&Edge> = edges
        .iter()
        .filter(|e| component.contains(&e.from) && component.contains(&e.to))
        .collect();
    let shortest = |from: &str, to: &str| -> Vec<&Edge> {
        let mut came_by: BTreeMap<&str, &Edge> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(at) = queue.pop_front() {
            for e in inside.iter().filter(|e| e.from == at) {
                if e.to != from && !came_by.contains_key(e.to.as_str()) {
                    came_by.insert(&e.to, e);
                    queue.push_back(&e.to);
                }
                if e.to == to {
                    let mut steps = vec![*e];
                    let mut at = e.from.as_str();
                    while at != from {
                        let step = came_by[at];
                        steps.push(step);
                        at = &step.from;
                    }
                    steps.reverse();
                    return steps;
                }
            }
        }
        unreachable!("{to} is reachable from {from} inside its component")
    };
    let start = component.iter().next().expect("a component is not empty");
    let mut walk: Vec<&Edge> = Vec::new();
    let mut at = start.as_str();
    for m in component {
        if m != at && !walk.iter().any(|e| &e.to == m) {
            walk.extend(shortest(at, m));
            at = m;
        }
    }
    walk.extend(shortest(at, start));
    let mut text = String::new();
    for e in walk {
        text.push_str(&format!("{}:{} {} -> ", e.file, e.line, e.path));
    }
    text.push_str(&files[start]);
    text
}

/// Tolerated cycles, each the files of one strongly connected component (sorted) with why
/// it is still there; empty since issue 27 broke the last (keep it so). Only cycles inside
/// src/ops/ and src/cli/ may be listed. A ratchet like
/// [`ALLOWED`]: a cycle not listed fails the test, and so does a listed one that is gone or
/// has changed its files (list the new set if it only shrank).
const ALLOWED_CYCLES: &[(&[&str], &str)] = &[];

/// Every file under src/ but main.rs (the binary, its own crate), with its text.
fn library_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&file).unwrap();
            (rel, text)
        })
        .filter(|(rel, _)| rel != "src/main.rs")
        .collect()
}

#[test]
fn the_module_graph_has_no_cycle() {
    let (files, edges) = module_graph(&library_sources());
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut problems = Vec::new();
    let found: Vec<Vec<String>> = cycles(&modules, &edges)
        .into_iter()
        .map(|component| {
            let listed: Vec<String> = component.iter().map(|m| files[m].clone()).collect();
            if !ALLOWED_CYCLES.iter().any(|(allowed, _)| {
                allowed
                    .iter()
                    .copied()
                    .eq(listed.iter().map(String::as_str))
            }) {
                problems.push(format!(
                    "a cycle of {} modules: {}\n  its files: {:?}",
                    component.len(),
                    describe_cycle(&component, &files, &edges),
                    listed
                ));
            }
            listed
        })
        .collect();
    for (allowed, _) in ALLOWED_CYCLES {
        if let Some(outside) = allowed
            .iter()
            .find(|f| !f.starts_with("src/ops/") && !f.starts_with("src/cli/"))
        {
            problems.push(format!(
                "ALLOWED_CYCLES lists {outside}: only cycles inside src/ops/ and src/cli/ may be \
                 tolerated"
            ));
        }
        if !found
            .iter()
            .any(|cycle| allowed.iter().copied().eq(cycle.iter().map(String::as_str)))
        {
            problems.push(format!(
                "ALLOWED_CYCLES lists {allowed:?}, which is no longer a cycle: shrink it in \
                 tests/layering.rs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "module cycles (docs/ARCHITECTURE.md, \"No cycles\"):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_check_sees_groups_re_exports_and_containment() {
    let source = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let sources = [
        source(
            "src/lib.rs",
            "pub mod a;\npub mod b;\npub use error::Error;\n",
        ),
        source(
            "src/a/mod.rs",
            "pub mod inner;\npub use inner::Thing;\nuse self::inner::other;\n",
        ),
        source(
            "src/a/inner.rs",
            "use super::Parent;\n// crate::b::C in a comment\nfn f() { let s = \"crate::b\"; }\n",
        ),
        source(
            "src/b.rs",
            "use crate::{error::Result, a::{self, Thing as T}};\n\
             #[cfg(test)]\nmod tests {\n    use crate::c::X;\n}\n",
        ),
        source(
            "src/c.rs",
            "use crate::a;\nfn g() -> crate::Result<()> { super::b::h()?; a::inner::h() }\n",
        ),
        source("src/error.rs", "fn e() { $crate::c::x(); }\n"),
    ];
    let (files, edges) = module_graph(&sources);
    let seen: Vec<(&str, &str, usize)> = edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str(), e.line))
        .collect();
    assert_eq!(
        seen,
        [
            ("", "error", 3),
            ("a", "a::inner", 2),
            ("b", "error", 1),
            ("b", "a", 1),
            ("b", "a", 1),
            ("c", "a", 1),
            ("c", "error", 2),
            ("c", "b", 2),
            ("c", "a::inner", 2),
        ]
    );
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    assert!(cycles(&modules, &edges).is_empty());

    let mut with_cycle = sources.to_vec();
    with_cycle[2] = source("src/a/inner.rs", "use crate::c::g;\n");
    with_cycle[4] = source("src/c.rs", "use super::b::h;\n");
    let (files, edges) = module_graph(&with_cycle);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let found = cycles(&modules, &edges);
    let as_files: Vec<Vec<&str>> = found
        .iter()
        .map(|c| c.iter().map(|m| files[m].as_str()).collect())
        .collect();
    assert_eq!(
        as_files,
        [["src/a/mod.rs", "src/a/inner.rs", "src/b.rs", "src/c.rs"]]
    );
    assert_eq!(
        describe_cycle(&found[0], &files, &edges),
        "src/a/mod.rs:2 inner::Thing -> src/a/inner.rs:1 crate::c::g -> src/c.rs:1 super::b::h \
         -> src/b.rs:1 crate::a::self -> src/a/mod.rs"
    );
}

/// Files that must stay pure (no I/O): data in, a plan out. Each with what it may not name.
const PURE: &[&str] = &["src/rebalance/planner.rs", "src/rebalance/boundary.rs"];

/// Names that reach a server, a host, a file, the network or a process.
const IO_NAMES: &[&str] = &[
    "crate::server",
    "crate::remote",
    "crate::config",
    "crate::status",
    "crate::sandbox",
    "Directory::open",
    "Server::",
    "Router::connect",
    "std::fs",
    "std::net",
    "std::process",
    "std::io",
];

/// The names of [`IO_NAMES`] that `code` (as [`code_only`] leaves it) names.
fn io_named(code: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        for name in IO_NAMES {
            if line.contains(name) {
                found.push((i + 1, *name));
            }
        }
    }
    found
}

/// The rebalance planner stays pure (docs/ARCHITECTURE.md): what it needs from the
/// servers (sizes, key distributions) is read before it runs, by `rebalance` and
/// `rebalance::profile`.
#[test]
fn the_rebalance_planner_does_no_io() {
    let sources = library_sources();
    let mut problems = Vec::new();
    for file in PURE {
        let (_, text) = sources
            .iter()
            .find(|(rel, _)| rel == file)
            .unwrap_or_else(|| panic!("{file} is gone: update PURE"));
        for (line, name) in io_named(&code_only(text)) {
            problems.push(format!("{file}:{line}: names {name}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // The check sees an import, and not the same name in a comment or a test module.
    let sample = "use crate::server::Server;\n// Server::connect in a comment\n#[cfg(test)]\nmod tests {\n    use std::fs;\n}\n";
    assert_eq!(io_named(&code_only(sample)), vec![(1, "crate::server")]);
}
