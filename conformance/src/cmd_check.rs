//! `patchspec check`: load the corpus, select, start the executor, run,
//! report, and decide the exit code.
//!
//! This is where command-line choices become a [`RunConfig`], an executor
//! (started by [`crate::transport::launch`]) and a set of reporters; the run
//! itself is [`crate::run`].

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::baseline::Baseline;
use crate::case::Corpus;
use crate::cli::{CheckArgs, CorpusArgs, FilterArgs, ReportFormat, Transport};
use crate::error::{Error, ErrorKind};
use crate::event::{Reporter, RunHeader};
use crate::report::{human::Human, jsonl::JsonLines, junit::Junit, markdown::Markdown};
use crate::run::{known_tools, nothing_judged, run, RunConfig, Runner};
use crate::select::Selection;
use crate::transport::launch::{launch, Launch, OneshotHello};
use crate::workspace::WorkDir;

/// Load the corpus named by the arguments (a directory, or the one compiled
/// into the binary: see [`crate::corpus_source`]).
pub fn load_corpus(args: &CorpusArgs) -> Result<Corpus, Error> {
    crate::corpus_source::load(args)
}

/// The selection the filter arguments describe.
pub fn selection(f: &FilterArgs) -> Selection {
    Selection {
        run: f.run.clone(),
        skip: f.skip.clone(),
        tools: f.tool.clone(),
        tags: f.tag.clone(),
        shard: f.shard,
    }
}

/// Parse `5`, `2.5`, `500ms`, `5s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(ms) = t.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = t.strip_suffix('s') {
        (s, 1.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(format!("invalid duration {text:?} (e.g. 5, 2.5s, 500ms)")),
    }
}

/// Parse a size: `1048576`, `512K`, `256M`, `1G` (powers of 1024), at least 1.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, scale) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    match num.parse::<u64>().ok().and_then(|n| n.checked_mul(scale)) {
        Some(bytes) if bytes > 0 => Ok(bytes),
        _ => Err(format!(
            "invalid size {text:?} (bytes, or with K, M, G: e.g. 268435456, 256M, 1G)"
        )),
    }
}

fn run_setup(cmd: &str) -> Result<(), Error> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| {
            Error::new(ErrorKind::ExecutorUnusable(format!(
                "setup command could not start: {e}"
            )))
        })?;
    if !status.success() {
        return Err(Error::new(ErrorKind::ExecutorUnusable(format!(
            "setup command {cmd:?} failed: {}",
            crate::transport::process::describe_status(status)
        ))));
    }
    Ok(())
}

/// `--corpus-version` / `--corpus-hash`: the corpus must be the one pinned.
pub fn check_pins(corpus: &Corpus, args: &CheckArgs) -> Result<(), Error> {
    let found = || {
        format!(
            "{} is version {} (sha256:{})",
            corpus.root.display(),
            corpus
                .version
                .as_deref()
                .unwrap_or("<none: no VERSION file>"),
            corpus.content_hash
        )
    };
    if let Some(want) = &args.corpus_version {
        if corpus.version.as_deref() != Some(want.trim()) {
            return Err(Error::new(ErrorKind::CorpusPin(format!(
                "the corpus is not the pinned version {want}: {}; check out the pinned corpus (its git tag) or update the pin",
                found()
            ))));
        }
    }
    if let Some(want) = &args.corpus_hash {
        let hex = want.trim().strip_prefix("sha256:").unwrap_or(want.trim());
        if !hex.eq_ignore_ascii_case(&corpus.content_hash) {
            return Err(Error::new(ErrorKind::CorpusPin(format!(
                "the corpus's content is not the pinned {want}: {}; its cases differ from the pinned ones",
                found()
            ))));
        }
    }
    Ok(())
}

