//! Corpus commands: `list`, `show`, `repro`, `coverage` and `lint`: each
//! loads the corpus, calls the library and prints. The clause coverage is
//! [`crate::coverage`], the corpus's own checks [`crate::corpus_lint`];
//! `show` renders a case with [`render_case`].

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use serde_json::json;

use patchspec_engine::hash::sha256_hex;

use crate::case::{Case, ExpectFiles};
use crate::corpus_lint;
use crate::corpus_source::{load as load_corpus, CorpusArgs};
use crate::coverage::{clause_list, Coverage};
use crate::error::{Error, ErrorKind};
use crate::members::MemberCoverage;
use crate::report::render::{indent, params_labelled, visible, visible_bytes, HashLabels};
use crate::run::{RunConfig, Runner};
use crate::select::FilterArgs;
use crate::transport::inprocess::InProcess;
use crate::workspace::{materialise, SENTINEL_TEXT};

/// `patchspec list`.
#[derive(Clone, Debug, clap::Args)]
pub struct ListArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// One JSON object per case (id, tool, tags, summary, spec).
    #[arg(long)]
    pub json: bool,
}

/// `patchspec show`.
#[derive(Clone, Debug, clap::Args)]
pub struct ShowArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// The case id.
    pub id: String,
}

/// `patchspec repro`.
#[derive(Clone, Debug, clap::Args)]
pub struct ReproArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// The case id.
    pub id: String,
    /// The directory to write (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The executor's argv for the printed command (default: this binary's `exec`).
    #[arg(last = true, value_name = "EXECUTOR")]
    pub executor: Vec<String>,
}

/// `patchspec coverage`.
#[derive(Clone, Debug, clap::Args)]
pub struct CoverageArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Print one JSON object: clauses with their cases, and the gaps;
    /// `members`: each documented result member with the cases pinning it.
    #[arg(long)]
    pub json: bool,
    /// List only the clauses and the documented result members nothing pins.
    #[arg(long)]
    pub gaps: bool,
}

/// `patchspec lint`.
#[derive(Clone, Debug, clap::Args)]
pub struct LintArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Skip running the cases against the reference engine.
    #[arg(long)]
    pub no_run: bool,
}

/// A failed write to stdout (a closed pipe never fails: see [`crate::output`]).
fn out_err(e: std::io::Error) -> Error {
    Error::io(format!("cannot write to stdout: {e}"))
}

/// `patchspec list`.
pub fn list(args: &ListArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let selected = crate::setup::select(&corpus, &args.filter.selection())?;
    let mut out = crate::output::stdout();
    for c in selected {
        if out.is_closed() {
            break;
        }
        if args.json {
            writeln!(
                out,
                "{}",
                json!({"id": c.id, "tool": c.tool, "tags": c.tags, "summary": c.summary, "spec": c.spec})
            )
            .map_err(out_err)?;
        } else {
            writeln!(out, "{}", c.id).map_err(out_err)?;
        }
    }
    Ok(crate::exit::OK)
}

/// What each SHA-256 in a case's call may be: the hash of a given file (or
/// of an active file's content).
pub fn hash_labels(c: &Case) -> HashLabels {
    let mut labels = HashLabels::new();
    for (p, content) in &c.given.session.active_files {
        labels.insert(
            sha256_hex(content.as_bytes()),
            format!("session.activeFiles[{p}]"),
        );
    }
    // Given files win: they are what a hash is usually checked against.
    for (p, content) in &c.given.files {
        labels.insert(sha256_hex(&content.bytes()), format!("given file {p}"));
    }
    labels
}

fn find<'a>(corpus: &'a crate::case::Corpus, id: &str) -> Result<&'a Case, Error> {
    corpus
        .get(id.trim_end_matches(".json"))
        .ok_or_else(|| Error::usage(format!("no case {id:?} in {}", corpus.root.display())))
}

