//! Running `patchspec matrix`: the selection against the reference engine
//! and every executor, one after the other, and the matrix written.
//!
//! Each executor is started over the request's transport by
//! [`crate::transport::launch`], the code `check` starts its executor with;
//! one that cannot start is a column found unusable on its first case. A
//! oneshot executor is first sent a `HELLO` unless `--no-hello`, as `check`
//! does; a valid answer declares its tools, unsupported tags, private paths
//! and identity, anything else leaves it undeclared (every selected case is
//! run) and the reason is shown in the outputs. Each run goes through [`crate::run::run`]
//! exactly as `check` does (same judging, same workspaces, same probe for an
//! unusable executor); its results become one column of the
//! [`Matrix`]. While a column runs, its progress goes to
//! stderr (`ColumnProgress`); a column that turns out unusable shows the
//! case that made it so, with the executor's stderr, as `check` does.
//! Outputs, in the request's `out` folder: `matrix.json`, `matrix.html`,
//! `badges/<NAME>.json` for each column that ran (an unusable column has no
//! pass rate, so no badge, and an old one is removed); with `markdown`
//! also the Markdown rendering. With `--judge outcome` and `full_out`,
//! every answer is also judged in full ([`super::rejudge`])
//! and that matrix written to `full_out` the same way: both modes from one run.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::case::{Case, Corpus};
use crate::corpus_source::CorpusArgs;
use crate::error::Error;
use crate::event::RunSummary;
use crate::event::{Event, Reporter};
use crate::judge::Judge;
use crate::output::eprintln_quietly as say;
use crate::report::human::{progress_bar, progress_wanted};
use crate::run::{known_tools, run, RunConfig, RunOutput, Runner};
use crate::select::FilterArgs;
use crate::setup::{run_root, select, ExecutorArgs, JudgingArgs, DEFAULT_MAX_RESTARTS};
use crate::transport::inprocess::InProcess;
use crate::transport::launch::{launch_or_unstarted, Launch, OneshotHello, Transport};
use crate::transport::{Declaration, Executor};
use crate::workspace::{RunRoot, WorkDir, DEFAULT_WORKSPACE_LIMIT};

use super::{badge, html, json, markdown, rejudge, Column, Matrix, Source};

/// The name of the built-in reference engine's column.
pub const REFERENCE: &str = "reference";

/// One implementation to check besides the reference engine (`--executor NAME=CMD`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorSpec {
    /// The column name: `[A-Za-z0-9._-]+`, also the badge file's name.
    pub name: String,
    /// The command, split into argv without a shell.
    pub argv: Vec<String>,
}

/// What `patchspec matrix` runs and where it writes the matrix: its
/// arguments, parsed.
#[derive(Clone, Copy, Debug)]
pub struct MatrixRequest<'a> {
    /// The corpus.
    pub corpus: &'a CorpusArgs,
    /// Which of its cases run.
    pub filter: &'a FilterArgs,
    /// The implementations besides the reference engine, one column each,
    /// in this order, their names told apart.
    pub executors: &'a [ExecutorSpec],
    /// The transport to every executor.
    pub transport: Transport,
    /// Send oneshot executors no HELLO first (nothing declared).
    pub no_hello: bool,
    /// Workers, connection timeout, work folder, the same for every column.
    pub executor_args: &'a ExecutorArgs,
    /// Timeout, judge and what is left out, the same for every column.
    pub judging: &'a JudgingArgs,
    /// The folder for `matrix.json`, `matrix.html` and `badges/` (created).
    pub out: &'a Path,
    /// Also the Markdown rendering, to this file.
    pub markdown: Option<&'a Path>,
    /// With an outcome judge: also judge every answer in full and write that
    /// matrix here like `out`.
    pub full_out: Option<&'a Path>,
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text)
        .map_err(|e| Error::io(format!("cannot write {}: {e}", path.display())))
}

struct Plan<'a> {
    cfg: RunConfig,
    corpus: &'a Corpus,
    filters: String,
    selected: &'a [&'a Case],
    known_tools: BTreeSet<String>,
    work_dir: WorkDir,
}

/// A column's progress on stderr while it runs: a bar `NAME [n/N]` on a
/// terminal (not under `CI`), otherwise a line at every tenth of the
/// selection, so a long column never looks stuck.
struct ColumnProgress<'a> {
    name: &'a str,
    bar: Option<indicatif::ProgressBar>,
    step: usize,
}

