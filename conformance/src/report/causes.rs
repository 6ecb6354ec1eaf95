//! Failures that share a cause, grouped for the human report.
//!
//! An executor that gets one thing wrong usually gets it wrong in many
//! cases: an undeclared tool answers `unknown_tool` to 415 of them, a slow
//! executor times out everywhere. Printing each of those in full buries the
//! one explanation a reader needs, so the human report prints one example
//! per cause, the count and the ids, and a suggestion where one fits. The
//! machine reports (JSON lines, JUnit, Markdown) keep every case.
//!
//! The cause of a case that breaks the gate ([`cause`]):
//! - `error`: its error kind and message (`[timeout] timed out after 5.0s`);
//! - `fail` where the executor refused with an error kind (`error.kind`,
//!   `errorCode`, or the first `errors[].code` of its result document) and
//!   a mismatch is about success, the kind, or a top-level member the case
//!   expects and the document lacks: "refused with K", whatever
//!   the tree (a refusal leaves unchanged what the case expected edited);
//! - `fail` with a wrong `success` and no error kind: that mismatch;
//! - other `fail`s with result mismatches and the right tree: the exact
//!   mismatches;
//! - `xpass`: being listed in the baseline;
//! - anything else (a wrong tree, a write outside the workspace): the case
//!   alone.
//!
//! What it leaves out: judging (the runner did that) and layout (the human
//! reporter prints the groups).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use crate::event::CaseResult;
use crate::outcome::Outcome;

/// Tags that name an optional capability an executor may declare
/// unsupported (docs/protocol.md "Extensions", docs/case-format.md, and
/// clarification C-ide-change-format): a group of failures that all carry
/// one of them gets the suggestion to declare it.
pub const CAPABILITY_TAGS: &[&str] = &["diagnostics", "limits", "modes", "format"];

/// Why a case broke the gate, as far as it can be shared with other cases.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cause {
    /// Cases with equal keys share the cause.
    pub key: String,
    /// The cause, readable (the group's heading).
    pub label: String,
}

/// The error kind a result document reports: `error.kind` (apply_patch,
/// the IDE tools, an unknown tool), `errorCode` (workspace.read_file,
/// workspace_create_file) or the first `errors[].code` (workspace_write_patch).
pub fn reported_kind(doc: &Value) -> Option<&str> {
    doc.pointer("/error/kind")
        .and_then(Value::as_str)
        .or_else(|| doc.get("errorCode").and_then(Value::as_str))
        .or_else(|| doc.pointer("/errors/0/code").and_then(Value::as_str))
}

/// Is this mismatch about what the executor decided rather than a detail:
/// success, an error kind (`….kind`, `….code`, `errorCode`), or a
/// top-level member of the expected document missing altogether (an
/// executor that refused with another kind lacks the `errors` or `result`
/// the case expects)?
fn about_the_verdict(m: &crate::pattern::Mismatch) -> bool {
    let top_level_absent = m.got == "(absent)"
        && m.path
            .strip_prefix("$.")
            .is_some_and(|rest| !rest.contains(['.', '[']));
    m.path == "$.success"
        || m.path == "$.errorCode"
        || m.path.ends_with(".kind")
        || m.path.ends_with(".code")
        || top_level_absent
}