/// A case, readable.
pub fn render_case(c: &Case) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "id:      {}\nsummary: {}\nspec:    {}\ntool:    {}\ntags:    {}",
        c.id,
        c.summary,
        c.spec.join(", "),
        c.tool,
        c.tags.join(", ")
    );
    out.push_str("\n== given ==\n");
    for (p, content) in &c.given.files {
        let _ = writeln!(out, "--- {p}{}", mode_note(content));
        out.push_str(&indent(&visible_bytes(&content.bytes()), "  "));
    }
    for d in &c.given.dirs {
        let _ = writeln!(out, "--- {d}/ (directory)");
    }
    for (p, t) in &c.given.symlinks {
        let _ = writeln!(out, "--- {p} -> {t} (symlink)");
    }
    for (p, content) in &c.given.session.active_files {
        let _ = writeln!(out, "--- activeFiles[{p}]");
        out.push_str(&indent(&visible(content), "  "));
    }
    if !c.given.session.limits.is_empty() {
        let _ = writeln!(
            out,
            "--- session.limits: {}",
            serde_json::to_string(&c.given.session.limits).unwrap_or_default()
        );
    }
    if c.given.session.keep_store {
        out.push_str("--- session.keepStore: true\n");
    }
    for (i, step) in c.steps.iter().enumerate() {
        let _ = writeln!(out, "\n== steps[{i}]: {} ==", step.tool);
        out.push_str(&params_labelled(
            &step.tool,
            &serde_json::Value::Object(step.call.clone()),
            &hash_labels(c),
        ));
        out.push_str(&format!("\n== steps[{i}].expect.result ==\n"));
        out.push_str(&indent(
            &serde_json::to_string_pretty(&step.expect.result).unwrap_or_default(),
            "  ",
        ));
    }
    out.push_str("\n== call ==\n");
    out.push_str(&params_labelled(
        &c.tool,
        &serde_json::Value::Object(c.call.clone()),
        &hash_labels(c),
    ));
    out.push_str("\n== expect.result ==\n");
    out.push_str(&indent(
        &serde_json::to_string_pretty(&c.expect.result).unwrap_or_default(),
        "  ",
    ));
    out.push_str("\n== expect.files ==\n");
    match &c.expect.files {
        ExpectFiles::Unchanged(_) => out.push_str("  unchanged\n"),
        ExpectFiles::Tree(files) => {
            for (p, content) in files {
                let _ = writeln!(out, "--- {p}{}", mode_note(content));
                out.push_str(&indent(&visible_bytes(&content.bytes()), "  "));
            }
            for d in &c.expect.dirs {
                let _ = writeln!(out, "--- {d}/ (directory)");
            }
            for (p, t) in &c.expect.symlinks {
                let _ = writeln!(out, "--- {p} -> {t} (symlink)");
            }
        }
    }
    out
}

/// ` (mode 755)` when a file entry declares its permission bits.
fn mode_note(content: &crate::case::Content) -> String {
    content
        .mode()
        .map(|m| format!(" (mode {m:03o})"))
        .unwrap_or_default()
}

/// `patchspec show`.
pub fn show(args: &ShowArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let text = render_case(find(&corpus, &args.id)?);
    crate::output::stdout()
        .write_all(text.as_bytes())
        .map_err(out_err)?;
    Ok(crate::exit::OK)
}

/// `s` quoted for a POSIX shell (by shlex: the runner's one shell-word
/// codec, which also splits `matrix --executor` commands).
fn shell_quote(s: &str) -> Result<String, Error> {
    shlex::try_quote(s)
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| Error::usage(format!("cannot quote {s:?} for a shell: {e}")))
}

/// `patchspec repro`: DIR/ws (the workspace), DIR/outside/sentinel.txt,
/// DIR/request.json (the exact TOOL_CALL), DIR/case.json (the case).
pub fn repro(args: &ReproArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let case = find(&corpus, &args.id)?;
    let io = |e: std::io::Error| Error::io(format!("cannot write {}: {e}", args.out.display()));
    if args.out.exists() && std::fs::read_dir(&args.out).map_err(io)?.next().is_some() {
        return Err(Error::usage(format!(
            "{} exists and is not empty",
            args.out.display()
        )));
    }
    std::fs::create_dir_all(args.out.join("ws")).map_err(io)?;
    std::fs::create_dir_all(args.out.join("outside")).map_err(io)?;
    std::fs::write(args.out.join("outside/sentinel.txt"), SENTINEL_TEXT).map_err(io)?;
    let out = args.out.canonicalize().map_err(io)?;
    let ws = out.join("ws");
    materialise(&ws, &case.given).map_err(io)?;
    let cfg = RunConfig::default();
    let engine = InProcess::default();
    let runner = Runner::new(&engine, &cfg).map_err(Error::usage)?;
    // A multi-step case: each step's request, in order (its templates as
    // written: each names a value of an earlier answer, to paste in).
    for (i, step) in case.steps.iter().enumerate() {
        let mut step_case = case.clone();
        step_case.tool = step.tool.clone();
        step_case.call = step.call.clone();
        let mut msg = runner.message(&step_case, &ws);
        msg.tool_call_id = format!("{}#repro-step-{i}", case.id);
        crate::steps::fill_workspace_root(&mut msg.params, &msg.workspace_root.clone());
        std::fs::write(
            out.join(format!("step-{i}.json")),
            format!(
                "{}\n",
                serde_json::to_string(&msg).expect("a ToolCallMsg serialises")
            ),
        )
        .map_err(io)?;
    }
    let mut msg = runner.message(case, &ws);
    msg.tool_call_id = format!("{}#repro", case.id);
    crate::steps::fill_workspace_root(&mut msg.params, &msg.workspace_root.clone());
    let request = out.join("request.json");
    std::fs::write(
        &request,
        format!(
            "{}\n",
            serde_json::to_string(&msg).expect("a ToolCallMsg serialises")
        ),
    )
    .map_err(io)?;
    let case_json = serde_json::to_string_pretty(case).expect("a Case serialises");
    std::fs::write(out.join("case.json"), format!("{case_json}\n")).map_err(io)?;
    let argv: Vec<String> = if args.executor.is_empty() {
        let me = std::env::current_exe()
            .map_err(|e| Error::io(format!("cannot find this binary: {e}")))?;
        vec![me.to_string_lossy().into_owned(), "exec".into()]
    } else {
        crate::transport::launch::resolve_argv(&args.executor)
    };
    let command = argv
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Result<Vec<_>, _>>()?;
    crate::output::eprintln_quietly(format_args!(
        "wrote {} (workspace ws/, request.json, case.json); reproduce with:",
        out.display()
    ));
    if !case.steps.is_empty() {
        crate::output::eprintln_quietly(format_args!(
            "this case has {n} step(s) before its call: send step-0.json … step-{last}.json first, \
             in order, replacing each {{{{steps.N.result.…}}}} with that value of answer N",
            n = case.steps.len(),
            last = case.steps.len() - 1
        ));
    }
    writeln!(
        crate::output::stdout(),
        "cd {} && {} < {}",
        shell_quote(&ws.to_string_lossy())?,
        command.join(" "),
        shell_quote(&request.to_string_lossy())?
    )
    .map_err(out_err)?;
    Ok(crate::exit::OK)
}