impl<'a> ColumnProgress<'a> {
    fn new(name: &'a str) -> ColumnProgress<'a> {
        ColumnProgress {
            name,
            bar: progress_wanted().then(|| progress_bar(&format!("matrix: {name}:"))),
            step: 1,
        }
    }
}

impl Reporter for ColumnProgress<'_> {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::RunStarted(h) => {
                self.step = (h.selected / 10).max(1);
                if let Some(bar) = &self.bar {
                    bar.set_length(h.selected as u64);
                }
            }
            Event::CaseProgress {
                id, done, total, ..
            } => match &self.bar {
                Some(bar) => {
                    bar.inc(1);
                    bar.set_message(id.to_string());
                }
                None if done % self.step == 0 || done == total => {
                    say(format_args!("matrix: {}: [{done}/{total}]", self.name));
                }
                None => {}
            },
            Event::RunFinished(_) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
            }
            Event::CaseFinished(_) | Event::CaseAmended(_) => {}
        }
        Ok(())
    }
}

/// Run one executor; returns its column and results.
fn run_column(
    plan: &Plan<'_>,
    name: &str,
    executor: &dyn Executor,
    declared_by: String,
    root: Arc<RunRoot>,
) -> Result<(Column, Vec<crate::event::CaseResult>), Error> {
    let runner = Runner::with_root(executor, &plan.cfg, root).map_err(Error::usage)?;
    let info = runner.info().clone();
    let mut header = plan.cfg.header(
        plan.corpus,
        info.clone(),
        plan.selected.len(),
        plan.filters.clone(),
        None,
    );
    header.work_dir = Some(plan.work_dir.describe());
    say(format_args!(
        "matrix: {name}: running {} case(s)…",
        plan.selected.len()
    ));
    let started = Instant::now();
    let output = match crate::run::check_declared_tools(&info, &plan.known_tools) {
        Ok(()) => {
            let mut progress = ColumnProgress::new(name);
            run(
                &runner,
                &header,
                plan.selected,
                Vec::new(),
                &mut [&mut progress],
            )
        }
        // Strict as `check` is: the column is not run.
        Err(why) => RunOutput {
            summary: RunSummary {
                unusable: Some(why),
                not_run: plan.selected.len(),
                ..RunSummary::default()
            },
            results: Vec::new(),
            report_error: None,
        },
    };
    executor.finish();
    let duration = started.elapsed();
    let s = &output.summary;
    use crate::outcome::Outcome;
    say(format_args!(
        "matrix: {name}: {} pass, {} fail, {} error, {} skip{} ({:.1}s)",
        s.count(Outcome::Pass),
        s.count(Outcome::Fail),
        s.count(Outcome::Error),
        s.count(Outcome::Skip),
        s.unusable
            .as_deref()
            .map(|u| format!("; UNUSABLE: {u}"))
            .unwrap_or_default(),
        duration.as_secs_f64()
    ));
    if s.unusable.is_some() {
        // As `check` shows it: the case that made it unusable, with the
        // executor's stderr (a missing interpreter, a stack trace).
        if let Some(probe) = output.results.iter().find(|r| r.outcome.is_unexpected()) {
            say(format_args!(
                "matrix: {name}: the first case, {}:\n{}",
                probe.id,
                crate::report::render::indent(
                    crate::report::render::explain(probe).trim_end(),
                    "  "
                )
                .trim_end()
            ));
        }
    }
    let column = Column {
        name: name.to_owned(),
        reference: name == REFERENCE,
        command: info.command.clone(),
        transport: info.transport.to_owned(),
        implementation: info.implementation.clone(),
        tools: info.tools.clone(),
        unsupported_tags: info
            .unsupported_tags
            .iter()
            .chain(&plan.cfg.skip_tags)
            .cloned()
            .collect(),
        private_paths: info.private_paths.clone(),
        declared_by,
        unusable: s.unusable.clone(),
        duration,
    };
    Ok((column, output.results))
}

/// Write `m` as `out/matrix.json`, `out/matrix.html`, `out/badges/` and,
/// when asked, its Markdown; returns the JSON's path.
fn write_outputs(
    m: &Matrix,
    out: &Path,
    markdown_file: Option<&Path>,
) -> Result<std::path::PathBuf, Error> {
    let json_path = out.join("matrix.json");
    let doc = serde_json::to_string_pretty(&json::to_json(m))
        .map_err(|e| Error::io(format!("cannot serialise the matrix: {e}")))?;
    write(&json_path, &(doc + "\n"))?;
    write(&out.join("matrix.html"), &html::render(m))?;
    for (i, c) in m.columns.iter().enumerate() {
        let path = out.join("badges").join(format!("{}.json", c.name));
        if c.unusable.is_some() {
            // A column that did not run has no pass rate: no badge, and
            // none left over from an earlier run to claim one.
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("cannot remove {}: {e}", path.display()))),
            }
            continue;
        }
        let b = badge::badge(m.tally(i, |_| true), m.judge);
        write(&path, &format!("{b}\n"))?;
    }
    if let Some(path) = markdown_file {
        write(path, &markdown::render(m))?;
    }
    Ok(json_path)
}

