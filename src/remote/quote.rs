//! POSIX shell quoting for command lines sent to a host (`sh -c` locally, the login shell
//! over ssh).

use crate::error::{Error, Result};

/// One word for a POSIX shell: bare when it holds only characters no shell treats
/// specially, else in single quotes with each `'` written as `'\''`. NUL cannot be carried
/// by any command line and is refused.
pub fn quote(word: &str) -> Result<String> {
    if word.contains('\0') {
        return Err(Error::Usage(
            "a command argument holds a NUL byte, which no command line can carry".into(),
        ));
    }
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    // A leading `=` or `~` can mean something to some shells; quote it then.
    if plain && !word.starts_with(['~', '=']) {
        return Ok(word.to_string());
    }
    Ok(format!("'{}'", word.replace('\'', "'\\''")))
}

/// A command line from a program and its arguments, every word quoted.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> Result<String> {
    let quoted: Result<Vec<String>> = words.iter().map(|w| quote(w.as_ref())).collect();
    Ok(quoted?.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `sh` makes of a command line: each argument printed on its own, NUL-separated.
    fn sh_words(line: &str) -> Vec<String> {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", "/nonexistent")
            .output()
            .expect("sh runs");
        assert!(out.status.success(), "{line}: {out:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let mut words: Vec<String> = text.split('\0').map(str::to_string).collect();
        assert_eq!(words.pop().as_deref(), Some(""));
        words
    }

    #[test]
    fn adversarial_words_reach_the_command_unchanged() {
        let words = [
            "plain",
            "",
            " ",
            "two words",
            "it's",
            "''",
            "'",
            "\"double\"",
            "$HOME",
            "${HOME}",
            "$(touch /tmp/shardctl-quote-pwned)",
            "`touch /tmp/shardctl-quote-pwned`",
            "a;b",
            "a&&b",
            "a|b",
            "a>b",
            "<x",
            "*",
            "?",
            "[a-z]",
            "~",
            "~root",
            "=x",
            "back\\slash",
            "trailing\\",
            "new\nline",
            "tab\there",
            "carriage\rreturn",
            "-n",
            "--option=value",
            "!event",
            "#comment",
            "{a,b}",
            "héllo wörld",
            "\u{1b}[31mred",
            "'; rm -rf / #",
            "a'b'c'd",
            "%s%n",
        ];
        for w in words {
            let line = quote(w).unwrap();
            assert_eq!(sh_words(&line), vec![w.to_string()], "{w:?} as {line}");
        }
        let line = command_line(&words).unwrap();
        assert_eq!(sh_words(&line), words.to_vec());
        assert!(!std::path::Path::new("/tmp/shardctl-quote-pwned").exists());
    }

    #[test]
    fn every_byte_survives_quoting() {
        for b in 1u8..128 {
            let w = format!("x{}y", b as char);
            let line = quote(&w).unwrap();
            assert_eq!(sh_words(&line), vec![w.clone()], "byte {b}");
        }
    }

    #[test]
    fn plain_words_stay_bare_and_nul_is_refused() {
        assert_eq!(quote("/var/lib/mysql").unwrap(), "/var/lib/mysql");
        assert_eq!(quote("--databases").unwrap(), "--databases");
        assert_eq!(quote("a b").unwrap(), "'a b'");
        assert_eq!(quote("it's").unwrap(), "'it'\\''s'");
        assert_eq!(quote("").unwrap(), "''");
        assert!(quote("a\0b").is_err());
    }
}
