//! `patchspec fuzz`: differential fuzzing of any executor against the
//! reference engine, with shrinking, turning every disagreement into a
//! corpus case.
//!
//! Main function: [`fuzz`]. Call number `i` of a run is generated from the
//! seed and `i` alone ([`patchspec_gen::call::generate`]), among the tools
//! the executor declares (minus `--skip-tool`) and without the tags it does
//! not support (plus `--skip-tag`). Each call is run through the reference
//! engine in-process ([`reference::Reference`]), which makes it a case whose
//! expectation is the reference's answer, and then through the executor by
//! [`Runner::run_case`], the very code `patchspec check` judges a corpus
//! case with (`--judge full|outcome`, the tree, writes outside the
//! workspace). Calls run on `jobs` threads; the first runs alone, as the
//! probe: an executor that gives it no valid answer is unusable.
//!
//! A call the executor does not pass is a [`Disagreement`]; its
//! [signature](Disagreement::signature) (what differed) groups the
//! disagreements of a run, and the report counts the calls of each
//! ([`FuzzReport::by_signature`]). The first of each signature is shrunk
//! ([`shrink`], bounded by [`FuzzConfig::shrink_checks`]) and, with an
//! output directory, written as a case `found/<tool>/<hash>`: the id is
//! a hash of the shrunk workspace and call, so a case found twice (in one
//! run or across runs) is written once, and `patchspec check --corpus DIR`
//! replays it. The directory also keeps an index of the signatures found
//! (`.fuzz-signatures.json`, signature → case id): a signature already in
//! it is not shrunk again. Its case is run once instead (one call, where a
//! shrink costs up to `shrink_checks`), and if the executor still fails it,
//! the disagreement is counted under that case as known; if it now passes,
//! the signature is shrunk anew.
//!
//! The finished run's report, readable or JSON, is [`report`]; the command
//! prints it and the [`Progress`]. What it leaves out: the IDE tools (no
//! generator yet).

pub mod reference;
pub mod report;
pub mod shrink;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use patchspec_engine::hash::sha256_hex;
use patchspec_gen::call::{generate, GenCall, TOOLS};
use patchspec_gen::GENERATOR_VERSION;
use serde_json::{Map, Value};

use crate::case::{Case, Given};
use crate::event::CaseResult;
use crate::judge::Judge;
use crate::outcome::RawOutcome;
use crate::run::{RunConfig, Runner};
use crate::transport::{Executor, ExecutorInfo};
use crate::workspace::RunRoot;
use reference::{given_of, Reference};
use shrink::{Budget, Candidate};

/// How to fuzz.
#[derive(Clone, Debug)]
pub struct FuzzConfig {
    /// The run's seed.
    pub seed: u64,
    /// Stop after this many calls.
    pub runs: Option<u64>,
    /// Stop starting calls after this long.
    pub time: Option<Duration>,
    /// Parallel workers.
    pub jobs: usize,
    /// Per-call timeout.
    pub timeout: Duration,
    /// How answers are judged.
    pub judge: Judge,
    /// Tools not to generate (besides those the executor does not declare).
    pub skip_tools: Vec<String>,
    /// Tags not to generate (besides those the executor declares unsupported).
    pub skip_tags: Vec<String>,
    /// Stop starting calls once this many distinct disagreements were seen.
    pub max_found: Option<usize>,
    /// The most candidates one shrink tries.
    pub shrink_checks: usize,
    /// Where found cases are written (`DIR/found/<tool>/<hash>.json`).
    pub out: Option<PathBuf>,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        FuzzConfig {
            seed: 0,
            runs: Some(10_000),
            time: None,
            jobs: 1,
            timeout: Duration::from_secs(5),
            judge: Judge::Full,
            skip_tools: Vec::new(),
            skip_tags: Vec::new(),
            max_found: None,
            shrink_checks: 500,
            out: None,
        }
    }
}

