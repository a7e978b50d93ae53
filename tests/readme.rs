//! The README's five-minute walkthrough, run as written: the block between its
//! `walkthrough:start` and `walkthrough:end` markers goes to bash with `shardctl` on the
//! PATH, in an empty directory (the sandbox ports 23306-23308 must be free).

use std::path::Path;
use std::process::Command;

fn walkthrough() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("<!-- walkthrough:start -->")
        .expect("README has a walkthrough");
    let end = readme.find("<!-- walkthrough:end -->").unwrap();
    let block = &readme[start..end];
    let body = block
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.rsplit_once("```"))
        .expect("a sh block")
        .0;
    body.to_string()
}

#[test]
fn the_readme_walkthrough_runs_as_written() {
    let script = walkthrough();
    assert!(script.contains("shardctl sandbox up") && script.contains("shardctl move"));
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("shardctl"),
        bin.join("shardctl"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("timeout")
        .args(["600", "bash", "-euo", "pipefail", "-c", &script])
        .current_dir(dir.path())
        .env("PATH", path)
        .env_remove("SHARDCTL_CONFIG")
        .env_remove("SHARDCTL_YES")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // Leave no servers behind.
        let _ = Command::new(bin.join("shardctl"))
            .args(["sandbox", "down", "--dir", "sandbox", "--purge"])
            .current_dir(dir.path())
            .output();
        panic!("the walkthrough failed: {}\n{stdout}\n{stderr}", out.status);
    }
    for expected in [
        "shard 2 moved to node3",
        "split: new shard 3 on node2",
        "stopped 3 server(s), data removed",
    ] {
        assert!(stdout.contains(expected), "{expected:?} missing:\n{stdout}");
    }
    assert!(!dir.path().join("sandbox").exists());
}
