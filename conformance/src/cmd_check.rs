//! `patchspec check`: its arguments, turned into calls of the library: the
//! run setup ([`crate::setup`]: selection, pins, the `--setup` command, the
//! run root, the declaration's checks), the executor
//! ([`crate::transport::launch`]), the run ([`crate::run`]), its reporters
//! ([`crate::report::Reporters`]) and the baseline
//! ([`crate::baseline::Baseline::update`]).

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::baseline::Baseline;
use crate::corpus_source::CorpusArgs;
use crate::error::{Error, ErrorKind};
use crate::report::{Destinations, ReportFormat, Reporters};
use crate::run::{run, RunConfig, Runner};
use crate::select::FilterArgs;
use crate::setup::{
    check_declaration, check_pins, parse_size, run_root, run_setup_command, select, ExecutorArgs,
    JudgingArgs, DEFAULT_MAX_CASE_BYTES, DEFAULT_MAX_RESTARTS,
};
use crate::transport::launch::{launch, Launch, OneshotHello, Transport};

/// `patchspec check`.
#[derive(Clone, Debug, clap::Args)]
pub struct CheckArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Transport to the executor given after `--`.
    #[arg(long, value_enum)]
    pub transport: Option<Transport>,
    /// A shell command (`sh -c`) run once before the first case, e.g. a build.
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Workers, connection timeout, work folder.
    #[command(flatten)]
    pub executor_args: ExecutorArgs,
    /// Timeout, judge and what is left out.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Stop starting cases after the first unexpected outcome.
    #[arg(long)]
    pub fail_fast: bool,
    /// Stop starting cases after N unexpected outcomes (N >= 1; cases left unrun fail the run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fail: Option<u64>,
    /// Known failures (JSON array of {id, outcome, reason?, issue?}).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Rewrite the baseline from this run (refused on a filtered or sharded run, or when
    /// cases were not run; entries of skipped cases are kept).
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
    /// Fail (exit 2) unless the corpus's VERSION is exactly this (an implementation's pin).
    #[arg(long, value_name = "X.Y.Z")]
    pub corpus_version: Option<String>,
    /// Fail (exit 2) unless the corpus's content hash is exactly this (`sha256:<hex>`, as in the reports).
    #[arg(long, value_name = "sha256:HEX")]
    pub corpus_hash: Option<String>,
    /// Accept a run in which every selected case is skipped (by the executor's declaration,
    /// --skip-tool or --skip-tag): exit 0 instead of 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// The most bytes of files an executor may leave in one case's workspace (and, apart,
    /// in the rest of its case directory): bytes, or with `K`, `M`, `G` (powers of 1024).
    /// Past it the case is an error and the runner reads no further.
    #[arg(long, value_name = "SIZE", default_value = DEFAULT_MAX_CASE_BYTES, value_parser = parse_size)]
    pub max_case_bytes: u64,
    /// Session transport: how many times a crashed executor is restarted over the run
    /// (websocket: a started plugin that exited).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RESTARTS)]
    pub max_restarts: usize,
    /// Websocket: listen on ADDR (default 127.0.0.1:0). Without an executor after `--`,
    /// start nothing and wait for a plugin to connect (one inside an IDE).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Human report: list every case (PASS and SKIP too, not only those that break the gate)
    /// and every id of a group of failures that share a cause.
    #[arg(short, long)]
    pub verbose: bool,
    /// The report on stdout.
    #[arg(long, value_enum, default_value = "human")]
    pub report: ReportFormat,
    /// Write the `--report` output to FILE instead of stdout (the human report then stays on stdout).
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// Also write JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The executor's argv, after `--` (no shell). None: the built-in reference engine, in-process
    /// (websocket: the reference plugin). Websocket: `{url}` in an argument becomes the URL to
    /// connect to, also given as $PATCHSPEC_WS_URL. Mcp: an MCP server started per case, with
    /// `{root}` in an argument (and its working directory) the case's workspace.
    #[arg(last = true, value_name = "EXECUTOR")]
    pub executor: Vec<String>,
}

