//! `matrix.json`. **Stable**: fields are only ever added; consumers must
//! ignore fields they do not know.
//!
//! One object:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `formatVersion` | integer | `1` |
//! | `runner` | object | `{name: "patchspec", version}` |
//! | `judge` | string | `full` or `outcome`, for every column (see `--judge`) |
//! | `corpus` | object | `{root, version (string or null), hash ("sha256:<hex>"), cases}` |
//! | `filters` | string | the selection, readable |
//! | `timeoutMs` | integer | per-case timeout |
//! | `implementations` | array | one object per column, in column order (below) |
//! | `cases` | array | one object per selected case, in id order (below) |
//!
//! An implementation:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `name` | string | the `NAME` of `--executor NAME=CMD`; `reference` for the built-in engine |
//! | `reference` | boolean | is this the built-in reference engine |
//! | `command` | array of strings | the argv (empty for the engine) |
//! | `transport` | string | `inprocess` or `oneshot` |
//! | `implementation` | object or null | `{name, version, language?, homepage?}` from its HELLO |
//! | `declaredBy` | string | `built-in`, `hello`, or why nothing was declared |
//! | `tools` | array or null | declared tools (null: all tools were run) |
//! | `unsupportedTags`, `privatePaths` | arrays of strings | declared (plus `--skip-tag`/`--ignore-path`) |
//! | `unusable` | string or null | why the executor was declared unusable |
//! | `durationMs` | integer | wall time of its run |
//! | `totals` | object | `{pass, fail, error, skip, notRun, passRate}`; `passRate` = pass / (pass + fail + error), null when nothing was judged |
//! | `byTool` | object | tool → the same counts |
//!
//! A case:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `id`, `tool`, `summary` | string | from the case |
//! | `clause` | string | its primary clause (the first `spec` reference), the matrix's grouping |
//! | `spec`, `tags` | arrays of strings | from the case |
//! | `expectSuccess` | boolean or null | the pattern's literal `success` |
//! | `disagree` | boolean | the implementations under test (every column but the reference) that ran it did different things (`behaviour` differs); agreeing with the reference is what `pass` measures |
//! | `results` | object | implementation name → `{outcome, reason, departure, success, behaviour, drift}` |
//!
//! `outcome` is `pass`, `fail`, `error`, `skip` or `not-run`; `reason` a
//! one-line explanation (empty for a pass); `departure` null for a pass or a
//! skip, else `wrote-outside`, `applied-invalid`, `refused-valid`,
//! `changed-on-refusal`, `wrong-tree`, `wrong-result` or `error`; `success`
//! the `data.success` received (null without a valid answer); `behaviour` a
//! short fingerprint of the answer's success and the trees after the call
//! (equal fingerprints: the same behaviour), null when not run; `drift` the
//! byte-level kinds of the workspace files' differences that leave the text
//! the same (`bom`, `line-endings`, `final-newline`, `encoding`: a lossy
//! UTF-8 rewrite), sorted, empty when there is none.

use serde_json::{json, Map, Value};

use super::model::{Matrix, Tally};

fn tally(t: Tally) -> Value {
    json!({
        "pass": t.pass,
        "fail": t.fail,
        "error": t.error,
        "skip": t.skip,
        "notRun": t.not_run,
        "passRate": t.pass_rate(),
    })
}