/// One call the executor did not pass.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// The call's index in the run.
    pub index: u64,
    /// The case the reference made of it.
    pub case: Case,
    /// The executor's record.
    pub result: CaseResult,
}

/// A mismatch path with its array indexes and object keys that name
/// files generalised: `$.errors[2].code` → `$.errors[*].code`.
fn general_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' {
            out.push_str("[*]");
            for d in chars.by_ref() {
                if d == ']' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Disagreement {
    /// What differed, as short stable kinds: `success` (the answer's
    /// success), a result member's JSON path (`$.error.kind`), `tree` (the
    /// workspace after the call), `outside` (a write outside it), or
    /// `error:<kind>` (no valid answer: `timeout`, `crash`, `protocol`, …).
    pub fn kinds(&self) -> Vec<String> {
        kinds_of(&self.result)
    }

    /// The tool and the kinds: disagreements with one signature are taken
    /// for one bug (only the first is shrunk).
    pub fn signature(&self) -> String {
        format!("{} {}", self.case.tool, self.kinds().join(" "))
    }
}

fn kinds_of(r: &CaseResult) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    if r.raw == RawOutcome::Error {
        kinds.push(format!(
            "error:{}",
            r.detail.error_kind.unwrap_or("unknown")
        ));
    }
    for m in &r.detail.result {
        let k = if m.path.starts_with("TOOL_RESULT.data.success") || m.path == "$.success" {
            "success".to_string()
        } else {
            general_path(&m.path)
        };
        kinds.push(k);
    }
    if !r.detail.files.is_empty() {
        kinds.push("tree".into());
    }
    if !r.detail.outside.is_empty() {
        kinds.push("outside".into());
    }
    kinds.sort();
    kinds.dedup();
    kinds
}

/// A found case: a shrunk disagreement.
#[derive(Clone, Debug)]
pub struct Found {
    /// The signature it stands for.
    pub signature: String,
    /// How many calls of the run had this signature.
    pub count: usize,
    /// The first call that had it.
    pub index: u64,
    /// The shrunk case (id `found/<tool>/<hash>`).
    pub case: Case,
    /// The executor's record on the shrunk case.
    pub result: CaseResult,
    /// Size (lines) before and after shrinking.
    pub size_before: usize,
    /// Size after.
    pub size_after: usize,
    /// Candidates tried.
    pub checks: usize,
    /// The shrink stopped at its budget.
    pub budget_exhausted: bool,
    /// Where it was written, when it was (`None`: no `--out`).
    pub written: Option<PathBuf>,
    /// It was already there (found before).
    pub known: bool,
    /// Its signature was in the output directory's index and its case still
    /// disagrees: it was recognised, not shrunk (`checks` is 0).
    pub recognised: bool,
}

/// Calls and disagreements of one tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolCount {
    /// Calls judged.
    pub calls: u64,
    /// Calls the executor did not pass.
    pub disagreements: u64,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    /// What the executor declared.
    pub info: ExecutorInfo,
    /// The tools generated.
    pub tools: Vec<String>,
    /// Calls judged.
    pub calls: u64,
    /// Calls the generator could not make without a skipped tag.
    pub not_generated: u64,
    /// Calls the reference could not judge (each with the reason), left out.
    pub reference_errors: Vec<(u64, String)>,
    /// Per tool.
    pub by_tool: BTreeMap<String, ToolCount>,
    /// Disagreements per kind (a call counts once for each of its kinds).
    pub by_kind: BTreeMap<String, u64>,
    /// Disagreements per signature (every signature of the run, also those
    /// `--max-found` left unshrunk).
    pub by_signature: BTreeMap<String, u64>,
    /// One shrunk case per signature, by first index.
    pub found: Vec<Found>,
    /// Violations pinned on no call (session: output after the last answer).
    pub run_errors: Vec<String>,
    /// Why the run stopped early (`--max-found`), if it did.
    pub stopped: Option<String>,
    /// The executor gave the first call no valid answer.
    pub unusable: Option<String>,
    /// Wall time of the calls (shrinking not included).
    pub duration: Duration,
    /// Wall time of shrinking.
    pub shrink_duration: Duration,
}

