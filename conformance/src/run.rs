//! The runner: run selected cases against an executor and emit events.
//!
//! Main types: [`Runner`] (runs one case: materialise, call, judge) and
//! [`run`] (schedules the selection and emits [`Event`]s). Scheduling: cases
//! run serially until the first one that is not skipped has finished (the
//! *probe*); if that case got no valid protocol answer (spawn failure, crash,
//! invalid output) and the baseline does not expect an error for it, the
//! executor is declared unusable and nothing else runs (never for the
//! in-process engine, whose panics are crashes of single cases). The rest runs on a
//! rayon pool of `jobs` threads; results are re-ordered so `CaseFinished`
//! events come in id order whatever the parallelism. `--fail-fast` and
//! `--max-fail` stop starting new cases once enough unexpected outcomes have
//! been seen; cases not started are counted as `not_run`, never as passed.
//! What it leaves out: printing (reporters do that) and exit codes (the
//! caller maps the summary).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::Value;

use crate::baseline::{classify, Baseline};
use crate::case::Case;
use crate::event::{CaseResult, Detail, Event, Reporter, RunHeader, RunSummary};
use crate::judge::Judge;
use crate::outcome::{Outcome, RawOutcome};
use crate::protocol::{SessionMsg, ToolCallMsg};
use crate::transport::{Executor, ExecutorInfo};
use crate::workspace::{expected_tree, CaseDir, PrivatePaths};

/// How to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Parallel workers (at least 1).
    pub jobs: usize,
    /// Per-case timeout.
    pub timeout: Duration,
    /// Stop starting cases after the first unexpected outcome.
    pub fail_fast: bool,
    /// Stop starting cases after this many unexpected outcomes.
    pub max_fail: Option<usize>,
    /// Known failures.
    pub baseline: Option<Baseline>,
    /// Tools to skip (besides those the executor does not declare).
    pub skip_tools: Vec<String>,
    /// Tags to skip (besides those the executor declares unsupported).
    pub skip_tags: Vec<String>,
    /// How answers are judged (`--judge`).
    pub judge: Judge,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            jobs: 1,
            timeout: Duration::from_secs(5),
            fail_fast: false,
            max_fail: None,
            baseline: None,
            skip_tools: Vec::new(),
            skip_tags: Vec::new(),
            judge: Judge::Full,
        }
    }
}

/// Runs single cases against one executor.
pub struct Runner<'a> {
    executor: &'a dyn Executor,
    info: ExecutorInfo,
    cfg: &'a RunConfig,
    private: PrivatePaths,
    session_id: String,
    counter: AtomicU64,
}

