//! `patchspec fuzz`'s report of a finished run: readable ([`human`]) or one
//! JSON document ([`json()`]), each with the command that reproduces the run.

use std::io::Write;
use std::time::Duration;

use serde_json::json;

use super::{FuzzConfig, FuzzReport};
use crate::judge::Judge;

/// How the run was asked for, beyond its [`FuzzConfig`]: what the command
/// that reproduces it must repeat.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    /// The transport was the default one (session): not repeated.
    pub default_transport: bool,
    /// The executor's argv (empty: the built-in reference engine).
    pub executor: &'a [String],
}

/// The command that reproduces the run.
fn reproduce(cfg: &FuzzConfig, report: &FuzzReport, run: &Invocation<'_>) -> String {
    let mut cmd = format!("patchspec fuzz --seed {} --runs {}", cfg.seed, {
        // With --time, the calls made are 0..calls (plus the ones skipped).
        cfg.runs
            .unwrap_or(report.calls + report.not_generated + report.reference_errors.len() as u64)
    });
    if !run.default_transport {
        cmd.push_str(&format!(" --transport {}", report.info.transport));
    }
    if cfg.judge != Judge::Full {
        cmd.push_str(" --judge outcome");
    }
    for t in &cfg.skip_tools {
        cmd.push_str(&format!(" --skip-tool {t}"));
    }
    for t in &cfg.skip_tags {
        cmd.push_str(&format!(" --skip-tag {t}"));
    }
    if !run.executor.is_empty() {
        cmd.push_str(" -- ");
        cmd.push_str(&run.executor.join(" "));
    }
    cmd
}

/// Calls per second.
pub fn rate(calls: u64, d: Duration) -> f64 {
    calls as f64 / d.as_secs_f64().max(1e-9)
}

/// The readable report (unstable layout; its last line is stable).
pub fn human(
    out: &mut dyn Write,
    cfg: &FuzzConfig,
    r: &FuzzReport,
    run: &Invocation<'_>,
) -> std::io::Result<()> {
    let implementation = r
        .info
        .implementation
        .as_ref()
        .map(|i| format!("{} {}", i.name, i.version))
        .unwrap_or_else(|| "an executor without a HELLO".into());
    writeln!(
        out,
        "patchspec fuzz: {implementation} over {}, judge {}, seed {}, generator {}, tools {}",
        r.info.transport,
        cfg.judge,
        cfg.seed,
        patchspec_gen::GENERATOR_VERSION,
        r.tools.join(", ")
    )?;
    writeln!(
        out,
        "{} calls in {:.1} s ({:.0} calls/s, {} job(s)); shrinking {:.1} s",
        r.calls,
        r.duration.as_secs_f64(),
        rate(r.calls, r.duration),
        cfg.jobs,
        r.shrink_duration.as_secs_f64()
    )?;
    writeln!(out, "by tool:")?;
    for (tool, c) in &r.by_tool {
        writeln!(
            out,
            "  {tool:<24} {:>8} calls {:>8} disagreements",
            c.calls, c.disagreements
        )?;
    }
    if !r.by_kind.is_empty() {
        writeln!(out, "by kind of disagreement:")?;
        for (kind, n) in &r.by_kind {
            writeln!(out, "  {kind:<40} {n:>8}")?;
        }
    }
    if !r.by_signature.is_empty() {
        writeln!(out, "by signature (shrunk once each):")?;
        for (signature, n) in &r.by_signature {
            writeln!(out, "  {signature:<40} {n:>8}")?;
        }
    }
    for f in &r.found {
        writeln!(
            out,
            "FOUND {} ({} call(s), first: call {}): {}",
            f.case.id, f.count, f.index, f.signature
        )?;
        if f.recognised {
            writeln!(
                out,
                "  recognised: found before (its signature is in the output directory's index), not shrunk again"
            )?;
        } else {
            writeln!(
                out,
                "  shrunk from {} to {} lines in {} checks{}",
                f.size_before,
                f.size_after,
                f.checks,
                if f.budget_exhausted {
                    " (the shrink budget ran out)"
                } else {
                    ""
                }
            )?;
        }
        for m in &f.result.detail.result {
            writeln!(out, "  {m}")?;
        }
        if !f.result.detail.files.is_empty() {
            for (p, _) in &f.result.detail.files.missing {
                writeln!(out, "  tree: {p} missing")?;
            }
            for (p, _) in &f.result.detail.files.extra {
                writeln!(out, "  tree: {p} not expected")?;
            }
            for (p, _, _) in &f.result.detail.files.changed {
                writeln!(out, "  tree: {p} differs")?;
            }
        }
        if !f.result.detail.outside.is_empty() {
            writeln!(out, "  wrote outside the workspace")?;
        }
        if let Some(m) = &f.result.detail.message {
            writeln!(out, "  {m}")?;
        }
        match &f.written {
            Some(p) if f.known => writeln!(out, "  already in {}", p.display())?,
            Some(p) => writeln!(out, "  written to {}", p.display())?,
            None => {
                let json = serde_json::to_string(&f.case).unwrap_or_default();
                writeln!(out, "  case: {json}")?;
            }
        }
    }
    for e in &r.run_errors {
        writeln!(out, "RUN ERROR {e}")?;
    }
    if !r.reference_errors.is_empty() {
        writeln!(
            out,
            "{} call(s) the reference could not judge were left out (first: call {}: {})",
            r.reference_errors.len(),
            r.reference_errors[0].0,
            r.reference_errors[0].1
        )?;
    }
    if r.not_generated > 0 {
        writeln!(
            out,
            "{} call(s) not generated (every candidate had a skipped tag)",
            r.not_generated
        )?;
    }
    if let Some(s) = &r.stopped {
        writeln!(out, "stopped early: {s}")?;
    }
    if let Some(dir) = &cfg.out {
        if !r.found.is_empty() {
            writeln!(
                out,
                "replay: patchspec check --corpus {} -- {}",
                dir.display(),
                run.executor.join(" ")
            )?;
        }
    }
    writeln!(out, "reproduce: {}", reproduce(cfg, r, run))?;
    writeln!(
        out,
        "{} calls, {} disagreements, {} found",
        r.calls,
        r.disagreements(),
        r.found.len()
    )
}