impl FuzzReport {
    /// Disagreements over the run.
    pub fn disagreements(&self) -> u64 {
        self.by_tool.values().map(|c| c.disagreements).sum()
    }
}

/// What a running fuzz tells its caller, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Calls judged so far.
    pub calls: u64,
    /// Disagreements so far.
    pub disagreements: u64,
    /// Time since the start.
    pub elapsed: Duration,
}

/// The tools a run generates: those of the generators the executor
/// declares (all when it declares none), minus the skipped ones.
pub fn tools_for(info: &ExecutorInfo, skip: &[String]) -> Vec<&'static str> {
    TOOLS
        .iter()
        .copied()
        .filter(|t| info.tools.as_ref().is_none_or(|d| d.iter().any(|x| x == t)))
        .filter(|t| !skip.iter().any(|s| s == t))
        .collect()
}

/// The id of a found case: its tool and a hash of what it gives and calls.
pub fn found_id(tool: &str, given: &Given, call: &Map<String, Value>) -> String {
    let canonical = serde_json::to_string(&(tool, given, call)).unwrap_or_default();
    format!("found/{tool}/{}", &sha256_hex(canonical.as_bytes())[..16])
}

/// Everything one run shares between its workers.
struct Shared<'a> {
    runner: Runner<'a>,
    reference: Reference,
    cfg: &'a FuzzConfig,
    tools: Vec<&'static str>,
    unsupported: Vec<String>,
}

enum Judged {
    Pass(&'static str),
    Disagree(Box<Disagreement>),
    NotGenerated,
    ReferenceError(String),
}

impl Shared<'_> {
    fn call(&self, index: u64) -> Option<GenCall> {
        let accept = |c: &GenCall| !c.tags().iter().any(|t| self.unsupported.contains(t));
        generate(self.cfg.seed, index, &self.tools, &accept)
    }

    /// The reference's case for a workspace and call.
    fn case(
        &self,
        id: String,
        tool: &str,
        tags: Vec<String>,
        c: &Candidate,
    ) -> Result<Case, String> {
        self.reference
            .case(
                id,
                String::new(),
                tool,
                tags,
                c.given.clone(),
                c.call.clone(),
            )
            .map_err(|e| e.0)
    }

    fn judge(&self, index: u64) -> Judged {
        let Some(call) = self.call(index) else {
            return Judged::NotGenerated;
        };
        let candidate = Candidate {
            given: given_of(&call),
            call: call.params.clone(),
        };
        let id = format!("fuzz/{}/{index}", call.tool);
        let case = match self.case(id, call.tool, call.tags(), &candidate) {
            Ok(c) => c,
            Err(e) => return Judged::ReferenceError(e),
        };
        let result = self.runner.run_case(&case);
        match result.raw {
            RawOutcome::Pass | RawOutcome::Skip => Judged::Pass(call.tool),
            _ => Judged::Disagree(Box::new(Disagreement {
                index,
                case,
                result,
            })),
        }
    }

    /// The disagreement `d` recognised as the already found case `id` (from
    /// the output directory's index), when that case is there and the
    /// executor still fails it the same way; `None` otherwise (shrink it).
    fn recognise(&self, d: &Disagreement, count: usize, id: &str) -> Option<Found> {
        let dir = self.cfg.out.as_ref()?;
        let path = dir.join(format!("{id}.json"));
        let case = crate::case::parse_case(&std::fs::read(&path).ok()?, Some(id)).ok()?;
        let result = self.runner.run_case(&case);
        let still = result.raw != RawOutcome::Pass
            && result.raw != RawOutcome::Skip
            && kinds_of(&result).iter().any(|k| d.kinds().contains(k));
        if !still {
            return None;
        }
        let size_after = shrink::size(&Candidate {
            given: case.given.clone(),
            call: case.call.clone(),
        });
        Some(Found {
            signature: d.signature(),
            count,
            index: d.index,
            size_before: shrink::size(&Candidate {
                given: d.case.given.clone(),
                call: d.case.call.clone(),
            }),
            size_after,
            checks: 0,
            budget_exhausted: false,
            case,
            result,
            written: Some(path),
            known: true,
            recognised: true,
        })
    }

