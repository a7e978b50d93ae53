//! Operator hooks: commands run at the stages of an operation (started, copied, ready for
//! the cut-over, before the cut-over, fenced, flipped, done, failed), each with a JSON
//! document describing the operation on its stdin and a timeout. A hook's output goes to
//! the log, never to shardctl's stdout (which may carry JSON). A failing or hanging hook
//! (killed at its timeout, with every process it started) is reported and the operation
//! goes on — except `before-cutover`, whose failure postpones the cut-over.

use crate::config::{HookSpec, HookStage};
use crate::output::log;
use std::io::{Read, Seek, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The variables a hook inherits from shardctl's environment, whatever else it holds: the
/// inventory's `password_env` variables, cloud credentials and tokens exported in the
/// operator's shell stay out of the commands hooks run (and of any log they write). What a
/// hook needs to know of the operation is in the JSON document on its stdin. A name ending
/// in `*` stands for every variable with that prefix.
pub const INHERITED_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR",
];

/// Whether a hook inherits the variable `name` (see [`INHERITED_VARIABLES`]).
pub fn inherits(name: &str) -> bool {
    INHERITED_VARIABLES
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *allowed,
        })
}

/// What a hook's run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutcome {
    /// Exit status 0.
    Passed,
    /// A non-zero exit, a signal, or a command that could not start.
    Failed(String),
    /// Killed at its timeout.
    TimedOut,
}

/// Runs every hook of `stage` in order with `doc` (an object; `stage` and `at` are added)
/// on its stdin; true when all passed.
pub fn run_stage(hooks: &[HookSpec], stage: HookStage, doc: &serde_json::Value) -> bool {
    let mut all = true;
    for hook in hooks.iter().filter(|h| h.stage == stage) {
        let mut doc = doc.clone();
        doc["json_version"] = crate::output::JSON_VERSION.into();
        doc["event"] = "hook".into();
        doc["stage"] = stage.as_str().into();
        doc["at"] = crate::clock::now().into();
        let outcome = run_one(hook, &doc);
        let line = match &outcome {
            HookOutcome::Passed => format!("hook {} passed: {}", stage.as_str(), hook.command),
            HookOutcome::Failed(why) => {
                format!("hook {} failed ({why}): {}", stage.as_str(), hook.command)
            }
            HookOutcome::TimedOut => format!(
                "hook {} killed after {}s: {}",
                stage.as_str(),
                hook.timeout_secs,
                hook.command
            ),
        };
        let passed = outcome == HookOutcome::Passed;
        log(if passed { 1 } else { 0 }, &line);
        all &= passed;
    }
    all
}

/// Runs one hook: `sh -c COMMAND` in its own process group with only the
/// [`INHERITED_VARIABLES`] of shardctl's environment, `doc` on stdin, stdout and stderr
/// into the log (the first 64 KiB), killed (the whole group) at its timeout or on Ctrl-C /
/// `shardctl stop`.
pub fn run_one(hook: &HookSpec, doc: &serde_json::Value) -> HookOutcome {
    let Ok(mut output) = tempfile::tempfile() else {
        return HookOutcome::Failed("cannot create a file for its output".into());
    };
    let (Ok(out), Ok(err)) = (output.try_clone(), output.try_clone()) else {
        return HookOutcome::Failed("cannot share its output file".into());
    };
    let child = Command::new("sh")
        .env_clear()
        .envs(std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(inherits)))
        .arg("-c")
        .arg(&hook.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return HookOutcome::Failed(format!("cannot start sh: {e}")),
    };
    let pgid = child.id() as i32;
    let _group = crate::signal::register_child_group(pgid);
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its stdin closes the pipe: that is not a failure.
        let _ = stdin.write_all(format!("{doc}\n").as_bytes());
    }
    let deadline = Instant::now() + Duration::from_secs(hook.timeout_secs);
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break HookOutcome::Passed,
            Ok(Some(status)) => break HookOutcome::Failed(status.to_string()),
            Ok(None) if Instant::now() >= deadline || crate::signal::interrupted() => {
                // SAFETY: kill(2) on the hook's own process group.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                let _ = child.wait();
                if crate::signal::interrupted() {
                    break HookOutcome::Failed("interrupted".into());
                }
                break HookOutcome::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break HookOutcome::Failed(e.to_string()),
        }
    };
    let mut bytes = Vec::new();
    if output.rewind().is_ok() {
        let _ = output.take(64 * 1024).read_to_end(&mut bytes);
    }
    for line in String::from_utf8_lossy(&bytes).lines() {
        log(1, &format!("hook {}: {line}", hook.stage.as_str()));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(command: &str, timeout_secs: u64) -> HookSpec {
        HookSpec {
            stage: HookStage::Done,
            command: command.into(),
            timeout_secs,
        }
    }

    #[test]
    fn a_hook_reads_the_document_and_its_exit_status_counts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("doc.json");
        let cmd = format!("cat > {}", file.display());
        let doc = serde_json::json!({"op": 7});
        assert!(run_stage(&[hook(&cmd, 10)], HookStage::Done, &doc));
        let got: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            (got["op"].as_u64(), got["stage"].as_str()),
            (Some(7), Some("done"))
        );
        assert_eq!(
            run_one(&hook("exit 3", 10), &doc),
            HookOutcome::Failed("exit status: 3".into())
        );
        assert!(!run_stage(&[hook("exit 3", 10)], HookStage::Done, &doc));
        // Hooks of other stages do not run.
        assert!(run_stage(&[hook("exit 3", 10)], HookStage::Started, &doc));
    }

    #[test]
    fn a_hook_sees_only_the_inherited_variables() {
        for name in ["PATH", "HOME", "LC_ALL", "LC_CTYPE", "TZ"] {
            assert!(inherits(name), "{name}");
        }
        for name in [
            "SHARDCTL_PW",
            "AWS_SECRET_ACCESS_KEY",
            "MYSQL_PWD",
            "PATHX",
            "LC",
        ] {
            assert!(!inherits(name), "{name}");
        }
        // cargo runs the tests with CARGO_* variables set: the hook must not see them.
        assert!(std::env::vars().any(|(k, _)| k.starts_with("CARGO_")));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("env");
        let cmd = format!("env > {}", file.display());
        assert_eq!(
            run_one(&hook(&cmd, 10), &serde_json::json!({})),
            HookOutcome::Passed
        );
        let seen = std::fs::read_to_string(&file).unwrap();
        let names: Vec<&str> = seen.lines().filter_map(|l| l.split('=').next()).collect();
        assert!(names.contains(&"PATH"), "{seen}");
        for name in names {
            // sh itself sets PWD (and may set SHLVL, _); nothing else comes from outside.
            assert!(
                inherits(name) || ["PWD", "SHLVL", "_", "OLDPWD"].contains(&name),
                "the hook saw {name}"
            );
        }
    }

    #[test]
    fn a_hanging_hook_and_what_it_started_are_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let cmd = format!("(sleep 3; touch {}) & sleep 30", marker.display());
        let t = Instant::now();
        assert_eq!(
            run_one(&hook(&cmd, 1), &serde_json::json!({})),
            HookOutcome::TimedOut
        );
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        std::thread::sleep(Duration::from_secs(4));
        assert!(!marker.exists(), "a process the hook started outlived it");
    }
}
