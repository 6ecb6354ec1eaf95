//! `--report json`: one JSON object per line. **Stable**: fields are only
//! ever added; consumers must ignore fields they do not know.
//!
//! Line 1, the header:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `type` | `"header"` | |
//! | `formatVersion` | integer | `1` |
//! | `runner` | object | `{name: "patchspec", version}` |
//! | `corpus` | object | `{root, version (string or null, from corpus/VERSION), hash ("sha256:<hex>" over the case files), cases (count)}` |
//! | `executor` | object | `{transport ("inprocess", "oneshot", "session" or "websocket"), command (argv), implementation ({name, version, language?, homepage?} or null), tools (array or null), unsupportedTags, privatePaths, declaredBy ("builtin", "hello" or "none"), noHello (why no HELLO was given, or null)}` |
//! | `selected` | integer | cases selected by filters and shard |
//! | `filters` | string | the filters, readable |
//! | `jobs` | integer | parallel workers |
//! | `timeoutMs` | integer | per-case timeout |
//! | `baseline` | string or null | the baseline file |
//! | `judge` | string | how answers were judged: `full` (the result document and the tree) or `outcome` (success or failure and the tree) |
//! | `workDir` | string or null | where the case workspaces were made and why: `PATH (--work-dir\|TMPDIR\|memory\|system temp)` |
//!
//! Then one line per case, in id order:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `type` | `"case"` | |
//! | `id`, `tool`, `summary` | string | from the case |
//! | `spec` | array of strings | clause references |
//! | `outcome` | string | `pass`, `fail`, `error`, `skip`, `xfail`, `xpass` |
//! | `rawOutcome` | string | before the baseline: `pass`, `fail`, `error`, `skip` |
//! | `expected` | string or null | the baseline's `fail`/`error` when listed |
//! | `unexpected` | boolean | does this case break the gate |
//! | `durationMs` | integer | |
//! | `toolCallId` | string | `""` for skips |
//! | `errorKind` | string or null | `spawn`, `timeout`, `crash`, `protocol`, `session`, `workspace` |
//! | `message` | string or null | error or skip reason |
//! | `mismatches` | array | `{path, expected, got}` result-document mismatches |
//! | `files` | object | `{missing, extra, changed}`: arrays of paths in the workspace |
//! | `outside` | object | the same, for changes outside the workspace |
//! | `result` | any or null | the result document received |
//! | `success` | boolean or null | `data.success` received |
//! | `stderr` | string | the executor's stderr during the call (tail) |
//! | `amended` | boolean | a replacement: see below |
//!
//! A violation found after a case was reported (a second answer sent later,
//! session output after an answer) amends it: another `case` line for the
//! same id follows, with `amended: true`; the later line is the case's final
//! record (a consumer that keeps the last line per id is right).
//!
//! Last line, the footer:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `type` | `"footer"` | |
//! | `totals` | object | count per outcome (all six keys) |
//! | `passed`, `failed`, `skipped` | integer | the closing line's numbers (pass+xfail; fail+error+xpass+stale+runErrors; skip) |
//! | `notRun` | integer | selected but not started (fail-fast, max-fail, unusable executor) |
//! | `notRunCases` | array of strings | their ids |
//! | `stopped` | string or null | `--fail-fast` or `--max-fail N` when that left cases unrun (the run fails) |
//! | `runErrors` | array of strings | violations blamed on no case (they fail the run; counted in `failed`) |
//! | `stale` | array of strings | baseline ids not in the corpus |
//! | `unusable` | string or null | why the executor was declared unusable |
//! | `durationMs` | integer | |

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::event::{CaseResult, Event, Reporter, RunHeader, RunSummary};
use crate::outcome::ALL_OUTCOMES;
use crate::workspace::TreeDiff;

/// The JSON-lines reporter.
pub struct JsonLines<W: Write> {
    out: W,
}

impl<W: Write> JsonLines<W> {
    /// Write to `out`.
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines { out }
    }
}

fn paths(d: &TreeDiff) -> Value {
    json!({
        "missing": d.missing.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        "extra": d.extra.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        "changed": d.changed.iter().map(|(p, _, _)| p).collect::<Vec<_>>(),
    })
}

/// The header line's value.
pub fn header(h: &RunHeader) -> Value {
    json!({
        "type": "header",
        "formatVersion": 1,
        "runner": {"name": "patchspec", "version": h.runner_version},
        "corpus": {"root": h.corpus_root, "version": h.corpus_version, "hash": format!("sha256:{}", h.corpus_hash), "cases": h.corpus_cases},
        "executor": {
            "transport": h.executor.transport,
            "command": h.executor.command,
            "implementation": h.executor.implementation,
            "tools": h.executor.tools,
            "unsupportedTags": h.executor.unsupported_tags,
            "privatePaths": h.executor.private_paths,
            "declaredBy": h.executor.declared_by.as_str(),
            "noHello": match &h.executor.declared_by {
                crate::transport::Declaration::Missing(why) => Some(why.as_str()),
                crate::transport::Declaration::BuiltIn | crate::transport::Declaration::Hello => None,
            },
        },
        "selected": h.selected,
        "filters": h.filters,
        "jobs": h.jobs,
        "timeoutMs": h.timeout.as_millis() as u64,
        "baseline": h.baseline,
        "judge": h.judge.as_str(),
        "workDir": h.work_dir,
    })
}

/// A case line's value.
pub fn case(r: &CaseResult) -> Value {
    json!({
        "type": "case",
        "id": r.id,
        "tool": r.tool,
        "summary": r.summary,
        "spec": r.spec,
        "outcome": r.outcome.as_str(),
        "rawOutcome": r.raw.as_str(),
        "expected": r.expected.map(|e| e.as_str()),
        "unexpected": r.outcome.is_unexpected(),
        "durationMs": r.duration.as_millis() as u64,
        "toolCallId": r.tool_call_id,
        "errorKind": r.detail.error_kind,
        "message": r.detail.message,
        "mismatches": r.detail.result.iter().map(|m| json!({"path": m.path, "expected": m.expected, "got": m.got})).collect::<Vec<_>>(),
        "files": paths(&r.detail.files),
        "outside": paths(&r.detail.outside),
        "result": r.result,
        "success": r.success,
        "stderr": r.stderr,
        "amended": r.amended,
    })
}

/// The footer line's value.
pub fn footer(s: &RunSummary) -> Value {
    let totals: Map<String, Value> = ALL_OUTCOMES
        .iter()
        .map(|o| (o.as_str().to_owned(), json!(s.count(*o))))
        .collect();
    let (passed, failed, skipped) = s.tally();
    json!({
        "type": "footer",
        "totals": totals,
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "notRun": s.not_run,
        "notRunCases": s.not_run_cases.iter().map(|(id, _)| id).collect::<Vec<_>>(),
        "stopped": s.stopped,
        "runErrors": s.run_errors,
        "stale": s.stale,
        "unusable": s.unusable,
        "durationMs": s.duration.as_millis() as u64,
    })
}

impl<W: Write> Reporter for JsonLines<W> {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        let line = match event {
            Event::RunStarted(h) => header(h),
            Event::CaseProgress { .. } => return Ok(()),
            Event::CaseFinished(r) | Event::CaseAmended(r) => case(r),
            Event::RunFinished(s) => footer(s),
        };
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}