    /// Shrink a disagreement and write it (with `--out`).
    fn found(&self, d: &Disagreement, count: usize) -> Result<Found, String> {
        let signature = d.signature();
        let tool = d.case.tool.clone();
        let start = Candidate {
            given: d.case.given.clone(),
            call: d.case.call.clone(),
        };
        let kinds = d.kinds();
        let mut check = |c: &Candidate| {
            let Ok(case) = self.case(format!("fuzz/{tool}/shrink"), &tool, d.case.tags.clone(), c)
            else {
                return false;
            };
            let r = self.runner.run_case(&case);
            r.raw != RawOutcome::Pass
                && r.raw != RawOutcome::Skip
                && kinds_of(&r).iter().any(|k| kinds.contains(k))
        };
        let shrunk = shrink::shrink(
            start,
            Budget {
                checks: self.cfg.shrink_checks,
            },
            &mut check,
        );
        let c = &shrunk.candidate;
        let id = found_id(&tool, &c.given, &c.call);
        // What still differs in the shrunk case.
        let shrunk_kinds = {
            let case = self
                .case(format!("fuzz/{tool}/shrink"), &tool, d.case.tags.clone(), c)
                .map_err(|e| format!("the reference on the shrunk case: {e}"))?;
            let k = kinds_of(&self.runner.run_case(&case));
            if k.is_empty() {
                kinds.clone()
            } else {
                k
            }
        };
        let kinds = shrunk_kinds.join(", ");
        let summary = format!(
            "found by patchspec fuzz (seed {}, call {}, generator {GENERATOR_VERSION}): the executor differed from the reference in {kinds}",
            self.cfg.seed, d.index
        );
        let mut tags = d.case.tags.clone();
        tags.insert(0, "found".into());
        let mut case = self
            .reference
            .case(id, summary, &tool, tags, c.given.clone(), c.call.clone())
            .map_err(|e| e.0)?;
        // Tags that describe the shrunk case, not the call it came from.
        let still = patchspec_gen_tags(&case);
        case.tags.retain(|t| t == "found" || still.contains(t));
        let result = self.runner.run_case(&case);
        let (written, known) = match &self.cfg.out {
            Some(dir) => {
                let (path, known) = write_case(dir, &case)?;
                (Some(path), known)
            }
            None => (None, false),
        };
        Ok(Found {
            signature,
            count,
            index: d.index,
            case,
            result,
            size_before: shrunk.size_before,
            size_after: shrunk.size_after,
            checks: shrunk.checks,
            budget_exhausted: shrunk.budget_exhausted,
            written,
            known,
            recognised: false,
        })
    }
}

/// The tags of a case as the generator would give them (after shrinking,
/// some no longer apply).
fn patchspec_gen_tags(case: &Case) -> Vec<String> {
    let call = GenCall {
        tool: "",
        params: case.call.clone(),
        files: case
            .given
            .files
            .iter()
            .map(|(p, c)| (p.clone(), c.bytes(), c.mode().unwrap_or(0o644)))
            .collect(),
        dirs: case.given.dirs.clone(),
        symlinks: case
            .given
            .symlinks
            .iter()
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect(),
        active_files: case.given.session.active_files.clone(),
        create_file_max_bytes: case.given.session.limits.create_file_max_bytes,
    };
    call.tags()
}

