//! [`Store::refused`] and its kin: a refused verb exits with its code and message, in text
//! and in JSON, and leaves every store file as it was.

use super::{assert_files_eq, Store, LIMIT};
use serde_json::Value;

impl Store {
    /// Runs `args`, expects exit `exit` with `phrase` in the message, then the same with
    /// `--json` and the error `code`; asserts both left every store file as it was (or the
    /// store absent). Returns the JSON error object.
    pub fn refused(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> Value {
        self.refusal(args, &[], None, exit, phrase, code).1
    }

    /// As [`Store::refused`]; returns the text message (stderr) instead.
    pub fn refused_text(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> String {
        self.refusal(args, &[], None, exit, phrase, code).0
    }

    /// As [`Store::refused_text`], with environment variables and stdin.
    pub fn refused_full(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        exit: i32,
        phrase: &str,
        code: &str,
    ) -> String {
        self.refusal(args, env, stdin, exit, phrase, code).0
    }

    /// The checks of [`Store::refused`]; returns the text message and the JSON error object.
    fn refusal(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        exit: i32,
        phrase: &str,
        code: &str,
    ) -> (String, Value) {
        let existed = self.dir.exists();
        let before = self.files();
        let r = self.run_full(args, env, stdin.clone(), LIMIT);
        r.refused(exit, phrase);
        assert!(
            r.stderr.starts_with("error: "),
            "stderr of {args:?} does not start with \"error: \": {}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "a refused {args:?} printed on stdout");
        assert_eq!(
            self.dir.exists(),
            existed,
            "refused {args:?} created or removed the store directory"
        );
        assert_files_eq(&before, &self.files(), &format!("refused {args:?}"));
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let j = self.run_full(&all, env, stdin, LIMIT);
        assert_eq!(j.code, Some(exit), "--json {args:?}: {}", j.stderr);
        let e = j.error_json();
        assert_eq!(e["code"], code, "{args:?}: {e}");
        assert!(
            e["message"].as_str().unwrap_or_default().contains(phrase),
            "{args:?}: JSON message lacks {phrase:?}: {e}"
        );
        assert_eq!(
            self.dir.exists(),
            existed,
            "refused --json {args:?} created or removed the store directory"
        );
        assert_files_eq(&before, &self.files(), &format!("refused --json {args:?}"));
        (r.stderr, e)
    }
}