/// Run `patchspec check`; returns the exit code.
pub fn check(args: &CheckArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    check_pins(&corpus, args)?;
    let sel = selection(&args.filter);
    let selected = sel.apply(&corpus.cases).map_err(Error::usage)?;
    if selected.is_empty() {
        return Err(Error::new(ErrorKind::NothingSelected(format!(
            "{} case(s) in {}, {} selected ({})",
            corpus.cases.len(),
            corpus.root.display(),
            0,
            sel.describe()
        ))));
    }
    if args.update_baseline && sel.is_partial() {
        return Err(Error::new(ErrorKind::Baseline(format!(
            "refusing to rewrite the baseline from a partial run ({})",
            sel.describe()
        ))));
    }
    let timeout = parse_duration(&args.judging.timeout).map_err(Error::usage)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
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
    let connect_timeout = parse_duration(&args.connect_timeout).map_err(Error::usage)?;
    if let Some(cmd) = &args.setup {
        run_setup(cmd)?;
    }
    // Every case directory, and the executor's TMPDIR and HOME, live under
    // one per-run root that the outside check watches.
    let work_dir = WorkDir::choose(args.work_dir.as_deref());
    let mut root = work_dir.run_root().map_err(|e| Error::io(e.to_string()))?;
    root.set_workspace_limit(args.max_case_bytes);
    let root = Arc::new(root);
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
    // Strict before the first case: a declaration that names a tool nobody
    // knows, or one that leaves nothing to judge, is not a green run.
    let refused = crate::run::check_declared_tools(runner.info(), &known_tools(&corpus.cases))
        .map_err(|why| Error::new(ErrorKind::ExecutorUnusable(why)))
        .and_then(|()| match nothing_judged(&runner, &selected) {
            Some(why) if !args.allow_empty => Err(Error::new(ErrorKind::NothingJudged(why))),
            _ => Ok(()),
        });
    if let Err(e) = refused {
        executor.finish();
        return Err(e);
    }
    let corpus_ids: BTreeSet<&str> = corpus.cases.iter().map(|c| c.id.as_str()).collect();
    let stale = cfg
        .baseline
        .as_ref()
        .map(|b| b.stale(&corpus_ids))
        .unwrap_or_default();
    let mut header = RunHeader::new(
        &corpus,
        runner.info().clone(),
        selected.len(),
        sel.describe(),
        &cfg,
        args.baseline.as_ref().map(|p| p.display().to_string()),
    );
    header.work_dir = Some(work_dir.describe());

    // Reporters: the chosen format on stdout (or --report-file); the human
    // report on stdout too unless stdout is taken, then on stderr.
    let stdout_taken = args.report != ReportFormat::Human && args.report_file.is_none();
    let human_out: Box<dyn Write> = if stdout_taken {
        Box::new(crate::output::stderr())
    } else {
        Box::new(crate::output::stdout())
    };
    let mut human = Human::new(
        human_out,
        crate::report::human::Options {
            progress: crate::report::human::progress_wanted(),
            verbose: args.verbose,
        },
    );
    let machine_out = || -> Result<Box<dyn Write>, Error> {
        match &args.report_file {
            Some(p) => Ok(Box::new(std::io::BufWriter::new(
                std::fs::File::create(p)
                    .map_err(|e| Error::io(format!("cannot write {}: {e}", p.display())))?,
            ))),
            None => Ok(Box::new(crate::output::stdout())),
        }
    };
    let mut json = None;
    let mut markdown = None;
    match args.report {
        ReportFormat::Human => {}
        ReportFormat::Json => json = Some(JsonLines::new(machine_out()?)),
        ReportFormat::Markdown => markdown = Some(Markdown::new(machine_out()?)),
    }
    let mut junit = args.junit.clone().map(Junit::new);
    let mut reporters: Vec<&mut dyn Reporter> = vec![&mut human];
    if let Some(j) = json.as_mut() {
        reporters.push(j);
    }
    if let Some(m) = markdown.as_mut() {
        reporters.push(m);
    }
    if let Some(j) = junit.as_mut() {
        reporters.push(j);
    }
    let output = run(&runner, &header, &selected, stale, &mut reporters);
    drop(reporters);
    if let Some(e) = output.report_error {
        return Err(Error::io(format!("writing a report failed: {e}")));
    }
    if let Some(why) = &output.summary.unusable {
        return Err(Error::new(ErrorKind::ExecutorUnusable(why.clone())));
    }
    if args.update_baseline {
        let path = args
            .baseline
            .as_ref()
            .expect("clap requires --baseline with --update-baseline");
        let old = cfg.baseline.clone().unwrap_or_default();
        if output.summary.not_run > 0 {
            return Err(Error::new(ErrorKind::Baseline(format!(
                "refusing to rewrite the baseline: {} case(s) were not run",
                output.summary.not_run
            ))));
        }
        let new = old.rewritten(output.results.iter().map(|r| (r.id.as_str(), r.raw)));
        std::fs::write(path, new.to_json())
            .map_err(|e| Error::io(format!("cannot write {}: {e}", path.display())))?;
        crate::output::eprintln_quietly(format_args!(
            "baseline {} rewritten: {} known failure(s)",
            path.display(),
            new.len()
        ));
        return Ok(crate::exit::OK);
    }
    Ok(crate::exit::for_summary(&output.summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size(" 2g "), Ok(2 << 30));
        for bad in ["", "0", "M", "-1M", "1.5M", "1T", "99999999999G"] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains("invalid size"), "{bad}: {err}");
        }
    }
}