/// The index of the signatures found in an output directory:
/// `DIR/.fuzz-signatures.json`, an object signature → case id (a top-level
/// dot file, which `patchspec check --corpus DIR` does not take for a case).
pub fn signature_index_path(dir: &Path) -> PathBuf {
    dir.join(".fuzz-signatures.json")
}

/// The signature index of `dir` (empty when there is none or it cannot be
/// read: then every signature is shrunk, as without an index).
pub fn read_signature_index(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read(signature_index_path(dir))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Write the signature index of `dir` (as `write_case` writes a case).
pub fn write_signature_index(dir: &Path, index: &BTreeMap<String, String>) -> Result<(), String> {
    let path = signature_index_path(dir);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(index).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Write `case` as `DIR/<id>.json` unless it is there; `(path, already there)`.
pub fn write_case(dir: &Path, case: &Case) -> Result<(PathBuf, bool), String> {
    let path = dir.join(format!("{}.json", case.id));
    if path.is_file() {
        return Ok((path, true));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(case).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, false))
}

/// Run the fuzz: generate, judge, shrink, write. `progress` is called from
/// the calling thread about every 100 ms while calls run.
pub fn fuzz(
    executor: &dyn Executor,
    root: Arc<RunRoot>,
    cfg: &FuzzConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<FuzzReport, String> {
    let run_cfg = RunConfig {
        jobs: cfg.jobs.max(1),
        timeout: cfg.timeout,
        judge: cfg.judge,
        ..RunConfig::default()
    };
    let runner = Runner::with_root(executor, &run_cfg, root)?;
    let info = runner.info().clone();
    let tools = tools_for(&info, &cfg.skip_tools);
    let mut unsupported = info.unsupported_tags.clone();
    unsupported.extend(cfg.skip_tags.iter().cloned());
    let shared = Shared {
        reference: Reference::new()
            .map_err(|e| format!("cannot create the reference's directory: {e}"))?,
        runner,
        cfg,
        tools: tools.clone(),
        unsupported,
    };
    let mut report = FuzzReport {
        info,
        tools: tools.iter().map(|t| t.to_string()).collect(),
        ..FuzzReport::default()
    };
    let started = Instant::now();
    let book = Mutex::new(Book::default());
    let record = |index: u64, judged: Judged, book: &Mutex<Book>| {
        let mut b = book.lock().unwrap_or_else(|p| p.into_inner());
        b.record(index, judged);
    };
    // The probe: call 0, alone.
    let probe = shared.judge(0);
    if let Judged::Disagree(d) = &probe {
        let r = &d.result;
        let unusable = r.raw == RawOutcome::Error
            && matches!(
                r.detail.error_kind,
                Some("spawn" | "crash" | "protocol" | "session")
            )
            && report.info.transport != "inprocess";
        if unusable {
            report.unusable = Some(format!(
                "the first call got no valid answer: {}",
                r.detail.message.clone().unwrap_or_default()
            ));
            executor.finish();
            return Ok(report);
        }
    }
    record(0, probe, &book);
    let next = AtomicU64::new(1);
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(1);
    let out_of_runs = |i: u64| cfg.runs.is_some_and(|n| i >= n);
    let out_of_time = || cfg.time.is_some_and(|t| started.elapsed() >= t);
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.max(1) {
            s.spawn(|| loop {
                if stop.load(Ordering::SeqCst) || out_of_time() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if out_of_runs(i) {
                    return;
                }
                let judged = shared.judge(i);
                record(i, judged, &book);
                done.fetch_add(1, Ordering::SeqCst);
                if let Some(max) = cfg.max_found {
                    let b = book.lock().unwrap_or_else(|p| p.into_inner());
                    if b.first.len() >= max {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
            });
        }
        // Progress from this thread until the workers are done.
        let finished = || {
            stop.load(Ordering::SeqCst) || out_of_time() || out_of_runs(next.load(Ordering::SeqCst))
        };
        loop {
            let b = book.lock().unwrap_or_else(|p| p.into_inner());
            let p = Progress {
                calls: b.calls,
                disagreements: b.disagreements(),
                elapsed: started.elapsed(),
            };
            drop(b);
            progress(p);
            if finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    report.duration = started.elapsed();
    let mut book = book.into_inner().unwrap_or_else(|p| p.into_inner());
    if cfg.max_found.is_some_and(|m| book.first.len() >= m) {
        report.stopped = Some(format!(
            "--max-found {}: stopped after call {}",
            cfg.max_found.unwrap_or(0),
            next.load(Ordering::SeqCst)
                .min(cfg.runs.unwrap_or(u64::MAX))
        ));
    }
    // Shrink the first disagreement of each signature, in call order.
    let shrink_started = Instant::now();
    let mut firsts: Vec<(String, Disagreement)> =
        std::mem::take(&mut book.first).into_iter().collect();
    firsts.sort_by_key(|(_, d)| d.index);
    if let Some(max) = cfg.max_found {
        firsts.truncate(max);
    }
    let mut index = cfg
        .out
        .as_deref()
        .map(read_signature_index)
        .unwrap_or_default();
    for (signature, d) in firsts {
        let count = book.counts.get(&signature).copied().unwrap_or(1);
        let recognised = index
            .get(&signature)
            .and_then(|id| shared.recognise(&d, count, id));
        let found = match recognised {
            Some(f) => f,
            None => shared.found(&d, count)?,
        };
        index.insert(signature, found.case.id.clone());
        report.found.push(found);
    }
    if let Some(dir) = &cfg.out {
        if !report.found.is_empty() {
            write_signature_index(dir, &index)?;
        }
    }
    report.shrink_duration = shrink_started.elapsed();
    executor.finish();
    for b in executor.late_blames() {
        report
            .run_errors
            .push(format!("{} (for toolCallId={})", b.error, b.tool_call_id));
    }
    report.run_errors.extend(executor.run_errors());
    report.calls = book.calls;
    report.not_generated = book.not_generated;
    report.reference_errors = book.reference_errors;
    report.by_tool = book.by_tool;
    report.by_kind = book.by_kind;
    report.by_signature = book
        .counts
        .into_iter()
        .map(|(s, n)| (s, n as u64))
        .collect();
    Ok(report)
}

/// The books of a run, under one lock.
#[derive(Default)]
struct Book {
    calls: u64,
    not_generated: u64,
    reference_errors: Vec<(u64, String)>,
    by_tool: BTreeMap<String, ToolCount>,
    by_kind: BTreeMap<String, u64>,
    /// The first disagreement (lowest index) of each signature.
    first: BTreeMap<String, Disagreement>,
    counts: BTreeMap<String, usize>,
}

impl Book {
    fn disagreements(&self) -> u64 {
        self.by_tool.values().map(|c| c.disagreements).sum()
    }

    fn record(&mut self, index: u64, judged: Judged) {
        match judged {
            Judged::NotGenerated => self.not_generated += 1,
            Judged::ReferenceError(e) => self.reference_errors.push((index, e)),
            Judged::Pass(tool) => {
                self.calls += 1;
                self.by_tool.entry(tool.to_string()).or_default().calls += 1;
            }
            Judged::Disagree(d) => {
                self.calls += 1;
                for k in d.kinds() {
                    *self.by_kind.entry(k).or_default() += 1;
                }
                let t = self.by_tool.entry(d.case.tool.clone()).or_default();
                t.calls += 1;
                t.disagreements += 1;
                let sig = d.signature();
                *self.counts.entry(sig.clone()).or_default() += 1;
                match self.first.get(&sig) {
                    Some(old) if old.index < index => {}
                    _ => {
                        self.first.insert(sig, *d);
                    }
                }
            }
        }
    }
}