/// The `matrix.json` document.
pub fn to_json(m: &Matrix) -> Value {
    let tools = m.tools();
    let implementations: Vec<Value> = m
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let by_tool: Map<String, Value> = tools
                .iter()
                .map(|t| ((*t).to_owned(), tally(m.tally(i, |r| r.tool == *t))))
                .collect();
            json!({
                "name": c.name,
                "reference": c.reference,
                "command": c.command,
                "transport": c.transport,
                "implementation": c.implementation,
                "declaredBy": c.declared_by,
                "tools": c.tools,
                "unsupportedTags": c.unsupported_tags,
                "privatePaths": c.private_paths,
                "unusable": c.unusable,
                "durationMs": c.duration.as_millis() as u64,
                "totals": tally(m.tally(i, |_| true)),
                "byTool": by_tool,
            })
        })
        .collect();
    let cases: Vec<Value> = m
        .rows
        .iter()
        .map(|r| {
            let results: Map<String, Value> = m
                .columns
                .iter()
                .zip(&r.cells)
                .map(|(col, cell)| {
                    (
                        col.name.clone(),
                        json!({
                            "outcome": cell.outcome.as_str(),
                            "reason": cell.reason,
                            "departure": cell.departure.map(|d| d.as_str()),
                            "success": cell.success,
                            "behaviour": cell.behaviour,
                            "drift": cell.drift,
                        }),
                    )
                })
                .collect();
            json!({
                "id": r.id,
                "tool": r.tool,
                "summary": r.summary,
                "clause": r.clause,
                "spec": r.spec,
                "tags": r.tags,
                "expectSuccess": r.expect_success,
                "disagree": m.disagree(r),
                "results": results,
            })
        })
        .collect();
    json!({
        "formatVersion": 1,
        "runner": {"name": "patchspec", "version": m.runner_version},
        "judge": m.judge.as_str(),
        "corpus": {
            "root": m.corpus_root,
            "version": m.corpus_version,
            "hash": format!("sha256:{}", m.corpus_hash),
            "cases": m.corpus_cases,
        },
        "filters": m.filters,
        "timeoutMs": m.timeout.as_millis() as u64,
        "implementations": implementations,
        "cases": cases,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::case::Case;
    use crate::event::{CaseResult, Detail};
    use crate::judge::Judge;
    use crate::matrix::{Column, Source};
    use crate::outcome::{Outcome, RawOutcome};
    use crate::workspace::{Entry, TreeDiff};

    fn case(id: &str, tool: &str, success: bool) -> Case {
        serde_json::from_value(json!({
            "id": id, "summary": "s", "spec": ["patch-envelope#add-file", "clarifications#C-x"],
            "tool": tool, "tags": ["t"], "given": {"files": {}},
            "call": {"patch": "p"},
            "expect": {"result": {"success": success}, "files": "unchanged"}
        }))
        .expect("a case")
    }

    fn column(name: &str) -> Column {
        Column {
            name: name.into(),
            reference: name == "reference",
            command: Vec::new(),
            transport: "oneshot".into(),
            implementation: None,
            tools: None,
            unsupported_tags: Vec::new(),
            private_paths: Vec::new(),
            declared_by: "hello".into(),
            unusable: None,
            duration: Duration::from_millis(1500),
        }
    }

    /// A result: `raw` with the answer's `success`, files changed or not, an error message.
    fn result(
        id: &str,
        raw: RawOutcome,
        success: Option<bool>,
        changed: bool,
        message: &str,
    ) -> CaseResult {
        let mut detail = Detail::default();
        if changed {
            detail.files = TreeDiff {
                changed: vec![(
                    "a.txt".into(),
                    Entry::File(b"x\n".to_vec(), None),
                    Entry::File(b"y\n".to_vec(), None),
                )],
                ..TreeDiff::default()
            };
        }
        if raw == RawOutcome::Error {
            detail.error_kind = Some("crash");
            detail.message = Some(message.into());
        }
        if raw == RawOutcome::Skip {
            detail.message = Some(message.into());
        }
        CaseResult {
            id: id.into(),
            summary: "s".into(),
            spec: Vec::new(),
            tool: "apply_patch".into(),
            tags: Vec::new(),
            outcome: Outcome::Pass,
            raw,
            expected: None,
            tool_call_id: String::new(),
            params: json!({}),
            result: success.map(|s| json!({"success": s, "error": {"message": message}})),
            success,
            detail,
            stderr: String::new(),
            duration: Duration::ZERO,
            amended: false,
        }
    }

    fn sample() -> Value {
        let cases = [
            case("apply_patch/a/applies", "apply_patch", true),
            case("apply_patch/a/refuses", "apply_patch", false),
            case("workspace.read_file/r/reads", "workspace.read_file", true),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let mut m = Matrix::new(
            Judge::Outcome,
            Source {
                runner_version: "0.1.0".into(),
                corpus_hash: "abc".into(),
                corpus_cases: 3,
                filters: "all".into(),
                timeout: Duration::from_secs(5),
                ..Source::default()
            },
            &refs,
        );
        let pass = |id: &str, s: bool| result(id, RawOutcome::Pass, Some(s), false, "");
        m.add_column(
            column("reference"),
            &[
                pass("apply_patch/a/applies", true),
                pass("apply_patch/a/refuses", false),
                pass("workspace.read_file/r/reads", true),
            ],
        );
        m.add_column(
            column("one"),
            &[
                result(
                    "apply_patch/a/applies",
                    RawOutcome::Fail,
                    Some(false),
                    false,
                    "Failed to find expected lines\nmore",
                ),
                result(
                    "apply_patch/a/refuses",
                    RawOutcome::Fail,
                    Some(false),
                    true,
                    "no",
                ),
                result(
                    "workspace.read_file/r/reads",
                    RawOutcome::Skip,
                    None,
                    false,
                    "the executor does not support tool",
                ),
            ],
        );
        m.add_column(
            column("two"),
            &[
                result(
                    "apply_patch/a/applies",
                    RawOutcome::Fail,
                    Some(false),
                    false,
                    "nope",
                ),
                result(
                    "apply_patch/a/refuses",
                    RawOutcome::Fail,
                    Some(true),
                    true,
                    "",
                ),
                result(
                    "workspace.read_file/r/reads",
                    RawOutcome::Error,
                    None,
                    false,
                    "killed by signal 6",
                ),
            ],
        );
        to_json(&m)
    }

    #[test]
    fn cells_carry_outcome_departure_and_a_short_reason() {
        let v = sample();
        let cell = |i: usize, name: &str| v["cases"][i]["results"][name].clone();
        assert_eq!(
            cell(0, "one"),
            json!({"outcome": "fail", "reason": "refused an edit the spec applies: Failed to find expected lines",
                   "departure": "refused-valid", "success": false, "behaviour": cell(0, "one")["behaviour"],
                   "drift": []})
        );
        assert_eq!(cell(1, "one")["departure"], "changed-on-refusal");
        assert_eq!(
            cell(1, "one")["reason"],
            "refused, but changed files: a.txt"
        );
        assert_eq!(cell(1, "two")["departure"], "applied-invalid");
        assert_eq!(cell(2, "one")["outcome"], "skip");
        assert_eq!(cell(2, "one")["departure"], Value::Null);
        assert_eq!(cell(2, "one")["behaviour"], Value::Null);
        assert_eq!(cell(2, "two")["departure"], "error");
        assert_eq!(
            cell(2, "two")["reason"],
            "no valid answer: [crash] killed by signal 6"
        );
        assert_eq!(cell(0, "reference")["reason"], "");
        assert_eq!(v["cases"][0]["clause"], "patch-envelope#add-file");
        assert_eq!(v["cases"][0]["expectSuccess"], true);
        assert_eq!(v["judge"], "outcome");
        assert_eq!(v["corpus"]["hash"], "sha256:abc");
    }

    #[test]
    fn disagreement_leaves_the_reference_out() {
        let v = sample();
        // Both refused and changed nothing: they agree (the reference applied).
        assert_eq!(v["cases"][0]["disagree"], false);
        // One refused and changed a file, the other applied and changed it the same way.
        assert_eq!(v["cases"][1]["disagree"], true);
        // One skipped, one errored: fewer than two behaviours under test.
        assert_eq!(v["cases"][2]["disagree"], false);
    }

    #[test]
    fn totals_and_pass_rates_leave_skips_out() {
        let v = sample();
        let imp = |i: usize| v["implementations"][i].clone();
        assert_eq!(imp(0)["name"], "reference");
        assert_eq!(imp(0)["reference"], true);
        assert_eq!(
            imp(0)["totals"],
            json!({"pass": 3, "fail": 0, "error": 0, "skip": 0, "notRun": 0, "passRate": 1.0})
        );
        assert_eq!(
            imp(1)["totals"],
            json!({"pass": 0, "fail": 2, "error": 0, "skip": 1, "notRun": 0, "passRate": 0.0})
        );
        assert_eq!(
            imp(1)["byTool"]["workspace.read_file"]["passRate"],
            Value::Null
        );
        assert_eq!(imp(2)["byTool"]["workspace.read_file"]["error"], 1);
        assert_eq!(imp(2)["durationMs"], 1500);
    }
}
