//! One run, judged twice: the answers of a `--judge outcome` run judged
//! again in full (`patchspec matrix --full-out DIR`), so that a matrix needs
//! both modes without calling every executor twice.
//!
//! Main function: [`judge_full`]. A case's verdict is its answer's result
//! mismatches plus the tree after the call and the writes outside it; the
//! two modes differ only in the first, so each answered case keeps its
//! trees and outside writes and gets the full mode's result mismatches
//! ([`Judge::document_mismatches`], as the runner calls it: the case's
//! pattern with `{{workspaceRoot}}` filled in, the expected tree for
//! `$sha256Of`, one `$unique` scope per column). A case without a valid
//! answer (error, skip) is the same in both modes.
//!
//! What it leaves out: cases with `steps` (their step answers are not kept,
//! so they cannot be judged again: the caller runs those in full itself, or
//! refuses), and a pattern that names the workspace root when the call
//! sent did not (the root is read back from the call).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::baseline::classify;
use crate::case::Case;
use crate::event::CaseResult;
use crate::judge::{expected_files, Answered, Judge};
use crate::outcome::RawOutcome;
use crate::pattern::RunUnique;
use crate::steps::{substitute_any, Resolved, WORKSPACE_ROOT};

/// Why a selection cannot be judged twice from one run, or `None` when it
/// can: the first case with steps.
pub fn unsupported(selected: &[&Case]) -> Option<String> {
    selected.iter().find(|c| !c.steps.is_empty()).map(|c| {
        format!(
            "{} has steps, whose answers a run does not keep: it cannot be judged again in full",
            c.id
        )
    })
}

/// `results`, judged in outcome mode, judged again in full mode from the
/// same answers. Err names the case that cannot be (see the module doc).
pub fn judge_full(cases: &[&Case], results: &[CaseResult]) -> Result<Vec<CaseResult>, String> {
    let by_id: BTreeMap<&str, &Case> = cases.iter().map(|c| (c.id.as_str(), *c)).collect();
    let unique = RunUnique::default();
    results
        .iter()
        .map(|r| {
            let (Some(success), Some(document)) = (r.success, r.result.as_ref()) else {
                return Ok(r.clone());
            };
            if !matches!(r.raw, RawOutcome::Pass | RawOutcome::Fail) {
                return Ok(r.clone());
            }
            let case = by_id
                .get(r.id.as_str())
                .ok_or_else(|| format!("{}: not among the selected cases", r.id))?;
            if let Some(why) = unsupported(&[case]) {
                return Err(why);
            }
            let pattern = fill_workspace_root(case, &r.params)?;
            let files = expected_files(case);
            let mut full = r.clone();
            full.detail.result = Judge::Full.document_mismatches(
                Answered {
                    case: &case.id,
                    tool: &case.tool,
                    pattern: &pattern,
                    files: Some(&files),
                },
                success,
                document,
                &unique,
            );
            full.raw = if full.detail.result.is_empty()
                && full.detail.files.is_empty()
                && full.detail.outside.is_empty()
            {
                RawOutcome::Pass
            } else {
                RawOutcome::Fail
            };
            full.outcome = classify(full.raw, None);
            Ok(full)
        })
        .collect()
}

/// The case's expected result with `{{workspaceRoot}}` replaced by the root
/// the call was sent with (read back from `sent`, the call's params after
/// templates were filled in).
fn fill_workspace_root(case: &Case, sent: &Value) -> Result<Value, String> {
    let pattern = &case.expect.result;
    if !pattern.to_string().contains(WORKSPACE_ROOT) {
        return Ok(pattern.clone());
    }
    let root = sent
        .as_object()
        .and_then(|sent| root_in(&case.call, sent))
        .ok_or_else(|| {
            format!(
                "{}: its expected result names {WORKSPACE_ROOT}, but its call does not show which root was sent",
                case.id
            )
        })?;
    substitute_any(
        pattern,
        Resolved {
            results: &[],
            workspace_root: &root,
        },
    )
    .map_err(|e| format!("{}: expect.result: {e}", case.id))
}

/// The workspace root that turned `template` (the case's call) into `sent`:
/// read from the first string holding `{{workspaceRoot}}`, and checked by
/// filling the template in again.
fn root_in(template: &Map<String, Value>, sent: &Map<String, Value>) -> Option<String> {
    template
        .iter()
        .find_map(|(k, v)| root_in_value(v, sent.get(k)?))
}

fn root_in_value(template: &Value, sent: &Value) -> Option<String> {
    match (template, sent) {
        (Value::String(t), Value::String(s)) if t.contains(WORKSPACE_ROOT) => {
            let parts: Vec<&str> = t.split(WORKSPACE_ROOT).collect();
            let fixed: usize = parts.iter().map(|p| p.len()).sum();
            let times = parts.len() - 1;
            let extra = s.len().checked_sub(fixed)?;
            let start = parts[0].len();
            let root = s.get(start..start + extra / times)?;
            (extra % times == 0 && t.replace(WORKSPACE_ROOT, root) == *s).then(|| root.to_owned())
        }
        (Value::Array(t), Value::Array(s)) => {
            t.iter().zip(s).find_map(|(t, s)| root_in_value(t, s))
        }
        (Value::Object(t), Value::Object(s)) => root_in(t, s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_root_is_read_back_from_the_call_and_checked() {
        let call =
            json!({"patch": "*** Update File: {{workspaceRoot}}/a\n{{workspaceRoot}}", "n": [1]});
        let sent = json!({"patch": "*** Update File: /tmp/r/ws/a\n/tmp/r/ws", "n": [1]});
        assert_eq!(
            root_in(call.as_object().unwrap(), sent.as_object().unwrap()).as_deref(),
            Some("/tmp/r/ws")
        );
        // Nested, and after a string without the template.
        let call = json!({"a": "x", "b": [{"p": "{{workspaceRoot}}"}]});
        let sent = json!({"a": "x", "b": [{"p": "/w"}]});
        assert_eq!(
            root_in(call.as_object().unwrap(), sent.as_object().unwrap()).as_deref(),
            Some("/w")
        );
        // A sent text the template cannot have made.
        for sent in [json!({"a": "y/w"}), json!({"a": ""}), json!({"a": 1})] {
            let call = json!({"a": "x{{workspaceRoot}}"});
            assert_eq!(
                root_in(call.as_object().unwrap(), sent.as_object().unwrap()),
                None
            );
        }
        let call = json!({"a": "{{workspaceRoot}}-{{workspaceRoot}}"});
        let sent = json!({"a": "/ab-/a"});
        assert_eq!(
            root_in(call.as_object().unwrap(), sent.as_object().unwrap()),
            None
        );
    }
}
