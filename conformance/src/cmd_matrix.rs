//! `patchspec matrix`: run the selection against the reference engine and
//! every `--executor NAME=CMD`, one after the other, and write the matrix.
//!
//! Each executor is started over `--transport` (default oneshot) by
//! [`crate::transport::launch`], the code `check` starts its executor with;
//! one that cannot start is a column found unusable on its first case. A
//! oneshot executor is first sent a `HELLO` unless `--no-hello`, as `check`
//! does; a valid answer declares its tools, unsupported tags, private paths
//! and identity, anything else leaves it undeclared (every selected case is
//! run) and the reason is shown in the outputs. Each run goes through [`crate::run::run`]
//! exactly as `check` does (same judging, same workspaces, same probe for an
//! unusable executor); its results become one column of the
//! [`crate::matrix::Matrix`]. While a column runs, its progress goes to
//! stderr (`ColumnProgress`); a column that turns out unusable shows the
//! case that made it so, with the executor's stderr, as `check` does.
//! Outputs, in `--out DIR`: `matrix.json`, `matrix.html`,
//! `badges/<NAME>.json` for each column that ran (an unusable column has no
//! pass rate, so no badge, and an old one is removed); with `--markdown
//! FILE` also the Markdown rendering. With `--judge outcome --full-out
//! DIR`, every answer is also judged in full ([`crate::matrix::rejudge`])
//! and that matrix written to DIR the same way: both modes from one run.
//!
//! Exit code: 0 when the matrix was written, whatever the pass rates (it is
//! a report, not a gate: use `check` with a baseline for that); 2 on usage
//! or corpus errors; 3 when an executor was unusable (the matrix is still
//! written, that column `not-run`); 1 when an output could not be written.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::case::{Case, Corpus};
use crate::corpus_source::CorpusArgs;
use crate::error::{Error, ErrorKind};
use crate::event::RunSummary;
use crate::event::{Event, Reporter};
use crate::judge::Judge;
use crate::matrix::{badge, html, json, markdown, rejudge, Column, Matrix, Source};
use crate::output::eprintln_quietly as say;
use crate::report::human::{progress_bar, progress_wanted};
use crate::run::{known_tools, run, RunConfig, RunOutput, Runner};
use crate::select::FilterArgs;
use crate::setup::{run_root, select, ExecutorArgs, JudgingArgs, DEFAULT_MAX_RESTARTS};
use crate::transport::inprocess::InProcess;
use crate::transport::launch::{launch_or_unstarted, Launch, OneshotHello, Transport};
use crate::transport::{Declaration, Executor};
use crate::workspace::{RunRoot, WorkDir, DEFAULT_WORKSPACE_LIMIT};

/// `patchspec matrix`.
#[derive(Clone, Debug, clap::Args)]
pub struct MatrixArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// An implementation to check: NAME=CMD, CMD split into argv like a POSIX shell
    /// splits words ('…', "…", backslash) but never run by one; over --transport; repeatable.
    #[arg(long = "executor", value_name = "NAME=CMD")]
    pub executor: Vec<String>,
    /// The transport to every --executor, as in `check` (websocket: `{url}` in CMD becomes
    /// the URL to connect to, also given as $PATCHSPEC_WS_URL; mcp: `{root}` in CMD becomes the
    /// case's workspace). Sessions and plugins are
    /// restarted up to 3 times; a plugin has --connect-timeout to connect.
    #[arg(long, value_enum, default_value = "oneshot")]
    pub transport: Transport,
    /// The directory to write matrix.json, matrix.html and badges/NAME.json into (created).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write the matrix as Markdown (tables by tool and clause, departures) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With `--judge outcome`: also judge every answer in full, without running anything
    /// again, and write that matrix to DIR like --out (and its Markdown as DIR/matrix.md
    /// with --markdown). Not for cases with steps (their step answers are not kept).
    #[arg(long, value_name = "DIR")]
    pub full_out: Option<PathBuf>,
    /// Workers, connection timeout, work folder, the same for every column.
    #[command(flatten)]
    pub executor_args: ExecutorArgs,
    /// Timeout, judge and what is left out, the same for every column.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Do not send oneshot executors a HELLO first (nothing declared: every selected case runs).
    #[arg(long)]
    pub no_hello: bool,
}

