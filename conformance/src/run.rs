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
//! been seen; cases not started are counted as `not_run`, never as passed,
//! and make the run exit non-zero.
//!
//! Every case runs in its own directory under one per-run root
//! ([`RunRoot`]), watched around the call; with `-j 1` the root's shared part
//! too. After the last case the executor is finished
//! ([`Executor::finish`]); violations it pins on calls that had already
//! returned ([`Executor::late_blames`]) turn those cases into errors (a
//! `CaseAmended` event when the case was already reported), and violations
//! blamed on no case — the executor's [`Executor::run_errors`], and writes in
//! the root's shared part no case was blamed for — are run-level errors that
//! fail the run. What it leaves out: printing (reporters do that) and exit
//! codes (the caller maps the summary).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::Value;

use crate::baseline::{classify, Baseline};
use crate::case::Case;
use crate::event::{CaseResult, Detail, Event, Reporter, RunHeader, RunSummary};
use crate::judge::Judge;
use crate::outcome::{Outcome, RawOutcome};
use crate::protocol::ToolCallMsg;
use crate::transport::{CallDirs, Executor, ExecutorInfo, LateBlame, TransportError};
use crate::workspace::{expected_tree, PrivatePaths, RunRoot};

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

impl RunConfig {
    /// The header of a run of `selected` cases of `corpus` against
    /// `executor` with these settings: built here alone, for `check`, each
    /// column of `matrix`, and `lint`.
    pub fn header(
        &self,
        corpus: &crate::case::Corpus,
        executor: ExecutorInfo,
        selected: usize,
        filters: String,
        baseline: Option<String>,
    ) -> RunHeader {
        RunHeader {
            runner_version: env!("CARGO_PKG_VERSION").into(),
            corpus_root: corpus.root.display().to_string(),
            corpus_version: corpus.version.clone(),
            corpus_hash: corpus.content_hash.clone(),
            corpus_cases: corpus.cases.len(),
            executor,
            selected,
            filters,
            jobs: self.jobs,
            timeout: self.timeout,
            baseline,
            judge: self.judge,
            work_dir: None,
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
    root: Arc<RunRoot>,
    /// The `$unique` values of the run so far (IDs fresh per call).
    unique: crate::pattern::RunUnique,
}

impl<'a> Runner<'a> {
    /// A runner with a fresh per-run root; fails when the executor's private
    /// paths are not valid globs or the root cannot be made.
    pub fn new(executor: &'a dyn Executor, cfg: &'a RunConfig) -> Result<Runner<'a>, String> {
        let root =
            RunRoot::new().map_err(|e| format!("cannot create the per-run directory: {e}"))?;
        Runner::with_root(executor, cfg, Arc::new(root))
    }

    /// A runner whose cases live under `root` (the one the executor was
    /// given its environment in).
    pub fn with_root(
        executor: &'a dyn Executor,
        cfg: &'a RunConfig,
        root: Arc<RunRoot>,
    ) -> Result<Runner<'a>, String> {
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
            unique: crate::pattern::RunUnique::default(),
            root,
        })
    }

    /// What the executor declared.
    pub fn info(&self) -> &ExecutorInfo {
        &self.info
    }

    /// Why this case will be skipped (the executor's declaration,
    /// `--skip-tool`, `--skip-tag`), or `None` when it will be judged.
    pub fn skip_reason(&self, case: &Case) -> Option<String> {
        for tool in case_tools(case) {
            if let Some(tools) = &self.info.tools {
                if !tools.iter().any(|t| t == tool) {
                    return Some(format!("the executor does not support tool {tool:?}"));
                }
            }
            if self.cfg.skip_tools.iter().any(|t| t == tool) {
                return Some(format!("tool {tool:?} skipped (--skip-tool)"));
            }
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
        self.message_for(case, &case.tool, &case.call, workspace)
    }

    /// The `TOOL_CALL` of one call of a case (a step's, or the case's own
    /// with its templates resolved).
    fn message_for(
        &self,
        case: &Case,
        tool: &str,
        params: &serde_json::Map<String, Value>,
        workspace: &std::path::Path,
    ) -> ToolCallMsg {
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        ToolCallMsg {
            kind: "TOOL_CALL".into(),
            tool_call_id: format!("{}#{n}", case.id),
            tool_name: tool.to_string(),
            params: Value::Object(params.clone()),
            web_socket_session_id: self.session_id.clone(),
            workspace_root: workspace.to_string_lossy().into_owned(),
            session: case.given.session.clone(),
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
            tags: case.tags.clone(),
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
            amended: false,
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
        let mut dir = match self.root.case_dir(&case.given) {
            Ok(d) => d,
            Err(e) => return workspace_error(r, e),
        };
        // Calls do not overlap with -j 1: the root's shared part is then
        // watched around each call too.
        let expected = expected_tree(&case.expect);
        if let Err(e) = dir.arm(self.cfg.jobs == 1, expected.is_none()) {
            return workspace_error(r, e);
        }
        let dirs = CallDirs {
            workspace: dir.root(),
            env: dir.env(),
        };
        let mut step_mismatches = Vec::new();
        let mut step_results = Vec::new();
        // `{{workspaceRoot}}`: the path exactly as `message_for` sends it.
        let root_text = dir.root().to_string_lossy().into_owned();
        for (i, step) in case.steps.iter().enumerate() {
            let failed = |r: &mut CaseResult, kind: &'static str, message: String| {
                r.detail.error_kind = Some(kind);
                r.detail.message = Some(format!("steps[{i}] ({}): {message}", step.tool));
                RawOutcome::Error
            };
            let params =
                match crate::steps::substitute(&step.call, resolved(&step_results, &root_text)) {
                    Ok(p) => p,
                    Err(e) => return failed(r, "step", e),
                };
            let msg = self.message_for(case, &step.tool, &params, dir.root());
            let exchange = self.executor.call(&msg, &dirs, self.cfg.timeout);
            r.stderr.push_str(&exchange.stderr);
            let answer = match exchange.answer {
                Ok(a) => a,
                Err(e) => return failed(r, e.kind(), e.to_string()),
            };
            let pattern = match crate::steps::substitute_any(
                &step.expect.result,
                resolved(&step_results, &root_text),
            ) {
                Ok(p) => p,
                Err(e) => return failed(r, "step", format!("expect.result: {e}")),
            };
            for mut m in self.cfg.judge.document_mismatches(
                crate::judge::Answered {
                    case: &case.id,
                    tool: &step.tool,
                    pattern: &pattern,
                    files: None,
                },
                answer.success,
                &answer.result,
                &self.unique,
            ) {
                m.path = format!("steps[{i}].{}", m.path);
                step_mismatches.push(m);
            }
            step_results.push(answer.result);
        }
        let call = match crate::steps::substitute(&case.call, resolved(&step_results, &root_text)) {
            Ok(p) => p,
            Err(e) => {
                r.detail.error_kind = Some("step");
                r.detail.message = Some(format!("call: {e}"));
                return RawOutcome::Error;
            }
        };
        if call != case.call {
            r.params = Value::Object(call.clone());
        }
        let msg = self.message_for(case, &case.tool, &call, dir.root());
        r.tool_call_id = msg.tool_call_id.clone();
        let exchange = self.executor.call(&msg, &dirs, self.cfg.timeout);
        r.stderr.push_str(&exchange.stderr);
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
        let pattern = match crate::steps::substitute_any(
            &case.expect.result,
            resolved(&step_results, &root_text),
        ) {
            Ok(p) => p,
            Err(e) => {
                r.detail.error_kind = Some("step");
                r.detail.message = Some(format!("expect.result: {e}"));
                return RawOutcome::Error;
            }
        };
        // The expected tree's bytes are only read by full judgement's `$sha256Of`.
        let files = (self.cfg.judge == crate::judge::Judge::Full)
            .then(|| crate::judge::expected_files(case));
        let mut mismatches = step_mismatches;
        mismatches.extend(self.cfg.judge.document_mismatches(
            crate::judge::Answered {
                case: &case.id,
                tool: &case.tool,
                pattern: &pattern,
                files: files.as_ref(),
            },
            answer.success,
            &answer.result,
            &self.unique,
        ));
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

/// The tool names a run knows: the engine's and every tool a case of the
/// corpus uses (a generated corpus may test a tool of its own).
pub fn known_tools(cases: &[Case]) -> BTreeSet<String> {
    patchspec_engine::dispatch::SUPPORTED_TOOLS
        .iter()
        .map(|t| (*t).to_owned())
        .chain(cases.iter().flat_map(case_tools).map(str::to_owned))
        .collect()
}

/// Every tool a case calls: its steps' and its own.
pub fn case_tools(case: &Case) -> impl Iterator<Item = &str> {
    case.steps
        .iter()
        .map(|s| s.tool.as_str())
        .chain(std::iter::once(case.tool.as_str()))
}

/// The known name closest to `name` by edit distance (Levenshtein, ignoring
/// case), when it is close enough to be a likely misspelling: at most a
/// third of the name's length, and at least 2 edits are always allowed.
pub fn closest<'k>(name: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let lower = name.to_lowercase();
    let allowed = (lower.chars().count() / 3).max(2);
    known
        .into_iter()
        .map(|k| (strsim::levenshtein(&lower, &k.to_lowercase()), k))
        .filter(|(d, _)| *d <= allowed)
        .min()
        .map(|(_, k)| k)
}

/// Strictness about the declaration: an executor that declares a tool no
/// case and no engine knows has misspelled it (or declared a tool the corpus
/// cannot test), and every case of the tool it meant would be skipped
/// without a word. `Err` names each unknown tool, the closest known name,
/// and the known names.
pub fn check_declared_tools(info: &ExecutorInfo, known: &BTreeSet<String>) -> Result<(), String> {
    let Some(tools) = &info.tools else {
        return Ok(());
    };
    let unknown: Vec<String> = tools
        .iter()
        .filter(|t| !known.contains(*t))
        .map(|t| match closest(t, known.iter().map(String::as_str)) {
            Some(k) => format!("{t:?} (did you mean {k:?}?)"),
            None => format!("{t:?}"),
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    Err(format!(
        "its HELLO declares {} the corpus does not know: {}; the known tools are {}. Declare only tools of that list, spelled exactly",
        if unknown.len() == 1 { "a tool" } else { "tools" },
        unknown.join(", "),
        known.join(", ")
    ))
}

/// When no selected case would be judged — every one skipped by the
/// executor's declaration, `--skip-tool` or `--skip-tag` — why, as one
/// line: each skip reason with its count, and what the executor declared.
/// `None` when at least one case will be judged.
pub fn nothing_judged(runner: &Runner<'_>, selected: &[&Case]) -> Option<String> {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for case in selected {
        *reasons.entry(runner.skip_reason(case)?).or_default() += 1;
    }
    let mut by_count: Vec<(String, usize)> = reasons.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let reasons: Vec<String> = by_count
        .iter()
        .map(|(why, n)| format!("{n} × {why}"))
        .collect();
    let declared = match &runner.info.tools {
        Some(tools) => format!("; the executor declares the tools {}", tools.join(", ")),
        None => String::new(),
    };
    Some(format!(
        "all {} selected case(s) would be skipped, none judged: {}{declared}",
        selected.len(),
        reasons.join("; ")
    ))
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

/// The books of a run: counts, results in id order, and blames that
/// arrived before the case they name was recorded.
struct Ledger {
    summary: RunSummary,
    results: Vec<CaseResult>,
    by_call: HashMap<String, usize>,
    unresolved: Vec<LateBlame>,
}

impl Ledger {
    /// Count a record in (`add`) or out of the totals.
    fn count(&mut self, r: &CaseResult, add: bool) {
        fn bump<K: Ord + Clone>(map: &mut BTreeMap<K, usize>, key: &K, add: bool) {
            let n = map.get(key).copied().unwrap_or(0);
            match (add, n) {
                (true, _) => {
                    map.insert(key.clone(), n + 1);
                }
                (false, 0 | 1) => {
                    map.remove(key);
                }
                (false, _) => {
                    map.insert(key.clone(), n - 1);
                }
            }
        }
        bump(&mut self.summary.by_outcome, &r.outcome, add);
        let tool = self.summary.by_tool.entry(r.tool.clone()).or_default();
        bump(tool, &r.outcome, add);
    }

    fn record(&mut self, mut r: CaseResult, runner: &Runner<'_>, emit: &mut dyn FnMut(Event<'_>)) {
        if !r.tool_call_id.is_empty() {
            let mut i = 0;
            while i < self.unresolved.len() {
                if self.unresolved[i].tool_call_id == r.tool_call_id {
                    let b = self.unresolved.remove(i);
                    runner.amend(&mut r, &b.error);
                } else {
                    i += 1;
                }
            }
            self.by_call
                .insert(r.tool_call_id.clone(), self.results.len());
        }
        emit(Event::CaseFinished(&r));
        self.count(&r, true);
        self.results.push(r);
    }

    fn blame(&mut self, b: LateBlame, runner: &Runner<'_>, emit: &mut dyn FnMut(Event<'_>)) {
        let Some(&i) = self.by_call.get(&b.tool_call_id) else {
            self.unresolved.push(b);
            return;
        };
        let mut r = self.results[i].clone();
        self.count(&r, false);
        runner.amend(&mut r, &b.error);
        self.count(&r, true);
        emit(Event::CaseAmended(&r));
        self.results[i] = r;
    }
}

impl Runner<'_> {
    /// A violation found after the case's call had returned: the case is an
    /// error now, whatever it was.
    fn amend(&self, r: &mut CaseResult, error: &TransportError) {
        let note = error.to_string();
        r.detail.message = Some(match r.detail.message.take() {
            Some(m) if r.raw == RawOutcome::Error => format!("{m}; then {note}"),
            _ => note,
        });
        r.detail.error_kind = Some(error.kind());
        r.raw = RawOutcome::Error;
        let listed = self.cfg.baseline.as_ref().and_then(|b| b.get(&r.id));
        r.outcome = classify(r.raw, listed);
        r.amended = true;
    }
}

