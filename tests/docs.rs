//! The documentation holds together, without a server: the README stays short enough to
//! read in ten minutes, every relative link in README.md and docs/*.md reaches an existing
//! file (and, with a `#anchor`, an existing heading of it), and every Markdown file under
//! docs/ that the sources, playbooks and scripts name exists.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The README's budget in lines (issue 27: a newcomer reads it in ten minutes).
const README_MAX_LINES: usize = 300;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file directly in docs/ (docs/generated holds man pages).
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The text outside fenced code blocks, line by line (a `# comment` in a shell block is no
/// heading, and `](` in code is no link).
fn prose_lines(text: &str) -> Vec<&str> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            lines.push(line);
        }
    }
    lines
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, every other character but
/// letters, digits, `-` and `_` dropped; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in prose_lines(text) {
        let Some(title) = line
            .strip_prefix('#')
            .map(|rest| rest.trim_start_matches('#'))
            .and_then(|rest| rest.strip_prefix(' '))
        else {
            continue;
        };
        let base: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links `[text](target)` in a Markdown text, outside code blocks
/// and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose_lines(text).join("\n");
    let mut without_code = String::new();
    // A code span may wrap a line but not a paragraph: count backquotes per paragraph.
    for paragraph in prose.split("\n\n") {
        for (i, part) in paragraph.split('`').enumerate() {
            if i % 2 == 0 {
                without_code.push_str(part);
            }
        }
        without_code.push_str("\n\n");
    }
    let mut targets = Vec::new();
    let mut rest = without_code.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        if !target.is_empty() && !target.contains(char::is_whitespace) {
            targets.push(target.to_string());
        }
        rest = &after[end..];
    }
    targets
}

#[test]
fn the_readme_stays_under_its_line_budget() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines, the budget is under {README_MAX_LINES}: move the detail \
         into the topic's document in docs/ and link it"
    );
}

#[test]
fn every_relative_link_reaches_a_file_and_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let name = file.strip_prefix(root()).unwrap().display();
            if !linked.exists() {
                broken.push(format!("{name}: ({target}): no file {}", linked.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&linked_text).contains(anchor) {
                    broken.push(format!("{name}: ({target}): no heading #{anchor} there"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 20,
        "only {checked} links found: is the parser still right?"
    );
}

/// Every file under `dir` (recursively), or only those whose name ends with one of
/// `extensions` when it names any (scripts have none).
fn files_under(dir: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, extensions, found);
        } else if extensions.is_empty()
            || path
                .extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
        {
            found.push(path);
        }
    }
}

#[test]
fn every_docs_file_the_sources_mention_exists() {
    let mut files = markdown_files();
    for dir in ["src", "tests", "bench", "playbooks"] {
        files_under(&root().join(dir), &["rs", "md", "yaml"], &mut files);
    }
    for dir in ["scripts", ".ci"] {
        files_under(&root().join(dir), &[], &mut files);
    }
    let mut missing = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("docs/") {
            let after = &rest[at + "docs/".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if let Some(stem) = name.strip_suffix(".md") {
                if !stem.is_empty() && !root().join("docs").join(&name).exists() {
                    let file = file.strip_prefix(root()).unwrap().display().to_string();
                    missing.push(format!("{file}: docs/{name}"));
                }
            }
            rest = after;
        }
    }
    assert!(
        missing.is_empty(),
        "mentions of missing docs:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_anchor_rules_match_githubs() {
    let text = "# Copy methods: native, dump, physical\n```sh\n# not a heading\n```\n\
                ## The restart path (the filter in the option file)\n## `native` (the default)\n\
                ## Tests\n## Tests\n";
    let found = anchors(text);
    for anchor in [
        "copy-methods-native-dump-physical",
        "the-restart-path-the-filter-in-the-option-file",
        "native-the-default",
        "tests",
        "tests-1",
    ] {
        assert!(found.contains(anchor), "{anchor} missing from {found:?}");
    }
    assert!(!found.contains("not-a-heading"));
    assert_eq!(
        link_targets("see [a](A.md#x), `[b](B.md)` and\n```\n[c](C.md)\n```\n[d](\n"),
        vec!["A.md#x".to_string()]
    );
}
