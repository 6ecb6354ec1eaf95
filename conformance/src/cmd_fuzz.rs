//! `patchspec fuzz`: parse the options, start the executor, run
//! [`crate::fuzz::fuzz`], print the progress and the summary (or one JSON
//! document), and decide the exit code: 0 no disagreement, 1 disagreements
//! (or violations pinned on no call), 2 usage, 3 unusable executor.

use std::io::Write;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use crate::error::{Error, ErrorKind};
use crate::fuzz::{fuzz, FuzzConfig, FuzzReport, Progress};
use crate::judge::Judge;
use crate::setup::{parse_duration, run_root, ExecutorArgs};
use crate::transport::launch::{launch, Launch, OneshotHello, Transport};
use crate::workspace::DEFAULT_WORKSPACE_LIMIT;

/// The report `patchspec fuzz` writes on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FuzzReportFormat {
    /// Readable (unstable layout; the last line is stable).
    Human,
    /// One JSON document (stable: members are only added).
    Json,
}

/// `patchspec fuzz`.
#[derive(Clone, Debug, Args)]
pub struct FuzzArgs {
    /// The seed (default: from the clock, printed). The same seed, generator version and
    /// `--runs` give the same calls.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// How many calls to generate (default 10000 without --time).
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// Stop starting calls after this long: seconds, or with a unit (`500ms`, `30s`, `10m`, `1h`).
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,
    /// Workers, connection timeout, work folder.
    #[command(flatten)]
    pub executor_args: ExecutorArgs,
    /// Transport to the executor given after `--` (default: session, the fastest).
    #[arg(long, value_enum, default_value = "session")]
    pub transport: Transport,
    /// Timeout, judge and what is left out.
    #[command(flatten)]
    pub judging: crate::setup::JudgingArgs,
    /// Write each shrunk disagreement as a case, `DIR/found/<tool>/<hash>.json`
    /// (replay them with `patchspec check --corpus DIR -- EXECUTOR`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Stop starting calls once N distinct disagreements were found.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_found: Option<u64>,
    /// The most candidates one shrink tries (each a reference and an executor call).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub shrink_checks: usize,
    /// Session, websocket: how many times a crashed executor is restarted over the run.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_restarts: usize,
    /// The report on stdout.
    #[arg(long, value_enum, default_value = "human")]
    pub report: FuzzReportFormat,
    /// The executor's argv, after `--` (no shell). None: the built-in reference engine,
    /// in-process (the reference against itself).
    #[arg(last = true, value_name = "EXECUTOR")]
    pub executor: Vec<String>,
}

/// Parse `--time`: what `check` accepts, plus minutes (`10m`) and hours (`1h`).
pub fn parse_time(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let scaled = |num: &str, scale: f64| match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(format!("invalid duration {text:?} (e.g. 30s, 10m, 1h)")),
    };
    if let Some(h) = t.strip_suffix('h') {
        scaled(h, 3600.0)
    } else if let (Some(m), false) = (t.strip_suffix('m'), t.ends_with("ms")) {
        scaled(m, 60.0)
    } else {
        parse_duration(t)
    }
}

fn config(args: &FuzzArgs) -> Result<FuzzConfig, Error> {
    let time = args
        .time
        .as_deref()
        .map(parse_time)
        .transpose()
        .map_err(Error::usage)?;
    let runs = match (args.runs, time) {
        (Some(0), _) => return Err(Error::usage("--runs must be at least 1")),
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(10_000),
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 % 1_000_000_000)
            .unwrap_or(0)
    });
    Ok(FuzzConfig {
        seed,
        runs,
        time,
        jobs: args.executor_args.jobs(),
        timeout: args.judging.timeout()?,
        judge: args.judging.judge,
        skip_tools: args.judging.skip_tool.clone(),
        skip_tags: args.judging.skip_tag.clone(),
        max_found: args
            .max_found
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        shrink_checks: args.shrink_checks,
        out: args.out.clone(),
    })
}

