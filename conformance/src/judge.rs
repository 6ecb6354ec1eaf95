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
//! In full mode, [`Judge::case_mismatches`] adds what one document cannot
//! say alone: `$sha256Of` hashes the tree the case expects, `$unique`
//! values must differ across the whole run ([`RunUnique`]), and exact mode
//! flags members the tool does not document ([`crate::members`]). Outcome
//! mode does none of that: it keeps its meaning.
//!
//! What it leaves out: per-case judge overrides. A mode is a property of a
//! run, and every report of the run names it.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::case::{Case, ExpectFiles};
use crate::pattern::{self, Context, Mismatch, RunUnique};

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
        out.extend(disagreement(success, document));
        out
    }

    /// The result mismatches of an answer to `case`: in full mode the
    /// pattern with its context (the expected tree for `$sha256Of`), the
    /// run-wide `$unique` check against `run`, and exact mode (members the
    /// tool does not document, outside `$open`); in outcome mode the same
    /// as [`Judge::result_mismatches`].
    pub fn case_mismatches(
        self,
        case: &Case,
        success: bool,
        document: &Value,
        run: &RunUnique,
    ) -> Vec<Mismatch> {
        let files = expected_files(case);
        self.document_mismatches(
            Answered {
                case: &case.id,
                tool: &case.tool,
                pattern: &case.expect.result,
                files: Some(&files),
            },
            success,
            document,
            run,
        )
    }

    /// [`Judge::case_mismatches`] for one answer of a case: its own call
    /// (after multi-step templates are resolved) or one of its steps (its
    /// tool, its pattern, no expected tree: `$sha256Of` fails there).
    pub fn document_mismatches(
        self,
        answered: Answered<'_>,
        success: bool,
        document: &Value,
        run: &RunUnique,
    ) -> Vec<Mismatch> {
        match self {
            Judge::Outcome => self.result_mismatches(answered.pattern, success, document),
            Judge::Full => {
                let context = Context {
                    files: answered.files,
                };
                let judged = pattern::judge_document(answered.pattern, document, &context);
                let mut out = judged.mismatches;
                out.extend(run.bind(answered.case, &judged.unique));
                out.extend(crate::members::undocumented(
                    answered.tool,
                    document,
                    &judged.open,
                ));
                out.extend(disagreement(success, document));
                out
            }
        }
    }
}

/// What one answer is judged against: the case it belongs to, the tool
/// that answered, the pattern, and the files the case expects (for
/// `$sha256Of`; `None` for a step).
#[derive(Clone, Copy, Debug)]
pub struct Answered<'a> {
    /// The case's id (the scope of `$unique` bindings).
    pub case: &'a str,
    /// The tool that answered (exact mode reads its documented members).
    pub tool: &'a str,
    /// The expected result pattern.
    pub pattern: &'a Value,
    /// The regular files of the tree the case expects after its call.
    pub files: Option<&'a BTreeMap<String, Vec<u8>>>,
}

/// The regular files of the tree `case` expects after its call: its
/// `expect.files`, or its given files when that is `"unchanged"`.
pub fn expected_files(case: &Case) -> BTreeMap<String, Vec<u8>> {
    match &case.expect.files {
        ExpectFiles::Tree(files) => files.iter().map(|(p, c)| (p.clone(), c.bytes())).collect(),
        ExpectFiles::Unchanged(_) => case
            .given
            .files
            .iter()
            .map(|(p, c)| (p.clone(), c.bytes()))
            .collect(),
    }
}

/// The result document's own `success` disagrees with `data.success`.
fn disagreement(success: bool, document: &Value) -> Option<Mismatch> {
    let doc = document.get("success").and_then(Value::as_bool)?;
    (doc != success).then(|| Mismatch {
        path: "TOOL_RESULT.data.success".into(),
        expected: format!("{doc} (the result document's success)"),
        got: success.to_string(),
    })
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

    fn create_file_case(result: Value) -> Case {
        serde_json::from_value(json!({
            "id": "workspace_create_file/x/y", "summary": "s", "spec": ["clarifications#C-x"],
            "tool": "workspace_create_file", "given": {"files": {}},
            "call": {"path": "a.txt", "content": "abc"},
            "expect": {"result": result, "files": {"a.txt": "abc"}}
        }))
        .expect("a valid case")
    }

    #[test]
    fn full_mode_flags_undocumented_members_and_outcome_mode_does_not() {
        let doc = json!({"success": true, "path": "a.txt", "durationMs": 3});
        let run = RunUnique::default();
        let case = create_file_case(json!({"success": true}));
        let full: Vec<String> = Judge::Full
            .case_mismatches(&case, true, &doc, &run)
            .iter()
            .map(|m| m.path.clone())
            .collect();
        assert_eq!(full, ["$.durationMs"]);
        assert!(Judge::Outcome
            .case_mismatches(&case, true, &doc, &run)
            .is_empty());
        let open = create_file_case(json!({"$open": {"success": true}}));
        assert!(Judge::Full
            .case_mismatches(&open, true, &doc, &run)
            .is_empty());
    }

    #[test]
    fn full_mode_hashes_the_expected_tree_and_ties_ids_across_cases() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let run = RunUnique::default();
        let case = create_file_case(json!({"success": true, "hash": {"$sha256Of": "a.txt"}}));
        let good = json!({"success": true, "hash": abc});
        assert!(Judge::Full
            .case_mismatches(&case, true, &good, &run)
            .is_empty());
        let old = json!({"success": true, "hash": "00"});
        assert_eq!(
            Judge::Full.case_mismatches(&case, true, &old, &run).len(),
            1
        );
        let unique = create_file_case(json!({"success": true, "path": {"$unique": "p"}}));
        let doc = json!({"success": true, "path": "a.txt"});
        assert!(Judge::Full
            .case_mismatches(&unique, true, &doc, &run)
            .is_empty());
        assert_eq!(
            Judge::Full.case_mismatches(&unique, true, &doc, &run).len(),
            1
        );
        // Outcome mode binds nothing.
        assert!(Judge::Outcome
            .case_mismatches(&unique, true, &doc, &run)
            .is_empty());
    }
}