/// The cause of a case that broke the gate.
pub fn cause(r: &CaseResult) -> Cause {
    let alone = || Cause {
        key: format!("case {}", r.id),
        label: r.id.clone(),
    };
    match r.outcome {
        Outcome::Error => {
            let kind = r.detail.error_kind.unwrap_or("error");
            let message = r
                .detail
                .message
                .as_deref()
                .and_then(|m| m.lines().next())
                .unwrap_or_default();
            Cause {
                key: format!("error {kind} {message}"),
                label: format!("[{kind}] {message}"),
            }
        }
        Outcome::Xpass => Cause {
            key: "xpass".into(),
            label: "passed, but the baseline lists them as known failures".into(),
        },
        Outcome::Fail if r.detail.outside.is_empty() => {
            // A wrong verdict explains the rest (a refusal leaves the tree
            // unchanged where the case expected an edit).
            let verdict = r.detail.result.iter().find(|m| about_the_verdict(m));
            let refused_with = r
                .result
                .as_ref()
                .filter(|_| r.success == Some(false))
                .and_then(reported_kind);
            match (verdict, refused_with) {
                (Some(_), Some(kind)) => Cause {
                    key: format!("refused {kind}"),
                    label: format!("the executor refused with error kind {kind:?}"),
                },
                (Some(m), None) if m.path == "$.success" => Cause {
                    key: format!("verdict {m}"),
                    label: m.to_string(),
                },
                _ if r.detail.files.is_empty() && !r.detail.result.is_empty() => {
                    let all: Vec<String> =
                        r.detail.result.iter().map(ToString::to_string).collect();
                    Cause {
                        key: format!("mismatch {}", all.join("\n")),
                        label: all.join("; "),
                    }
                }
                _ => alone(),
            }
        }
        Outcome::Fail | Outcome::Pass | Outcome::Skip | Outcome::Xfail => alone(),
    }
}

/// A suggestion for a group of cases that share `cause`, where one fits.
/// `timeout` is the run's per-case timeout.
pub fn suggestion(cause: &Cause, cases: &[&CaseResult], timeout: Duration) -> Option<String> {
    if cause.key == "refused unknown_tool" {
        let tools: BTreeSet<&str> = cases.iter().map(|r| r.tool.as_str()).collect();
        let skips: Vec<String> = tools.iter().map(|t| format!("--skip-tool {t}")).collect();
        let tools: Vec<&str> = tools.into_iter().collect();
        return Some(format!(
            "the executor does not implement {}: declare only the tools it implements in its HELLO (\"tools\"), so their cases are skipped, or pass {}",
            tools.join(", "),
            skips.join(" ")
        ));
    }
    if cause.key.starts_with("error timeout ") {
        return Some(format!(
            "if the executor is slow rather than stuck, raise --timeout (now {:.1}s)",
            timeout.as_secs_f64()
        ));
    }
    if cause.key == "xpass" {
        return Some("remove them from the baseline, or rewrite it with --update-baseline".into());
    }
    let shared = CAPABILITY_TAGS
        .iter()
        .find(|tag| cases.iter().all(|r| r.tags.iter().any(|t| t == *tag)))?;
    Some(format!(
        "all of them carry the tag {shared:?}: if the executor does not implement that capability, declare it in its HELLO (\"unsupportedTags\") or pass --skip-tag {shared}"
    ))
}