/// The command that reproduces the run.
fn reproduce(cfg: &FuzzConfig, report: &FuzzReport, args: &FuzzArgs) -> String {
    let mut cmd = format!("patchspec fuzz --seed {} --runs {}", cfg.seed, {
        // With --time, the calls made are 0..calls (plus the ones skipped).
        cfg.runs
            .unwrap_or(report.calls + report.not_generated + report.reference_errors.len() as u64)
    });
    if args.transport != Transport::Session {
        cmd.push_str(&format!(" --transport {}", report.info.transport));
    }
    if args.judging.judge != Judge::Full {
        cmd.push_str(" --judge outcome");
    }
    for t in &args.judging.skip_tool {
        cmd.push_str(&format!(" --skip-tool {t}"));
    }
    for t in &args.judging.skip_tag {
        cmd.push_str(&format!(" --skip-tag {t}"));
    }
    if !args.executor.is_empty() {
        cmd.push_str(" -- ");
        cmd.push_str(&args.executor.join(" "));
    }
    cmd
}

fn rate(calls: u64, d: Duration) -> f64 {
    calls as f64 / d.as_secs_f64().max(1e-9)
}

fn human(
    out: &mut dyn Write,
    cfg: &FuzzConfig,
    r: &FuzzReport,
    args: &FuzzArgs,
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
                args.executor.join(" ")
            )?;
        }
    }
    writeln!(out, "reproduce: {}", reproduce(cfg, r, args))?;
    writeln!(
        out,
        "{} calls, {} disagreements, {} found",
        r.calls,
        r.disagreements(),
        r.found.len()
    )
}

fn json_report(cfg: &FuzzConfig, r: &FuzzReport, args: &FuzzArgs) -> serde_json::Value {
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
        "reproduce": reproduce(cfg, r, args),
    })
}

/// Run `patchspec fuzz`; returns the exit code.
pub fn fuzz_command(args: &FuzzArgs) -> Result<i32, Error> {
    let cfg = config(args)?;
    let connect_timeout = args.executor_args.connect_timeout()?;
    let root = run_root(&args.executor_args.work_dir(), DEFAULT_WORKSPACE_LIMIT)?;
    let executor = launch(&Launch {
        transport: args.transport,
        argv: &args.executor,
        root: &root,
        timeout: cfg.timeout,
        oneshot_hello: OneshotHello::Within(cfg.timeout),
        jobs: cfg.jobs,
        max_restarts: args.max_restarts,
        listen: None,
        connect_timeout,
        ignore_paths: &args.judging.ignore_path,
    })?;
    let info = executor.info();
    let tools = crate::fuzz::tools_for(&info, &cfg.skip_tools);
    if tools.is_empty() {
        executor.finish();
        return Err(Error::new(ErrorKind::NothingJudged(format!(
            "nothing to generate: the generators make calls of {}, and the executor declares {} (skipped: {})",
            patchspec_gen::call::TOOLS.join(", "),
            info.tools.map(|t| t.join(", ")).unwrap_or_else(|| "no tools".into()),
            if cfg.skip_tools.is_empty() { "none".into() } else { cfg.skip_tools.join(", ") }
        ))));
    }
    let show_progress = crate::report::human::progress_wanted();
    let mut progress = |p: Progress| {
        if show_progress {
            let mut err = crate::output::stderr();
            let _ = write!(
                err,
                "\rfuzz: {} calls, {} disagreements, {:.0} calls/s ",
                p.calls,
                p.disagreements,
                rate(p.calls, p.elapsed)
            );
            let _ = err.flush();
        }
    };
    let report = fuzz(executor.as_ref(), root, &cfg, &mut progress).map_err(Error::usage)?;
    if show_progress {
        crate::output::eprintln_quietly(format_args!(""));
    }
    if let Some(why) = &report.unusable {
        return Err(Error::new(ErrorKind::ExecutorUnusable(why.clone())));
    }
    let written = match args.report {
        FuzzReportFormat::Human => human(&mut crate::output::stdout(), &cfg, &report, args),
        FuzzReportFormat::Json => {
            let mut out = crate::output::stdout();
            writeln!(out, "{}", json_report(&cfg, &report, args))
        }
    };
    written.map_err(|e| Error::io(format!("writing the report failed: {e}")))?;
    Ok(
        if report.disagreements() > 0 || !report.run_errors.is_empty() {
            crate::exit::UNEXPECTED
        } else {
            crate::exit::OK
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_minutes_and_hours() {
        assert_eq!(parse_time("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_time("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_time("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("30"), Ok(Duration::from_secs(30)));
        assert!(parse_time("m").is_err());
    }
}