impl<'a> Runner<'a> {
    /// A runner; fails when the executor's private paths are not valid globs.
    pub fn new(executor: &'a dyn Executor, cfg: &'a RunConfig) -> Result<Runner<'a>, String> {
        let info = executor.info();
        let private = PrivatePaths::new(&info.private_paths)?;
        let session_id = format!(
            "patchspec-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0)
        );
        Ok(Runner {
            executor,
            info,
            cfg,
            private,
            session_id,
            counter: AtomicU64::new(0),
        })
    }

    /// What the executor declared.
    pub fn info(&self) -> &ExecutorInfo {
        &self.info
    }

    fn skip_reason(&self, case: &Case) -> Option<String> {
        if let Some(tools) = &self.info.tools {
            if !tools.contains(&case.tool) {
                return Some(format!(
                    "the executor does not support tool {:?}",
                    case.tool
                ));
            }
        }
        if self.cfg.skip_tools.contains(&case.tool) {
            return Some(format!("tool {:?} skipped (--skip-tool)", case.tool));
        }
        if let Some(tag) = case
            .tags
            .iter()
            .find(|t| self.info.unsupported_tags.contains(t))
        {
            return Some(format!("the executor does not support tag {tag:?}"));
        }
        if let Some(tag) = case.tags.iter().find(|t| self.cfg.skip_tags.contains(t)) {
            return Some(format!("tag {tag:?} skipped (--skip-tag)"));
        }
        None
    }

    /// The `TOOL_CALL` for a case in a workspace.
    pub fn message(&self, case: &Case, workspace: &std::path::Path) -> ToolCallMsg {
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        ToolCallMsg {
            kind: "TOOL_CALL".into(),
            tool_call_id: format!("{}#{n}", case.id),
            tool_name: case.tool.clone(),
            params: Value::Object(case.call.clone()),
            web_socket_session_id: self.session_id.clone(),
            workspace_root: workspace.to_string_lossy().into_owned(),
            session: SessionMsg {
                active_files: case.given.session.active_files.clone(),
            },
        }
    }

    /// Run one case: materialise, call, judge.
    pub fn run_case(&self, case: &Case) -> CaseResult {
        let started = Instant::now();
        let listed = self.cfg.baseline.as_ref().and_then(|b| b.get(&case.id));
        let mut r = CaseResult {
            id: case.id.clone(),
            summary: case.summary.clone(),
            spec: case.spec.clone(),
            tool: case.tool.clone(),
            outcome: Outcome::Pass,
            raw: RawOutcome::Pass,
            expected: listed.map(|e| e.outcome),
            tool_call_id: String::new(),
            params: Value::Object(case.call.clone()),
            result: None,
            success: None,
            detail: Detail::default(),
            stderr: String::new(),
            duration: Duration::ZERO,
        };
        r.raw = self.judge(case, &mut r);
        r.outcome = classify(r.raw, listed);
        r.duration = started.elapsed();
        r
    }

    fn judge(&self, case: &Case, r: &mut CaseResult) -> RawOutcome {
        let workspace_error = |r: &mut CaseResult, e: std::io::Error| {
            r.detail.error_kind = Some("workspace");
            r.detail.message = Some(format!(
                "the runner could not prepare or inspect the workspace: {e}"
            ));
            RawOutcome::Error
        };
        if let Some(reason) = self.skip_reason(case) {
            r.detail.message = Some(reason);
            return RawOutcome::Skip;
        }
        let dir = match CaseDir::new(&case.given) {
            Ok(d) => d,
            Err(e) => return workspace_error(r, e),
        };
        let msg = self.message(case, dir.root());
        r.tool_call_id = msg.tool_call_id.clone();
        let exchange = self.executor.call(&msg, dir.root(), self.cfg.timeout);
        r.stderr = exchange.stderr;
        let expected = expected_tree(&case.expect);
        let after = dir.check(expected.as_ref(), &self.private);
        let answer = match exchange.answer {
            Ok(a) => a,
            Err(e) => {
                r.detail.error_kind = Some(e.kind());
                r.detail.message = Some(e.to_string());
                if let Ok(after) = after {
                    r.detail.outside = after.outside;
                }
                return RawOutcome::Error;
            }
        };
        let mismatches =
            self.cfg
                .judge
                .result_mismatches(&case.expect.result, answer.success, &answer.result);
        r.result = Some(answer.result);
        r.success = Some(answer.success);
        let after = match after {
            Ok(a) => a,
            Err(e) => return workspace_error(r, e),
        };
        r.detail.result = mismatches;
        r.detail.files = after.files;
        r.detail.outside = after.outside;
        if r.detail.result.is_empty() && r.detail.files.is_empty() && r.detail.outside.is_empty() {
            RawOutcome::Pass
        } else {
            RawOutcome::Fail
        }
    }
}

/// What [`run`] produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Totals.
    pub summary: RunSummary,
    /// Every finished case, in id order.
    pub results: Vec<CaseResult>,
    /// The first reporter error, if any.
    pub report_error: Option<std::io::Error>,
}

fn is_unusable_sign(r: &CaseResult) -> bool {
    match r.outcome {
        Outcome::Error => matches!(
            r.detail.error_kind,
            Some("spawn" | "crash" | "protocol" | "session")
        ),
        Outcome::Pass | Outcome::Fail | Outcome::Skip | Outcome::Xfail | Outcome::Xpass => false,
    }
}

