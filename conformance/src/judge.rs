//! Judge modes: how much of an answer is compared with the case.
//!
//! Main type: [`Judge`]. The default, [`Judge::Full`], matches the whole
//! result document against the case's `expect.result` pattern (error kinds,
//! details, changed files …) and compares the tree after the call.
//! [`Judge::Outcome`] is for executors that cannot report error kinds (a CLI
//! whose only answer is its exit code, a library function that raises): it
//! compares only success or failure — `data.success` against the pattern's
//! literal `success` — and the tree after the call. Both modes fail a case
//! that writes outside its workspace, and both check that a result document's
//! own `success` agrees with `data.success`.
//!
//! What it leaves out: per-case judge overrides. A mode is a property of a
//! run, and every report of the run names it.

use std::fmt;

use serde_json::Value;

use crate::pattern::{self, Mismatch};

/// How answers are judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Judge {
    /// The whole result document (the pattern) and the tree after the call.
    #[default]
    Full,
    /// Only success or failure, and the tree after the call.
    Outcome,
}

impl Judge {
    /// The stable name used in every report: `full` or `outcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            Judge::Full => "full",
            Judge::Outcome => "outcome",
        }
    }

    /// One line saying what the mode compares, for readable reports.
    pub fn describe(self) -> &'static str {
        match self {
            Judge::Full => "full: the result document (pattern) and the tree after the call",
            Judge::Outcome => {
                "outcome: success or failure and the tree after the call (error kinds and details not compared)"
            }
        }
    }

    /// The result mismatches of an answer (`success` is `data.success`,
    /// `document` the decoded result document) against the case's pattern.
    pub fn result_mismatches(
        self,
        pattern: &Value,
        success: bool,
        document: &Value,
    ) -> Vec<Mismatch> {
        let mut out = match self {
            Judge::Full => pattern::matches(pattern, document),
            Judge::Outcome => match expected_success(pattern) {
                Some(want) if want != success => vec![Mismatch {
                    path: "TOOL_RESULT.data.success".into(),
                    expected: format!("{want} (the case's success; judge: outcome)"),
                    got: success.to_string(),
                }],
                Some(_) | None => Vec::new(),
            },
        };
        if let Some(doc) = document.get("success").and_then(Value::as_bool) {
            if doc != success {
                out.push(Mismatch {
                    path: "TOOL_RESULT.data.success".into(),
                    expected: format!("{doc} (the result document's success)"),
                    got: success.to_string(),
                });
            }
        }
        out
    }
}

impl fmt::Display for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The pattern's literal boolean `success`, when it has one (every case of
/// the corpus does; a case without one is judged on its tree alone in
/// outcome mode).
pub fn expected_success(pattern: &Value) -> Option<bool> {
    pattern.get("success").and_then(Value::as_bool)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(judge: Judge, pattern: Value, success: bool, doc: Value, want: &[&str]) {
        let got: Vec<String> = judge
            .result_mismatches(&pattern, success, &doc)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, want, "{judge} {pattern} {doc}");
    }

    #[test]
    fn outcome_ignores_error_kinds_but_not_success() {
        let refusal = json!({"success": false, "error": {"kind": "stale_file"}});
        let bare = json!({"success": false, "error": {"message": "no"}});
        check(Judge::Outcome, refusal.clone(), false, bare.clone(), &[]);
        check(
            Judge::Full,
            refusal.clone(),
            false,
            bare.clone(),
            &["$.error.kind: expected \"stale_file\", got (absent)"],
        );
        check(
            Judge::Outcome,
            refusal,
            true,
            json!({}),
            &["TOOL_RESULT.data.success: expected false (the case's success; judge: outcome), got true"],
        );
    }

    #[test]
    fn both_modes_check_the_document_agrees_with_data_success() {
        for judge in [Judge::Full, Judge::Outcome] {
            check(
                judge,
                json!({"success": true}),
                true,
                json!({"success": false}),
                &[
                    "$.success: expected true, got false",
                    "TOOL_RESULT.data.success: expected false (the result document's success), got true",
                ][usize::from(judge == Judge::Outcome)..],
            );
        }
    }

    #[test]
    fn a_pattern_without_success_is_not_judged_on_success_in_outcome_mode() {
        check(Judge::Outcome, json!({"path": "a"}), false, json!({}), &[]);
        assert_eq!(expected_success(&json!({"success": "yes"})), None);
    }
}