/// Run every column of `req` (the reference engine first) and write the
/// matrix (and, with `full_out`, the one judged in full); returns the
/// matrix written to `out`. A column found unusable is in it, `not-run`:
/// the caller decides what that means for the exit code.
pub fn run_and_write(req: &MatrixRequest<'_>) -> Result<Matrix, Error> {
    let corpus = crate::corpus_source::load(req.corpus)?;
    let sel = req.filter.selection();
    let selected = select(&corpus, &sel)?;
    if req.full_out.is_some() {
        if req.judging.judge != Judge::Outcome {
            return Err(Error::usage(
                "--full-out judges an outcome run again in full: it needs --judge outcome",
            ));
        }
        if let Some(why) = rejudge::unsupported(&selected) {
            return Err(Error::usage(format!("--full-out: {why}")));
        }
    }
    let timeout = req.judging.timeout()?;
    let jobs = req.executor_args.jobs();
    let connect_timeout = req.executor_args.connect_timeout()?;
    for out in std::iter::once(req.out).chain(req.full_out) {
        std::fs::create_dir_all(out.join("badges")).map_err(|e| {
            Error::io(format!(
                "cannot create {}: {e}",
                out.join("badges").display()
            ))
        })?;
    }
    let source = Source {
        runner_version: env!("CARGO_PKG_VERSION").into(),
        corpus_root: corpus.root.display().to_string(),
        corpus_version: corpus.version.clone(),
        corpus_hash: corpus.content_hash.clone(),
        corpus_cases: corpus.cases.len(),
        filters: sel.describe(),
        timeout,
    };
    let plan = Plan {
        cfg: RunConfig {
            jobs,
            timeout,
            judge: req.judging.judge,
            skip_tools: req.judging.skip_tool.clone(),
            skip_tags: req.judging.skip_tag.clone(),
            ..RunConfig::default()
        },
        corpus: &corpus,
        filters: sel.describe(),
        selected: &selected,
        known_tools: known_tools(&corpus.cases),
        work_dir: req.executor_args.work_dir(),
    };
    say(format_args!(
        "matrix: workspaces in {}",
        plan.work_dir.describe()
    ));
    let started = Instant::now();
    let mut m = Matrix::new(req.judging.judge, source.clone(), &selected);
    let mut full = req
        .full_out
        .map(|_| Matrix::new(Judge::Full, source.clone(), &selected));
    let mut add_column = |column: Column, results: &[crate::event::CaseResult]| {
        if let Some(full) = &mut full {
            let judged = rejudge::judge_full(&selected, results).map_err(Error::usage)?;
            full.add_column(column.clone(), &judged);
        }
        m.add_column(column, results);
        Ok::<(), Error>(())
    };
    let engine = InProcess::new(&req.judging.ignore_path);
    let (column, results) = run_column(
        &plan,
        REFERENCE,
        &engine,
        "built-in".into(),
        run_root(&plan.work_dir, DEFAULT_WORKSPACE_LIMIT)?,
    )?;
    add_column(column, &results)?;
    for spec in req.executors {
        let root = run_root(&plan.work_dir, DEFAULT_WORKSPACE_LIMIT)?;
        let executor = launch_or_unstarted(&Launch {
            transport: req.transport,
            argv: &spec.argv,
            root: &root,
            timeout,
            oneshot_hello: if req.no_hello {
                OneshotHello::Skip("--no-hello".into())
            } else {
                OneshotHello::Within(timeout.max(Duration::from_secs(10)))
            },
            jobs,
            max_restarts: DEFAULT_MAX_RESTARTS,
            listen: None,
            connect_timeout,
            ignore_paths: &req.judging.ignore_path,
        })?;
        let declared_by = match &executor.info().declared_by {
            Declaration::Hello => "hello".to_owned(),
            Declaration::BuiltIn => "built-in".to_owned(),
            Declaration::Missing(why) => {
                say(format_args!(
                    "matrix: {}: no HELLO ({why}); running every selected case",
                    spec.name
                ));
                format!("nothing (no HELLO: {why})")
            }
        };
        let (column, results) =
            run_column(&plan, &spec.name, executor.as_ref(), declared_by, root)?;
        add_column(column, &results)?;
    }
    let total = started.elapsed();

    let json_path = write_outputs(&m, req.out, req.markdown)?;
    if let (Some(full), Some(dir)) = (&full, req.full_out) {
        let markdown = req.markdown.map(|_| dir.join("matrix.md"));
        write_outputs(full, dir, markdown.as_deref())?;
    }
    say(format_args!(
        "matrix: {} case(s) × {} implementation(s) in {:.1}s; wrote {}, matrix.html, badges/",
        m.rows.len(),
        m.columns.len(),
        total.as_secs_f64(),
        json_path.display()
    ));
    Ok(m)
}