/// Run the selection and emit events to every reporter.
pub fn run(
    runner: &Runner<'_>,
    header: &RunHeader,
    selected: &[&Case],
    stale: Vec<String>,
    reporters: &mut [&mut dyn Reporter],
) -> RunOutput {
    let started = Instant::now();
    let mut report_error = None;
    let mut emit = |e: Event<'_>| {
        for r in reporters.iter_mut() {
            if let Err(err) = r.event(&e) {
                report_error.get_or_insert(err);
            }
        }
    };
    emit(Event::RunStarted(header));
    let total = selected.len();
    let mut summary = RunSummary {
        stale,
        ..RunSummary::default()
    };
    let mut results = Vec::with_capacity(total);
    let mut unexpected = 0usize;
    let stop_after = if runner.cfg.fail_fast {
        Some(1)
    } else {
        runner.cfg.max_fail
    };
    let record = |r: CaseResult,
                  summary: &mut RunSummary,
                  results: &mut Vec<CaseResult>,
                  emit: &mut dyn FnMut(Event<'_>)| {
        emit(Event::CaseFinished(&r));
        *summary.by_outcome.entry(r.outcome).or_default() += 1;
        *summary
            .by_tool
            .entry(r.tool.clone())
            .or_default()
            .entry(r.outcome)
            .or_default() += 1;
        results.push(r);
    };

    // The probe: serially, up to and including the first case that is not skipped.
    let mut next = 0;
    while next < total {
        let r = runner.run_case(selected[next]);
        next += 1;
        emit(Event::CaseProgress {
            id: &r.id,
            outcome: r.outcome,
            done: next,
            total,
        });
        let probed = r.raw != RawOutcome::Skip;
        if r.outcome.is_unexpected() {
            unexpected += 1;
        }
        // The built-in engine cannot be "unusable": a panic is that case's crash.
        if probed && is_unusable_sign(&r) && runner.info.transport != "inprocess" {
            summary.unusable = Some(format!(
                "the first case ({}) got no valid answer: {}",
                r.id,
                r.detail.message.clone().unwrap_or_default()
            ));
        }
        record(r, &mut summary, &mut results, &mut emit);
        if probed {
            break;
        }
    }
    let stopped = summary.unusable.is_some() || stop_after.is_some_and(|n| unexpected >= n);
    if stopped {
        summary.not_run = total - next;
    } else if next < total {
        let rest: Vec<(usize, &Case)> = selected.iter().copied().enumerate().skip(next).collect();
        let cancel = AtomicBool::new(false);
        // Counted by the workers themselves, so no case starts after the
        // limit was reached on the same worker (cases already running on
        // other workers finish and are reported).
        let unexpected_seen = AtomicUsize::new(unexpected);
        let (tx, rx) = mpsc::channel::<(usize, Option<CaseResult>)>();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(runner.cfg.jobs.max(1))
            .thread_name(|i| format!("patchspec-worker-{i}"))
            .build();
        // Without threads (an OS refusal), the same work runs on this thread's scope.
        let pool = pool.ok();
        std::thread::scope(|s| {
            let cancel = &cancel;
            let unexpected_seen = &unexpected_seen;
            s.spawn(move || {
                let work = || {
                    rest.par_iter()
                        .with_max_len(1)
                        .for_each_with(tx, |tx, &(i, case)| {
                            let r = if cancel.load(Ordering::SeqCst) {
                                None
                            } else {
                                Some(runner.run_case(case))
                            };
                            if let Some(r) = &r {
                                if r.outcome.is_unexpected() {
                                    let n = unexpected_seen.fetch_add(1, Ordering::SeqCst) + 1;
                                    if stop_after.is_some_and(|limit| n >= limit) {
                                        cancel.store(true, Ordering::SeqCst);
                                    }
                                }
                            }
                            let _ = tx.send((i, r));
                        })
                };
                match pool {
                    Some(pool) => pool.install(work),
                    None => work(),
                }
            });
            let mut pending: BTreeMap<usize, Option<CaseResult>> = BTreeMap::new();
            let mut done = next;
            for (i, r) in rx {
                if let Some(r) = &r {
                    done += 1;
                    emit(Event::CaseProgress {
                        id: &r.id,
                        outcome: r.outcome,
                        done,
                        total,
                    });
                }
                pending.insert(i, r);
                while let Some(r) = pending.remove(&next) {
                    next += 1;
                    match r {
                        Some(r) => record(r, &mut summary, &mut results, &mut emit),
                        None => summary.not_run += 1,
                    }
                }
            }
            for (_, r) in std::mem::take(&mut pending) {
                match r {
                    Some(r) => record(r, &mut summary, &mut results, &mut emit),
                    None => summary.not_run += 1,
                }
            }
        });
    }
    summary.duration = started.elapsed();
    emit(Event::RunFinished(&summary));
    RunOutput {
        summary,
        results,
        report_error,
    }
}
