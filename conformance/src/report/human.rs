//! The human report. **Unstable** layout, except its last line.
//!
//! On a terminal (and not under `CI`), a progress bar (indicatif); otherwise
//! one plain line per case as results arrive in id order. Then, for each case
//! that breaks the gate, its explanation ([`super::render::explain`]); a
//! summary by outcome and by tool; and as the very last line
//! `N passed, N failed, N skipped` (pass and xfail count as passed; fail,
//! error, xpass, stale baseline entries and run-level errors as failed; skip
//! as skipped). Cases left unrun by `--fail-fast`/`--max-fail` are in none of
//! the three: a line before the summary says how many, and the run fails.

use std::io::Write;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::event::{CaseResult, Event, Reporter, RunHeader};
use crate::outcome::{Outcome, ALL_OUTCOMES};
use crate::transport::Declaration;

/// The human reporter.
pub struct Human<W: Write> {
    out: W,
    bar: Option<ProgressBar>,
    problems: Vec<CaseResult>,
}

impl<W: Write> Human<W> {
    /// Write to `out`; `progress` asks for a progress bar (only honoured on a
    /// terminal without `CI` set — the caller decides).
    pub fn new(out: W, progress: bool) -> Human<W> {
        let bar = progress.then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Human {
            out,
            bar,
            problems: Vec::new(),
        }
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
                if let Some(bar) = &self.bar {
                    bar.set_length(h.selected as u64);
                }
                Ok(())
            }
            Event::CaseProgress { id, outcome, .. } => {
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    if outcome.is_unexpected() {
                        bar.println(format!("{} {id}", label(*outcome)));
                    }
                }
                Ok(())
            }
            Event::CaseFinished(r) => {
                if self.bar.is_none() {
                    let note = match (&r.detail.message, r.outcome) {
                        (Some(m), Outcome::Skip | Outcome::Error) => {
                            format!(": {}", m.lines().next().unwrap_or_default())
                        }
                        _ => String::new(),
                    };
                    writeln!(
                        self.out,
                        "{} {} ({} ms){note}",
                        label(r.outcome),
                        r.id,
                        r.duration.as_millis()
                    )?;
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
                match &self.bar {
                    Some(bar) => bar.println(line),
                    None => writeln!(self.out, "{line}")?,
                }
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
                for r in &self.problems {
                    writeln!(
                        self.out,
                        "\n──── {} {} ────",
                        label(r.outcome).trim_end(),
                        r.id
                    )?;
                    write!(self.out, "{}", super::render::explain(r))?;
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
