//! The human report. **Unstable** layout, except its last line.
//!
//! Quiet when all is well: a header, then one line per case that breaks
//! the gate as results arrive in id order (`[n/N] FAIL id (ms): cause`; a
//! cause already listed three times is not listed again, the explanations
//! count it), then the explanations, and a summary. `--verbose` lists
//! every case (PASS and SKIP too) and every id of a group. On a terminal
//! (and not under `CI`), a progress bar (indicatif) counts `[n/N]` on
//! stderr while the run goes on.
//!
//! The explanations are grouped by cause ([`super::causes`]): a group of
//! several cases prints its cause, a suggestion where one fits (declare
//! fewer tools, `--skip-tool`, `--skip-tag`, `--timeout`), the ids, and one
//! example explained in full ([`super::render::explain`]). Then stale
//! baseline entries, run-level errors, the skip reasons with their counts,
//! a summary by outcome and by tool; and as the very last line
//! `N passed, N failed, N skipped` (pass and xfail count as passed; fail,
//! error, xpass, stale baseline entries and run-level errors as failed; skip
//! as skipped). Cases left unrun by `--fail-fast`/`--max-fail` are in none
//! of the three: a line before the summary says how many, and the run fails.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::causes::{self, Cause};
use crate::event::{CaseResult, Event, Reporter, RunHeader};
use crate::outcome::{Outcome, ALL_OUTCOMES};
use crate::transport::Declaration;

/// How many failures of one cause are listed while the run goes on; the
/// rest are counted in the grouped explanation at the end.
const NOTICES_PER_CAUSE: usize = 3;

/// How many ids of a group are listed without `--verbose`.
const IDS_PER_GROUP: usize = 5;

/// What the human report shows.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Draw a progress bar on stderr (only on a terminal without `CI` —
    /// the caller decides, see [`progress_wanted`]).
    pub progress: bool,
    /// List every case, not only those that break the gate, and every id
    /// of a group of failures.
    pub verbose: bool,
}

/// The human reporter.
pub struct Human<W: Write> {
    out: W,
    bar: Option<ProgressBar>,
    verbose: bool,
    /// Selected cases, and those reported so far (the `[n/N]` of a line).
    total: usize,
    finished: usize,
    timeout: Duration,
    problems: Vec<CaseResult>,
    /// Lines printed per cause while the run went on.
    noticed: HashMap<Cause, usize>,
    /// Skip reason → how many cases.
    skips: BTreeMap<String, usize>,
}