/// `patchspec coverage`: each clause with the cases whose `spec` cites it,
/// and the named tests that pin what no case can observe, then each
/// documented member of each tool's results with the cases that pin it
/// exactly ([`crate::members`]); exit 1 when a clause or a member has
/// neither or a test reference names no test.
pub fn coverage(args: &CoverageArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let Some(dir) = corpus.root.dir() else {
        return Err(Error::usage(
            "coverage reads docs/spec-clauses.md and the tests of a clone: run it in one, or pass --corpus DIR",
        ));
    };
    let repo = dir.join("..");
    let clauses_path = repo.join("docs/spec-clauses.md");
    let Some(clauses) = clause_list(&clauses_path) else {
        return Err(Error::new(ErrorKind::Usage(format!(
            "cannot read {}: coverage needs the clause list",
            clauses_path.display()
        ))));
    };
    let report = Coverage::new(&corpus, &clauses, &repo);
    let clause_text = std::fs::read_to_string(&clauses_path).unwrap_or_default();
    let exempt = crate::members::exemptions(&clause_text, &repo);
    let members = MemberCoverage::new(&corpus, crate::members::catalog_members(), &exempt);
    let mut out = crate::output::stdout();
    if args.json {
        let mut doc = report.to_json();
        doc["members"] = members.to_json();
        writeln!(out, "{doc:#}").map_err(out_err)?;
    } else {
        report.write_text(&mut out, args.gaps).map_err(out_err)?;
        members.write_text(&mut out, args.gaps).map_err(out_err)?;
    }
    Ok(if report.is_complete() && members.gaps().is_empty() {
        crate::exit::OK
    } else {
        crate::exit::UNEXPECTED
    })
}

/// `patchspec lint`: the structural checks (exit 2 on a problem), then,
/// unless `--no-run`, every case against the reference engine (exit 1 when
/// one fails).
pub fn lint(args: &LintArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let structure = corpus_lint::structure(&corpus);
    if !structure.problems.is_empty() {
        return Err(Error::new(ErrorKind::Corpus(structure.problems)));
    }
    let mut out = crate::output::stdout();
    writeln!(
        out,
        "lint: {} case(s): structure, ids, spec references ok{}",
        corpus.cases.len(),
        if structure.anchors_checked {
            ""
        } else {
            " (no docs/spec-clauses.md: anchors not checked)"
        }
    )
    .map_err(out_err)?;
    if args.no_run {
        return Ok(crate::exit::OK);
    }
    let reference = corpus_lint::against_reference(&corpus)?;
    if reference.failures.is_empty() {
        writeln!(out, "lint: every case passes against the reference engine").map_err(out_err)?;
        let (p, f, k) = reference.summary.tally();
        writeln!(out, "{p} passed, {f} failed, {k} skipped").map_err(out_err)?;
        return Ok(crate::exit::OK);
    }
    Err(Error::new(ErrorKind::Unexpected(format!(
        "{} case(s) do not pass against the reference engine:\n  {}",
        reference.failures.len(),
        reference.failures.join("\n  ")
    ))))
}