/// Groups of cases by cause: the largest first, then by the first id; the
/// cases of a group in id order (as given).
pub fn group(problems: &[CaseResult]) -> Vec<(Cause, Vec<&CaseResult>)> {
    let mut groups: Vec<(Cause, Vec<&CaseResult>)> = Vec::new();
    let mut index: std::collections::HashMap<Cause, usize> = std::collections::HashMap::new();
    for r in problems {
        let c = cause(r);
        match index.get(&c) {
            Some(&i) => groups[i].1.push(r),
            None => {
                index.insert(c.clone(), groups.len());
                groups.push((c, vec![r]));
            }
        }
    }
    groups.sort_by(|a, b| {
        b.1.len()
            .cmp(&a.1.len())
            .then_with(|| a.1[0].id.cmp(&b.1[0].id))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Detail;
    use crate::outcome::RawOutcome;
    use crate::pattern::Mismatch;
    use serde_json::json;

    fn result(id: &str, tool: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            id: id.into(),
            summary: String::new(),
            spec: Vec::new(),
            tool: tool.into(),
            tags: Vec::new(),
            outcome,
            raw: RawOutcome::Fail,
            expected: None,
            tool_call_id: String::new(),
            params: Value::Null,
            result: None,
            success: None,
            detail: Detail::default(),
            stderr: String::new(),
            duration: Duration::ZERO,
            amended: false,
        }
    }

    fn refused(id: &str, tool: &str, kind: &str, mismatch_at: &str) -> CaseResult {
        let mut r = result(id, tool, Outcome::Fail);
        r.success = Some(false);
        r.result = Some(json!({"success": false, "error": {"kind": kind, "message": "m"}}));
        r.detail.result = vec![Mismatch {
            path: mismatch_at.into(),
            expected: "true".into(),
            got: "false".into(),
        }];
        r
    }

    #[test]
    fn an_undeclared_tool_is_one_cause_with_a_suggestion() {
        let problems = vec![
            refused("a/1", "apply_patch", "unknown_tool", "$.success"),
            refused("a/2", "apply_patch", "unknown_tool", "$.error.kind"),
            refused("b/1", "grep_file", "unknown_tool", "$.success"),
            refused("c/1", "apply_patch", "context_not_found", "$.error.kind"),
        ];
        let groups = group(&problems);
        assert_eq!(groups.len(), 2);
        let (cause, cases) = &groups[0];
        assert_eq!(cases.len(), 3);
        assert_eq!(
            cause.label,
            "the executor refused with error kind \"unknown_tool\""
        );
        let hint = suggestion(cause, cases, Duration::from_secs(5)).expect("a suggestion");
        assert!(hint.contains("apply_patch, grep_file"), "{hint}");
        assert!(
            hint.contains("--skip-tool apply_patch --skip-tool grep_file"),
            "{hint}"
        );
        assert_eq!(groups[1].1[0].id, "c/1");
    }

    #[test]
    fn a_refusal_that_lacks_the_expected_errors_is_the_kind() {
        // workspace_write_patch expects `errors[]`; an executor that answers
        // unknown_tool has an `error` object instead.
        let a = refused("w/1", "workspace_write_patch", "unknown_tool", "$.errors");
        let mut b = a.clone();
        b.detail.result[0].got = "(absent)".into();
        assert_eq!(cause(&b).key, "refused unknown_tool");
        assert_ne!(
            cause(&a).key,
            "refused unknown_tool",
            "present, only different"
        );
    }

    #[test]
    fn a_mismatch_in_the_details_is_not_the_kind() {
        // Refused with the expected kind, wrong details: grouped by the
        // exact mismatches, not by the kind.
        let a = refused(
            "a",
            "apply_patch",
            "context_not_found",
            "$.error.details.hunkIndex",
        );
        let b = refused(
            "b",
            "apply_patch",
            "context_not_found",
            "$.error.details.line",
        );
        assert_ne!(cause(&a), cause(&b));
        assert!(cause(&a).label.starts_with("$.error.details.hunkIndex"));
    }

    #[test]
    fn errors_group_by_kind_and_message_and_trees_stay_alone() {
        let mut t1 = result("t1", "x", Outcome::Error);
        t1.detail.error_kind = Some("timeout");
        t1.detail.message = Some("timed out after 5.0s".into());
        let mut t2 = t1.clone();
        t2.id = "t2".into();
        assert_eq!(cause(&t1), cause(&t2));
        let s = suggestion(&cause(&t1), &[&t1, &t2], Duration::from_secs(5));
        assert!(s.is_some_and(|s| s.contains("--timeout (now 5.0s)")));
        let mut w1 = result("w1", "x", Outcome::Fail);
        w1.detail
            .files
            .extra
            .push(("x".into(), crate::workspace::Entry::Dir));
        let mut w2 = w1.clone();
        w2.id = "w2".into();
        assert_ne!(cause(&w1), cause(&w2));
    }

    #[test]
    fn a_shared_capability_tag_is_suggested() {
        let mut a = refused(
            "a",
            "apply_patch",
            "context_not_found",
            "$.error.details.diagnosis",
        );
        a.tags = vec!["diagnostics".into(), "error".into()];
        let mut b = a.clone();
        b.id = "b".into();
        let hint = suggestion(&cause(&a), &[&a, &b], Duration::from_secs(5));
        assert!(hint.is_some_and(|h| h.contains("--skip-tag diagnostics")));
        b.tags = vec!["error".into()];
        assert_eq!(
            suggestion(&cause(&a), &[&a, &b], Duration::from_secs(5)),
            None
        );
    }
}
