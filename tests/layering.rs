//! The layering of docs/ARCHITECTURE.md, checked: every `crate::…` path in every file under
//! src/ is mapped to the layer it names, and a file may only name its own layer or a lower
//! one. The tools (sandbox, simulate, workload) may be named by src/cli alone, and clap only
//! by src/cli and main.rs (a `clap::ValueEnum` derive on a library type counts).
//!
//! The check reads source text (no servers, no build of its own) and so runs in
//! milliseconds. Comments and `#[cfg(test)]` modules are skipped: a doc link or a unit test
//! is no dependency of production code.
//!
//! It is a ratchet: [`ALLOWED`] lists the violations that exist today, each with how often
//! it occurs. The test fails on any violation not listed, on a listed one that occurs more
//! often than listed, and on a listed one that occurs less often (or no longer), so the list
//! can only shrink and must shrink when a violation is fixed.

use std::collections::BTreeMap;
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
    ("data", &["copy", "verify", "prune"]),
    (
        "services",
        &["reporting", "status", "query", "global", "sample"],
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