/// The JSON report (stable: members are only added).
pub fn json(cfg: &FuzzConfig, r: &FuzzReport, run: &Invocation<'_>) -> serde_json::Value {
    json!({
        "seed": cfg.seed,
        "generatorVersion": patchspec_gen::GENERATOR_VERSION,
        "runs": cfg.runs,
        "judge": cfg.judge.as_str(),
        "jobs": cfg.jobs,
        "transport": r.info.transport,
        "implementation": r.info.implementation,
        "tools": r.tools,
        "calls": r.calls,
        "disagreements": r.disagreements(),
        "durationMs": r.duration.as_millis() as u64,
        "callsPerSecond": rate(r.calls, r.duration),
        "shrinkMs": r.shrink_duration.as_millis() as u64,
        "byTool": r.by_tool.iter().map(|(t, c)| (t.clone(), json!({"calls": c.calls, "disagreements": c.disagreements}))).collect::<serde_json::Map<_, _>>(),
        "byKind": r.by_kind,
        "bySignature": r.by_signature,
        "found": r.found.iter().map(|f| json!({
            "id": f.case.id,
            "signature": f.signature,
            "count": f.count,
            "firstCall": f.index,
            "sizeBefore": f.size_before,
            "sizeAfter": f.size_after,
            "checks": f.checks,
            "budgetExhausted": f.budget_exhausted,
            "written": f.written.as_ref().map(|p| p.display().to_string()),
            "known": f.known,
            "recognised": f.recognised,
            "case": f.case,
        })).collect::<Vec<_>>(),
        "referenceErrors": r.reference_errors.len(),
        "notGenerated": r.not_generated,
        "runErrors": r.run_errors,
        "stopped": r.stopped,
        "reproduce": reproduce(cfg, r, run),
    })
}
