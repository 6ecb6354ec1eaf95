//! Events: the only thing reporters see of a run.
//!
//! The runner ([`crate::run`]) emits [`Event`]s to every [`Reporter`]:
//! `RunStarted` once, `CaseProgress` as cases complete (completion order,
//! for progress bars), `CaseFinished` once per case in stable id order
//! whatever the parallelism, `CaseAmended` when a violation is pinned on a
//! case after it was reported (the new record replaces the old one), and
//! `RunFinished` once. Reporters never reach
//! into the runner's state, so the human, JSON-lines, JUnit and Markdown
//! reports cannot drift apart.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::baseline::Expected;
use crate::outcome::{Outcome, RawOutcome};
use crate::pattern::Mismatch;
use crate::transport::ExecutorInfo;
use crate::workspace::TreeDiff;

/// What a run is about, known before the first case.
#[derive(Clone, Debug)]
pub struct RunHeader {
    /// The runner's version.
    pub runner_version: String,
    /// The corpus directory.
    pub corpus_root: String,
    /// `corpus/VERSION`, when present.
    pub corpus_version: Option<String>,
    /// SHA-256 over the corpus's case files.
    pub corpus_hash: String,
    /// Cases in the corpus.
    pub corpus_cases: usize,
    /// The executor.
    pub executor: ExecutorInfo,
    /// Cases selected by the filters (and shard).
    pub selected: usize,
    /// The filters, readable.
    pub filters: String,
    /// Parallel workers.
    pub jobs: usize,
    /// Per-case timeout.
    pub timeout: Duration,
    /// The baseline file, when one is used.
    pub baseline: Option<String>,
    /// How answers are judged.
    pub judge: crate::judge::Judge,
    /// Where the case workspaces are ([`crate::workspace::WorkDir::describe`]),
    /// when the run made them.
    pub work_dir: Option<String>,
}

/// Why a case failed or errored.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    /// Result document mismatches.
    pub result: Vec<Mismatch>,
    /// Differences of the workspace tree.
    pub files: TreeDiff,
    /// Changes outside the workspace (sentinel, siblings).
    pub outside: TreeDiff,
    /// For errors: `spawn`, `timeout`, `crash`, `protocol`, `session`, `workspace`
    /// or `step` (a template naming what an earlier step's result does not have).
    pub error_kind: Option<&'static str>,
    /// For errors and skips: the message.
    pub message: Option<String>,
}

/// The record of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// The case's summary.
    pub summary: String,
    /// Its clause references.
    pub spec: Vec<String>,
    /// Its tool.
    pub tool: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The verdict after the baseline.
    pub outcome: Outcome,
    /// What the run found.
    pub raw: RawOutcome,
    /// The baseline's expectation, when listed.
    pub expected: Option<Expected>,
    /// The toolCallId sent (empty for skips).
    pub tool_call_id: String,
    /// The call's params (for reports).
    pub params: Value,
    /// The result document received, when there was a valid answer.
    pub result: Option<Value>,
    /// `data.success` received, when there was a valid answer.
    pub success: Option<bool>,
    /// Why it is not a pass.
    pub detail: Detail,
    /// The executor's stderr during the call (never judged).
    pub stderr: String,
    /// Wall time of the call and the checks.
    pub duration: Duration,
    /// Changed after it was first reported (a violation found after its
    /// call had returned, e.g. a second answer).
    pub amended: bool,
}

/// Counts at the end.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Per outcome.
    pub by_outcome: BTreeMap<Outcome, usize>,
    /// Per tool, per outcome.
    pub by_tool: BTreeMap<String, BTreeMap<Outcome, usize>>,
    /// Selected cases that were not run (fail-fast, max-fail, or an unusable executor).
    pub not_run: usize,
    /// Those cases: (id, tool), in id order.
    pub not_run_cases: Vec<(String, String)>,
    /// Why cases were not run (`--fail-fast`, `--max-fail N`), when they were stopped.
    pub stopped: Option<String>,
    /// Violations blamed on no case (an unknown toolCallId with several calls
    /// in flight, a write outside the workspaces no case can be pinned for).
    pub run_errors: Vec<String>,
    /// Baseline ids that are not in the corpus.
    pub stale: Vec<String>,
    /// When the executor turned out unusable: why.
    pub unusable: Option<String>,
    /// Wall time of the run.
    pub duration: Duration,
}

impl RunSummary {
    /// Count of one outcome.
    pub fn count(&self, o: Outcome) -> usize {
        self.by_outcome.get(&o).copied().unwrap_or(0)
    }

    /// `(passed, failed, skipped)` as in the closing line (see [`Outcome::tally`]).
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for (o, n) in &self.by_outcome {
            match o.tally() {
                crate::outcome::Tally::Passed => t.0 += n,
                crate::outcome::Tally::Failed => t.1 += n,
                crate::outcome::Tally::Skipped => t.2 += n,
            }
        }
        t.1 += self.stale.len() + self.run_errors.len();
        t
    }

    /// Did anything break the gate? Also: selected cases left unrun by
    /// `--fail-fast`/`--max-fail` (never a green run).
    pub fn is_unexpected(&self) -> bool {
        self.unusable.is_some()
            || !self.stale.is_empty()
            || !self.run_errors.is_empty()
            || self.not_run > 0
            || self
                .by_outcome
                .iter()
                .any(|(o, n)| *n > 0 && o.is_unexpected())
    }

    /// The exit code of the finished run: [`crate::exit::UNEXPECTED`] when
    /// anything broke the gate ([`RunSummary::is_unexpected`]), else
    /// [`crate::exit::OK`].
    pub fn exit_code(&self) -> i32 {
        if self.is_unexpected() {
            crate::exit::UNEXPECTED
        } else {
            crate::exit::OK
        }
    }
}

/// One thing that happened.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// Before the first case.
    RunStarted(&'a RunHeader),
    /// A case completed (completion order): `done` of `total`.
    CaseProgress {
        /// The case.
        id: &'a str,
        /// Its verdict.
        outcome: Outcome,
        /// Completed so far.
        done: usize,
        /// Selected.
        total: usize,
    },
    /// A case's full record, in id order.
    CaseFinished(&'a CaseResult),
    /// A case already reported, changed: this record replaces it.
    CaseAmended(&'a CaseResult),
    /// After the last case.
    RunFinished(&'a RunSummary),
}

/// A consumer of events.
pub trait Reporter {
    /// Handle one event. Errors (e.g. a closed pipe) are reported at the end.
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases left unrun are never a green run, whatever else happened.
    #[test]
    fn unrun_cases_and_run_errors_break_the_gate() {
        let mut s = RunSummary::default();
        s.by_outcome.insert(Outcome::Pass, 3);
        assert!(!s.is_unexpected());
        s.not_run = 2;
        assert!(s.is_unexpected());
        s.not_run = 0;
        s.run_errors.push("a stranger's toolCallId".into());
        assert!(s.is_unexpected());
        assert_eq!(s.tally(), (3, 1, 0), "a run error counts as failed");
    }
}