/// Run the selection, finish the executor, and emit events to every reporter.
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
    let mut books = Ledger {
        summary: RunSummary {
            stale,
            ..RunSummary::default()
        },
        results: Vec::with_capacity(total),
        by_call: HashMap::new(),
        unresolved: Vec::new(),
    };
    let mut unexpected = 0usize;
    let stop_after = if runner.cfg.fail_fast {
        Some(1)
    } else {
        runner.cfg.max_fail
    };
    let stop_reason = || {
        if runner.cfg.fail_fast {
            "--fail-fast".to_owned()
        } else {
            format!("--max-fail {}", runner.cfg.max_fail.unwrap_or(0))
        }
    };
    let not_run = |books: &mut Ledger, case: &Case| {
        books.summary.not_run += 1;
        books
            .summary
            .not_run_cases
            .push((case.id.clone(), case.tool.clone()));
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
            books.summary.unusable = Some(format!(
                "the first case ({}) got no valid answer: {}",
                r.id,
                r.detail.message.clone().unwrap_or_default()
            ));
        }
        books.record(r, runner, &mut emit);
        if probed {
            break;
        }
    }
    let stopped_by_failures = stop_after.is_some_and(|n| unexpected >= n);
    if books.summary.unusable.is_some() || stopped_by_failures {
        for case in &selected[next..] {
            not_run(&mut books, case);
        }
        if stopped_by_failures && next < total {
            books.summary.stopped = Some(stop_reason());
        }
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
                    match r {
                        Some(r) => books.record(r, runner, &mut emit),
                        None => not_run(&mut books, selected[next]),
                    }
                    next += 1;
                }
                for b in runner.executor.late_blames() {
                    books.blame(b, runner, &mut emit);
                }
            }
            for (i, r) in std::mem::take(&mut pending) {
                match r {
                    Some(r) => books.record(r, runner, &mut emit),
                    None => not_run(&mut books, selected[i]),
                }
            }
        });
        if books.summary.not_run > 0 {
            books.summary.stopped = Some(stop_reason());
        }
    }
    // The executor's last words (session: output after BYE) may still blame
    // a case; then what no case can be blamed for.
    runner.executor.finish();
    for b in runner.executor.late_blames() {
        books.blame(b, runner, &mut emit);
    }
    for b in std::mem::take(&mut books.unresolved) {
        books.summary.run_errors.push(format!(
            "{} (for toolCallId={}, which no case of this run sent)",
            b.error, b.tool_call_id
        ));
    }
    books
        .summary
        .run_errors
        .extend(runner.executor.run_errors());
    match runner.root.unattributed() {
        Ok(d) if d.is_empty() => {}
        Ok(d) => {
            let paths: Vec<String> = d
                .missing
                .iter()
                .chain(&d.extra)
                .map(|(p, _)| p.clone())
                .chain(d.changed.iter().map(|(p, _, _)| p.clone()))
                .collect();
            books.summary.run_errors.push(format!(
                "wrote outside the workspaces, in the per-run directory {}: {} (no case could be blamed: {}; with -j 1 each such write is pinned on its case)",
                runner.root.path().display(),
                paths.join(", "),
                if runner.cfg.jobs == 1 {
                    "written between calls, at start-up or after the last call"
                } else {
                    "calls overlapped"
                }
            ));
        }
        Err(e) => books.summary.run_errors.push(format!(
            "the runner could not inspect the per-run directory {}: {e}",
            runner.root.path().display()
        )),
    }
    books.summary.duration = started.elapsed();
    emit(Event::RunFinished(&books.summary));
    RunOutput {
        summary: books.summary,
        results: books.results,
        report_error,
    }
}

/// What a case's templates resolve against.
fn resolved<'a>(results: &'a [Value], workspace_root: &'a str) -> crate::steps::Resolved<'a> {
    crate::steps::Resolved {
        results,
        workspace_root,
    }
}