/// The name of the built-in reference engine's column.
pub const REFERENCE: &str = "reference";

/// One `--executor NAME=CMD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorSpec {
    /// The column name: `[A-Za-z0-9._-]+`, also the badge file's name.
    pub name: String,
    /// The command, split into argv without a shell.
    pub argv: Vec<String>,
}

/// Parse `NAME=CMD`. CMD is split into words like a POSIX shell would split
/// them — whitespace separates, `'…'` is literal, `"…"` allows `\"` `\\` `\$`
/// `` \` ``, a backslash outside quotes escapes the next character — but
/// nothing is expanded or run: no variables, globs, pipes or redirections.
pub fn parse_executor(text: &str) -> Result<ExecutorSpec, String> {
    let (name, cmd) = text
        .split_once('=')
        .ok_or_else(|| format!("--executor {text:?}: expected NAME=CMD"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || name.starts_with('.')
    {
        return Err(format!(
            "--executor {text:?}: the name {name:?} must be letters, digits, '.', '_' or '-' (and not start with '.')"
        ));
    }
    if name == REFERENCE {
        return Err(format!(
            "--executor {text:?}: {REFERENCE:?} is the built-in engine's column; pick another name"
        ));
    }
    let argv = shlex::split(cmd).ok_or_else(|| {
        format!("--executor {text:?}: unbalanced quotes or a trailing backslash in the command")
    })?;
    if argv.is_empty() {
        return Err(format!("--executor {text:?}: the command is empty"));
    }
    Ok(ExecutorSpec {
        name: name.to_owned(),
        argv,
    })
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

/// Run `patchspec matrix`; returns the exit code.
pub fn matrix(args: &MatrixArgs) -> Result<i32, Error> {
    let specs = args
        .executor
        .iter()
        .map(|e| parse_executor(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::usage)?;
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::usage(format!(
                "two executors are named {:?}",
                s.name
            )));
        }
    }
    if args.no_hello && args.transport != Transport::Oneshot {
        return Err(Error::usage(
            "--no-hello is for oneshot executors (a session or a plugin always shakes hands)",
        ));
    }
    let corpus = crate::corpus_source::load(&args.corpus)?;
    let sel = args.filter.selection();
    let selected = select(&corpus, &sel)?;
    if args.full_out.is_some() {
        if args.judging.judge != Judge::Outcome {
            return Err(Error::usage(
                "--full-out judges an outcome run again in full: it needs --judge outcome",
            ));
        }
        if let Some(why) = rejudge::unsupported(&selected) {
            return Err(Error::usage(format!("--full-out: {why}")));
        }
    }
    let timeout = args.judging.timeout()?;
    let jobs = args.executor_args.jobs();
    let connect_timeout = args.executor_args.connect_timeout()?;
    for out in std::iter::once(&args.out).chain(&args.full_out) {
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
            judge: args.judging.judge,
            skip_tools: args.judging.skip_tool.clone(),
            skip_tags: args.judging.skip_tag.clone(),
            ..RunConfig::default()
        },
        corpus: &corpus,
        filters: sel.describe(),
        selected: &selected,
        known_tools: known_tools(&corpus.cases),
        work_dir: args.executor_args.work_dir(),
    };
    say(format_args!(
        "matrix: workspaces in {}",
        plan.work_dir.describe()
    ));
    let started = Instant::now();
    let mut m = Matrix::new(args.judging.judge, source.clone(), &selected);
    let mut full = args
        .full_out
        .as_ref()
        .map(|_| Matrix::new(Judge::Full, source.clone(), &selected));
    let mut add_column = |column: Column, results: &[crate::event::CaseResult]| {
        if let Some(full) = &mut full {
            let judged = rejudge::judge_full(&selected, results).map_err(Error::usage)?;
            full.add_column(column.clone(), &judged);
        }
        m.add_column(column, results);
        Ok::<(), Error>(())
    };
    let engine = InProcess::new(&args.judging.ignore_path);
    let (column, results) = run_column(
        &plan,
        REFERENCE,
        &engine,
        "built-in".into(),
        run_root(&plan.work_dir, DEFAULT_WORKSPACE_LIMIT)?,
    )?;
    add_column(column, &results)?;
    for spec in &specs {
        let root = run_root(&plan.work_dir, DEFAULT_WORKSPACE_LIMIT)?;
        let executor = launch_or_unstarted(&Launch {
            transport: args.transport,
            argv: &spec.argv,
            root: &root,
            timeout,
            oneshot_hello: if args.no_hello {
                OneshotHello::Skip("--no-hello".into())
            } else {
                OneshotHello::Within(timeout.max(Duration::from_secs(10)))
            },
            jobs,
            max_restarts: DEFAULT_MAX_RESTARTS,
            listen: None,
            connect_timeout,
            ignore_paths: &args.judging.ignore_path,
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

    let json_path = write_outputs(&m, &args.out, args.markdown.as_deref())?;
    if let (Some(full), Some(dir)) = (&full, &args.full_out) {
        let markdown = args.markdown.as_ref().map(|_| dir.join("matrix.md"));
        write_outputs(full, dir, markdown.as_deref())?;
    }
    say(format_args!(
        "matrix: {} case(s) × {} implementation(s) in {:.1}s; wrote {}, matrix.html, badges/",
        m.rows.len(),
        m.columns.len(),
        total.as_secs_f64(),
        json_path.display()
    ));
    let mut out = crate::output::stdout();
    for (i, c) in m.columns.iter().enumerate() {
        let t = m.tally(i, |_| true);
        let line = match &c.unusable {
            Some(_) => format!("{}: not run (unusable; no badge written)", c.name),
            None => format!(
                "{}: {} passing ({} pass / {} judged, {} skipped)",
                c.name,
                t.percent(),
                t.pass,
                t.judged(),
                t.skip + t.not_run
            ),
        };
        writeln!(out, "{line}").map_err(|e| Error::io(format!("cannot write the summary: {e}")))?;
    }
    let unusable: Vec<String> = m
        .columns
        .iter()
        .filter_map(|c| c.unusable.as_ref().map(|u| format!("{}: {u}", c.name)))
        .collect();
    if !unusable.is_empty() {
        return Err(Error::new(ErrorKind::ExecutorUnusable(format!(
            "the matrix was written, but {}",
            unusable.join("; ")
        ))));
    }
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, want: Result<(&str, &[&str]), &str>) {
        let got = parse_executor(text);
        match want {
            Ok((name, argv)) => assert_eq!(
                got,
                Ok(ExecutorSpec {
                    name: name.into(),
                    argv: argv.iter().map(|s| s.to_string()).collect()
                }),
                "{text}"
            ),
            Err(part) => {
                let e = got.expect_err(text);
                assert!(e.contains(part), "{text}: {e}");
            }
        }
    }

    #[test]
    fn name_equals_command_split_without_a_shell() {
        check("codex=./run --flag", Ok(("codex", &["./run", "--flag"])));
        check(
            "a.b-c_1=python3 'my adapter.py' \"x \\\"y\\\"\" a\\ b",
            Ok(("a.b-c_1", &["python3", "my adapter.py", "x \"y\"", "a b"])),
        );
        check(
            "x=echo $HOME *.txt | cat",
            Ok(("x", &["echo", "$HOME", "*.txt", "|", "cat"])),
        );
        check("k=cmd a=b", Ok(("k", &["cmd", "a=b"])));
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        check("noequals", Err("expected NAME=CMD"));
        check("=cmd", Err("must be letters"));
        check("a/b=cmd", Err("must be letters"));
        check(".hidden=cmd", Err("must be letters"));
        check("reference=cmd", Err("built-in engine"));
        check("x=   ", Err("empty"));
        check("x=cmd 'open", Err("unbalanced"));
    }
}
