//! `--report markdown`: a summary for a CI step summary
//! (`>> $GITHUB_STEP_SUMMARY`): the executor, the run's identity (the
//! runner, the judge mode, the corpus version and content hash, the transport and
//! the executor's declaration), a table by outcome, a table by tool, the
//! unexpected cases with their first reason (stale baseline entries and
//! run-level errors too), the cases left unrun, and the closing line.

use std::io::Write;

use crate::event::{CaseResult, Event, Reporter};
use crate::outcome::ALL_OUTCOMES;

/// Writes the summary when the run finishes.
pub struct Markdown<W: Write> {
    out: W,
    title: String,
    identity: String,
    unexpected: Vec<(String, String, String)>,
}

impl<W: Write> Markdown<W> {
    /// Write to `out`.
    pub fn new(out: W) -> Markdown<W> {
        Markdown {
            out,
            title: String::new(),
            identity: String::new(),
            unexpected: Vec::new(),
        }
    }
}

fn reason(r: &CaseResult) -> String {
    let text = if let Some(m) = &r.detail.message {
        m.clone()
    } else if let Some(m) = r.detail.result.first() {
        m.to_string()
    } else if !r.detail.outside.is_empty() {
        "wrote outside the workspace".into()
    } else if !r.detail.files.is_empty() {
        "the tree after the call differs".into()
    } else if r.expected.is_some() {
        "passed, but listed in the baseline".into()
    } else {
        String::new()
    };
    text.lines()
        .next()
        .unwrap_or_default()
        .replace('|', "\\|")
        .chars()
        .take(160)
        .collect()
}

impl<W: Write> Reporter for Markdown<W> {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::RunStarted(h) => {
                let who = h
                    .executor
                    .implementation
                    .as_ref()
                    .map(|i| format!("{} {}", i.name, i.version))
                    .unwrap_or_else(|| h.executor.command.join(" "));
                self.title = format!("patchspec conformance: {who} ({})", h.executor.transport);
                let declared = match &h.executor.declared_by {
                    crate::transport::Declaration::BuiltIn => "built in".to_owned(),
                    crate::transport::Declaration::Hello => "by its HELLO".to_owned(),
                    crate::transport::Declaration::Missing(why) => {
                        format!("nothing (no HELLO given: {why})")
                    }
                };
                self.identity = format!(
                    "- **Runner:** patchspec {}\n- **Judge mode:** {}\n- **Corpus:** version {}, `sha256:{}`, {} case(s), {} selected\n- **Executor:** `{}` over `{}`; declared {}\n",
                    h.runner_version,
                    h.judge.describe(),
                    h.corpus_version.as_deref().unwrap_or("none"),
                    h.corpus_hash,
                    h.corpus_cases,
                    h.selected,
                    if h.executor.command.is_empty() {
                        "(built in)".to_owned()
                    } else {
                        h.executor.command.join(" ").replace('`', "'")
                    },
                    h.executor.transport,
                    declared.replace('|', "\\|")
                );
                Ok(())
            }
            Event::CaseProgress { .. } => Ok(()),
            Event::CaseAmended(r) => {
                self.unexpected.retain(|(id, _, _)| id != &r.id);
                if r.outcome.is_unexpected() {
                    self.unexpected
                        .push((r.id.clone(), r.outcome.as_str().to_owned(), reason(r)));
                    self.unexpected.sort();
                }
                Ok(())
            }
            Event::CaseFinished(r) => {
                if r.outcome.is_unexpected() {
                    self.unexpected
                        .push((r.id.clone(), r.outcome.as_str().to_owned(), reason(r)));
                }
                Ok(())
            }
            Event::RunFinished(s) => {
                let out = &mut self.out;
                writeln!(out, "## {}\n", self.title)?;
                writeln!(out, "{}", self.identity)?;
                writeln!(out, "| outcome | cases |\n|---|---:|")?;
                for o in ALL_OUTCOMES {
                    writeln!(out, "| {o} | {} |", s.count(o))?;
                }
                if s.not_run > 0 {
                    writeln!(out, "| not run | {} |", s.not_run)?;
                }
                writeln!(
                    out,
                    "\n| tool | {} |",
                    ALL_OUTCOMES.map(|o| o.as_str()).join(" | ")
                )?;
                writeln!(out, "|---|{}", "---:|".repeat(ALL_OUTCOMES.len()))?;
                for (tool, counts) in &s.by_tool {
                    let cells: Vec<String> = ALL_OUTCOMES
                        .iter()
                        .map(|o| counts.get(o).copied().unwrap_or(0).to_string())
                        .collect();
                    writeln!(out, "| `{tool}` | {} |", cells.join(" | "))?;
                }
                if !self.unexpected.is_empty() || !s.stale.is_empty() || !s.run_errors.is_empty() {
                    writeln!(
                        out,
                        "\n### Unexpected\n\n| case | outcome | reason |\n|---|---|---|"
                    )?;
                    for (id, o, why) in &self.unexpected {
                        writeln!(out, "| `{id}` | {o} | {why} |")?;
                    }
                    for id in &s.stale {
                        writeln!(
                            out,
                            "| `{id}` | stale | listed in the baseline, not in the corpus |"
                        )?;
                    }
                    for e in &s.run_errors {
                        let e: String = e.replace('|', "\\|").chars().take(300).collect();
                        writeln!(out, "| (no case) | run error | {e} |")?;
                    }
                }
                if let Some(why) = &s.stopped {
                    writeln!(
                        out,
                        "\n**Stopped by {why}:** {} selected case(s) not run; the run fails.",
                        s.not_run
                    )?;
                }
                if let Some(u) = &s.unusable {
                    writeln!(out, "\n**Executor unusable:** {u}")?;
                }
                let (p, f, k) = s.tally();
                writeln!(out, "\n{p} passed, {f} failed, {k} skipped")?;
                out.flush()
            }
        }
    }
}