/// A progress bar on stderr counting `[n/N]`, with `prefix` before it (a
/// matrix column's name) and the last finished case after it.
pub fn progress_bar(prefix: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix}{spinner} [{pos}/{len}] {bar:30} {elapsed_precise} {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if !prefix.is_empty() {
        bar.set_prefix(format!("{prefix} "));
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

impl<W: Write> Human<W> {
    /// Write to `out`.
    pub fn new(out: W, options: Options) -> Human<W> {
        Human {
            out,
            bar: options.progress.then(|| progress_bar("")),
            verbose: options.verbose,
            total: 0,
            finished: 0,
            timeout: Duration::ZERO,
            problems: Vec::new(),
            noticed: HashMap::new(),
            skips: BTreeMap::new(),
        }
    }

    /// One line of the running report, above the progress bar when there is one.
    fn line(&mut self, text: &str) -> std::io::Result<()> {
        match &self.bar {
            Some(bar) => {
                let out = &mut self.out;
                bar.suspend(|| writeln!(out, "{text}").and_then(|()| out.flush()))
            }
            None => writeln!(self.out, "{text}"),
        }
    }
}

/// The one-line reason shown after a case's line.
fn note(r: &CaseResult, cause: &Cause) -> String {
    let first = |m: &str| m.lines().next().unwrap_or_default().to_owned();
    match r.outcome {
        Outcome::Skip | Outcome::Error => {
            r.detail.message.as_deref().map(first).unwrap_or_default()
        }
        Outcome::Xpass => "passed, but the baseline lists it as a known failure".into(),
        Outcome::Fail if !r.detail.outside.is_empty() => "wrote outside the workspace".into(),
        Outcome::Fail if cause.key.starts_with("case ") => "the files after the call differ".into(),
        Outcome::Fail => cause.label.clone(),
        Outcome::Pass | Outcome::Xfail => String::new(),
    }
}

/// The header: what runs against what, and the corpus exactly.
pub fn header(h: &RunHeader) -> String {
    let who = match &h.executor.implementation {
        Some(i) => format!("{} {}", i.name, i.version),
        None => h.executor.command.join(" "),
    };
    let version = h.corpus_version.as_deref().unwrap_or("(no VERSION)");
    let mut out = format!(
        "patchspec {}: {} of {} case(s) against {who} [{}], {} job(s), timeout {:.1}s, judge {}\ncorpus {version} sha256:{} ({})\n",
        h.runner_version,
        h.selected,
        h.corpus_cases,
        h.executor.transport,
        h.jobs,
        h.timeout.as_secs_f64(),
        h.judge,
        h.corpus_hash,
        h.corpus_root,
    );
    if let Some(dir) = &h.work_dir {
        out.push_str(&format!("workspaces in {dir}\n"));
    }
    if let Declaration::Missing(why) = &h.executor.declared_by {
        out.push_str(&format!(
            "no HELLO given ({why}): the executor declared nothing; its tools, tags and private paths come from --skip-tool, --skip-tag and --ignore-path only\n"
        ));
    }
    out
}

/// Should a progress bar be drawn (stderr is a terminal and `CI` is unset)?
pub fn progress_wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

fn label(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "PASS ",
        Outcome::Fail => "FAIL ",
        Outcome::Error => "ERROR",
        Outcome::Skip => "SKIP ",
        Outcome::Xfail => "XFAIL",
        Outcome::Xpass => "XPASS",
    }
}

impl<W: Write> Reporter for Human<W> {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::RunStarted(h) => {
                write!(self.out, "{}", header(h))?;
                self.total = h.selected;
                self.timeout = h.timeout;
                if let Some(bar) = &self.bar {
                    bar.set_length(h.selected as u64);
                }
                self.out.flush()
            }
            Event::CaseProgress { id, .. } => {
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    bar.set_message(id.to_string());
                }
                Ok(())
            }
            Event::CaseFinished(r) => {
                self.finished += 1;
                let cause = causes::cause(r);
                let shown = if r.outcome.is_unexpected() {
                    let n = self.noticed.entry(cause.clone()).or_default();
                    *n += 1;
                    *n
                } else {
                    0
                };
                if r.outcome == Outcome::Skip {
                    let why = r.detail.message.clone().unwrap_or_default();
                    *self.skips.entry(why).or_default() += 1;
                }
                let counter = format!("[{}/{}]", self.finished, self.total);
                if self.verbose || (1..=NOTICES_PER_CAUSE).contains(&shown) {
                    let note = note(r, &cause);
                    let note = if note.is_empty() {
                        note
                    } else {
                        format!(": {note}")
                    };
                    self.line(&format!(
                        "{counter} {} {} ({} ms){note}",
                        label(r.outcome),
                        r.id,
                        r.duration.as_millis()
                    ))?;
                } else if shown == NOTICES_PER_CAUSE + 1 {
                    self.line(&format!(
                        "{counter} … {} and further failures of the same cause are not listed; the explanations below group them",
                        r.id
                    ))?;
                }
                if r.outcome.is_unexpected() {
                    self.problems.push((*r).clone());
                }
                Ok(())
            }
            Event::CaseAmended(r) => {
                let line = format!(
                    "{} {} (amended after it was reported): {}",
                    label(r.outcome),
                    r.id,
                    r.detail
                        .message
                        .as_deref()
                        .and_then(|m| m.lines().next())
                        .unwrap_or_default()
                );
                self.line(&line)?;
                self.problems.retain(|p| p.id != r.id);
                if r.outcome.is_unexpected() {
                    self.problems.push((*r).clone());
                    self.problems.sort_by(|a, b| a.id.cmp(&b.id));
                }
                Ok(())
            }
            Event::RunFinished(s) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                for (cause, cases) in causes::group(&self.problems) {
                    let first = cases[0];
                    let kind = label(first.outcome).trim_end();
                    if cases.len() == 1 {
                        writeln!(self.out, "\n──── {kind} {} ────", first.id)?;
                    } else {
                        writeln!(
                            self.out,
                            "\n──── {kind} × {}: {} ────",
                            cases.len(),
                            cause.label
                        )?;
                    }
                    if let Some(hint) = causes::suggestion(&cause, &cases, self.timeout) {
                        writeln!(self.out, "suggestion: {hint}")?;
                    }
                    if cases.len() > 1 {
                        let listed = if self.verbose {
                            cases.len()
                        } else {
                            IDS_PER_GROUP
                        };
                        let ids: Vec<&str> =
                            cases.iter().take(listed).map(|r| r.id.as_str()).collect();
                        let more = cases.len().saturating_sub(listed);
                        let more = if more > 0 {
                            format!(", … and {more} more (--verbose lists them all)")
                        } else {
                            String::new()
                        };
                        writeln!(self.out, "cases:   {}{more}", ids.join(", "))?;
                        writeln!(self.out, "example: {}", first.id)?;
                    }
                    write!(self.out, "{}", super::render::explain(first))?;
                }
                for id in &s.stale {
                    writeln!(
                        self.out,
                        "\nSTALE {id}: listed in the baseline but not in the corpus; remove it"
                    )?;
                }
                for e in &s.run_errors {
                    writeln!(
                        self.out,
                        "\nRUN ERROR (blamed on no case, fails the run): {e}"
                    )?;
                }
                if let Some(u) = &s.unusable {
                    writeln!(self.out, "\nexecutor unusable: {u}")?;
                }
                if let Some(why) = &s.stopped {
                    writeln!(
                        self.out,
                        "\nstopped by {why}: {} selected case(s) not run; the run fails",
                        s.not_run
                    )?;
                }
                if !self.skips.is_empty() {
                    let mut skips: Vec<(&String, &usize)> = self.skips.iter().collect();
                    skips.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
                    writeln!(self.out, "\nskipped (not judged):")?;
                    for (why, n) in skips {
                        writeln!(self.out, "  {n} × {why}")?;
                    }
                }
                writeln!(
                    self.out,
                    "\n── summary ({:.2}s) ──",
                    s.duration.as_secs_f64()
                )?;
                let by: Vec<String> = ALL_OUTCOMES
                    .iter()
                    .filter(|o| s.count(**o) > 0)
                    .map(|o| format!("{o} {}", s.count(*o)))
                    .collect();
                let not_run = if s.not_run > 0 {
                    format!(", not run {}", s.not_run)
                } else {
                    String::new()
                };
                writeln!(
                    self.out,
                    "by outcome: {}{not_run}",
                    if by.is_empty() {
                        "none".into()
                    } else {
                        by.join(", ")
                    }
                )?;
                for (tool, counts) in &s.by_tool {
                    let cells: Vec<String> = ALL_OUTCOMES
                        .iter()
                        .filter_map(|o| counts.get(o).map(|n| format!("{o} {n}")))
                        .collect();
                    writeln!(self.out, "  {tool}: {}", cells.join(", "))?;
                }
                let (p, f, k) = s.tally();
                writeln!(self.out, "{p} passed, {f} failed, {k} skipped")?;
                self.out.flush()
            }
        }
    }
}
