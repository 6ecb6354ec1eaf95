//! `patchspec fuzz`: parse the options, start the executor, run
//! [`crate::fuzz::fuzz`], print the progress and the report
//! ([`crate::fuzz::report`]), and decide the exit code: 0 no disagreement, 1 disagreements
//! (or violations pinned on no call), 2 usage, 3 unusable executor.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::error::{Error, ErrorKind};
use crate::fuzz::report::{human, json as json_report, rate, Invocation};
use crate::fuzz::{fuzz, FuzzConfig, Progress};
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
    let invocation = Invocation {
        default_transport: args.transport == Transport::Session,
        executor: &args.executor,
    };
    let written = match args.report {
        FuzzReportFormat::Human => human(&mut crate::output::stdout(), &cfg, &report, &invocation),
        FuzzReportFormat::Json => {
            let mut out = crate::output::stdout();
            writeln!(out, "{}", json_report(&cfg, &report, &invocation))
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