/// Run `patchspec check`; returns the exit code.
pub fn check(args: &CheckArgs) -> Result<i32, Error> {
    let corpus = crate::corpus_source::load(&args.corpus)?;
    check_pins(
        &corpus,
        args.corpus_version.as_deref(),
        args.corpus_hash.as_deref(),
    )?;
    let sel = args.filter.selection();
    let selected = select(&corpus, &sel)?;
    if args.update_baseline && sel.is_partial() {
        return Err(Error::new(ErrorKind::Baseline(format!(
            "refusing to rewrite the baseline from a partial run ({})",
            sel.describe()
        ))));
    }
    let timeout = args.judging.timeout()?;
    let jobs = args.executor_args.jobs();
    let baseline = match &args.baseline {
        Some(path) if args.update_baseline && !path.exists() => Some(Baseline::default()),
        Some(path) => Some(Baseline::load(path).map_err(|e| Error::new(ErrorKind::Baseline(e)))?),
        None => None,
    };
    let websocket = args.transport == Some(Transport::Websocket);
    if args.executor.is_empty() && args.transport.is_some() && !websocket {
        return Err(Error::usage("--transport needs an executor after `--` (without one, the built-in engine runs in-process)"));
    }
    if args.listen.is_some() && !websocket {
        return Err(Error::usage("--listen needs --transport websocket"));
    }
    let connect_timeout = args.executor_args.connect_timeout()?;
    if let Some(cmd) = &args.setup {
        run_setup_command(cmd)?;
    }
    let work_dir = args.executor_args.work_dir();
    let root = run_root(&work_dir, args.max_case_bytes)?;
    let executor = launch(&Launch {
        transport: args.transport.unwrap_or(Transport::Oneshot),
        argv: &args.executor,
        root: &root,
        timeout,
        oneshot_hello: OneshotHello::Within(timeout),
        jobs,
        max_restarts: args.max_restarts,
        listen: args.listen,
        connect_timeout,
        ignore_paths: &args.judging.ignore_path,
    })?;
    let cfg = RunConfig {
        jobs,
        timeout,
        fail_fast: args.fail_fast,
        max_fail: args
            .max_fail
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        baseline,
        skip_tools: args.judging.skip_tool.clone(),
        skip_tags: args.judging.skip_tag.clone(),
        judge: args.judging.judge,
    };
    let runner = Runner::with_root(executor.as_ref(), &cfg, root).map_err(Error::usage)?;
    if let Err(e) = check_declaration(&runner, &corpus, &selected, args.allow_empty) {
        executor.finish();
        return Err(e);
    }
    let corpus_ids: BTreeSet<&str> = corpus.cases.iter().map(|c| c.id.as_str()).collect();
    let stale = cfg
        .baseline
        .as_ref()
        .map(|b| b.stale(&corpus_ids))
        .unwrap_or_default();
    let mut header = cfg.header(
        &corpus,
        runner.info().clone(),
        selected.len(),
        sel.describe(),
        args.baseline.as_ref().map(|p| p.display().to_string()),
    );
    header.work_dir = Some(work_dir.describe());
    let mut reporters = Reporters::open(&Destinations {
        format: args.report,
        report_file: args.report_file.as_deref(),
        junit: args.junit.as_deref(),
        verbose: args.verbose,
    })?;
    let output = run(&runner, &header, &selected, stale, &mut reporters.all());
    drop(reporters);
    if let Some(e) = output.report_error {
        return Err(Error::io(format!("writing a report failed: {e}")));
    }
    if let Some(why) = &output.summary.unusable {
        return Err(Error::new(ErrorKind::ExecutorUnusable(why.clone())));
    }
    if let (true, Some(path)) = (args.update_baseline, &args.baseline) {
        let old = cfg.baseline.clone().unwrap_or_default();
        let new = old.update(
            path,
            output.summary.not_run,
            output.results.iter().map(|r| (r.id.as_str(), r.raw)),
        )?;
        crate::output::eprintln_quietly(format_args!(
            "baseline {} rewritten: {} known failure(s)",
            path.display(),
            new.len()
        ));
        return Ok(crate::exit::OK);
    }
    Ok(output.summary.exit_code())
}
