//! Corpus commands: `list`, `show`, `repro` and `lint`.
//!
//! `lint` checks what the loader checks (the schema's structural rules, ids
//! equal to paths, unique ids, summaries), plus that the schema file exists
//! and parses, that every `spec` reference names one of the five spec
//! documents and, when `docs/spec-clauses.md` exists next to the corpus, an
//! anchor listed there (`- \`doc#anchor\`: description`), and finally that
//! every case passes against the reference engine (in-process). Structural
//! problems exit 2; cases failing against the reference exit 1.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::case::{Case, ExpectFiles, Problem, SPEC_DOCUMENTS};
use crate::cli::{CoverageArgs, LintArgs, ListArgs, ReproArgs, ShowArgs};
use crate::cmd_check::{load_corpus, selection};
use crate::error::{Error, ErrorKind};
use crate::event::{Event, Reporter, RunHeader};
use crate::report::human::Human;
use crate::report::render::{indent, params, visible, visible_bytes};
use crate::run::{run, RunConfig, Runner};
use crate::transport::inprocess::InProcess;
use crate::transport::Executor;
use crate::workspace::{materialise, SENTINEL_TEXT};

/// `patchspec list`.
pub fn list(args: &ListArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let sel = selection(&args.filter);
    let selected = sel.apply(&corpus.cases).map_err(Error::usage)?;
    if selected.is_empty() {
        return Err(Error::new(ErrorKind::NothingSelected(sel.describe())));
    }
    for c in selected {
        if args.json {
            println!(
                "{}",
                json!({"id": c.id, "tool": c.tool, "tags": c.tags, "summary": c.summary, "spec": c.spec})
            );
        } else {
            println!("{}", c.id);
        }
    }
    Ok(crate::exit::OK)
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
        let _ = writeln!(out, "--- {p}");
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
    out.push_str("\n== call ==\n");
    out.push_str(&params(&c.tool, &serde_json::Value::Object(c.call.clone())));
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
                let _ = writeln!(out, "--- {p}");
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

/// `patchspec show`.
pub fn show(args: &ShowArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    print!("{}", render_case(find(&corpus, &args.id)?));
    Ok(crate::exit::OK)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:+,@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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
    let mut msg = runner.message(case, &ws);
    msg.tool_call_id = format!("{}#repro", case.id);
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
        args.executor
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == 0 && a.contains('/') {
                    std::path::absolute(a)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or(a.clone())
                } else {
                    a.clone()
                }
            })
            .collect()
    };
    let command: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    eprintln!(
        "wrote {} (workspace ws/, request.json, case.json); reproduce with:",
        out.display()
    );
    println!(
        "cd {} && {} < {}",
        shell_quote(&ws.to_string_lossy()),
        command.join(" "),
        shell_quote(&request.to_string_lossy())
    );
    Ok(crate::exit::OK)
}

/// Clauses listed in docs/spec-clauses.md (`- \`doc#anchor\`: description`), in order.
fn clause_list(path: &Path) -> Option<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter_map(|l| l.trim_start().strip_prefix("- `"))
            .filter_map(|l| {
                l.split_once("`:")
                    .map(|(r, d)| (r.to_owned(), d.trim().to_owned()))
            })
            .collect(),
    )
}

/// The anchors of [`clause_list`], as a set.
fn listed_clauses(path: &Path) -> Option<BTreeSet<String>> {
    clause_list(path).map(|l| l.into_iter().map(|(r, _)| r).collect())
}

/// `patchspec coverage`: each clause with the cases whose `spec` cites it.
pub fn coverage(args: &CoverageArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let clauses_path = corpus.root.join("../docs/spec-clauses.md");
    let Some(clauses) = clause_list(&clauses_path) else {
        return Err(Error::new(ErrorKind::Usage(format!(
            "cannot read {}: coverage needs the clause list",
            clauses_path.display()
        ))));
    };
    let mut pinned: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for c in &corpus.cases {
        for r in &c.spec {
            pinned.entry(r.as_str()).or_default().push(c.id.as_str());
        }
    }
    let gaps: Vec<&(String, String)> = clauses
        .iter()
        .filter(|(r, _)| !pinned.contains_key(r.as_str()))
        .collect();
    if args.json {
        let doc = serde_json::json!({
            "clauses": clauses.iter().map(|(r, d)| serde_json::json!({
                "clause": r,
                "description": d,
                "cases": pinned.get(r.as_str()).cloned().unwrap_or_default(),
            })).collect::<Vec<_>>(),
            "gaps": gaps.iter().map(|(r, _)| r).collect::<Vec<_>>(),
        });
        println!("{doc:#}");
    } else {
        for (r, d) in &clauses {
            let cases = pinned.get(r.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            if args.gaps && !cases.is_empty() {
                continue;
            }
            println!(
                "{r}  ({} case{})  {d}",
                cases.len(),
                if cases.len() == 1 { "" } else { "s" }
            );
            for id in cases.iter().take(if args.gaps { 0 } else { 5 }) {
                println!("    {id}");
            }
            if cases.len() > 5 {
                println!("    ... and {} more", cases.len() - 5);
            }
        }
        println!(
            "coverage: {} clauses, {} pinned, {} gaps",
            clauses.len(),
            clauses.len() - gaps.len(),
            gaps.len()
        );
    }
    Ok(if gaps.is_empty() {
        crate::exit::OK
    } else {
        crate::exit::UNEXPECTED
    })
}

/// Collects failing cases for lint.
struct Failures(Vec<String>);

impl Reporter for Failures {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        if let Event::CaseFinished(r) = event {
            if r.outcome.is_unexpected() {
                let why = r
                    .detail
                    .message
                    .clone()
                    .or_else(|| r.detail.result.first().map(ToString::to_string))
                    .unwrap_or_else(|| "the tree after the call differs".into());
                self.0.push(format!(
                    "{}: {} ({})",
                    r.id,
                    r.outcome,
                    why.lines().next().unwrap_or_default()
                ));
            }
        }
        Ok(())
    }
}

/// `patchspec lint`.
pub fn lint(args: &LintArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let mut problems = Vec::new();
    let schema = corpus.root.join("schema/case.schema.json");
    match std::fs::read(&schema) {
        Ok(bytes) => {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                problems.push(Problem {
                    file: schema.clone(),
                    at: "$".into(),
                    message: format!("not valid JSON: {e}"),
                });
            }
        }
        Err(e) => problems.push(Problem {
            file: schema.clone(),
            at: "$".into(),
            message: format!("cannot read the schema: {e}"),
        }),
    }
    let clauses_path = corpus.root.join("../docs/spec-clauses.md");
    let clauses = listed_clauses(&clauses_path);
    for c in &corpus.cases {
        let file = PathBuf::from(format!("{}.json", c.id));
        for (i, r) in c.spec.iter().enumerate() {
            let doc = r.split_once('#').map(|(d, _)| d).unwrap_or(r);
            if !SPEC_DOCUMENTS.contains(&doc) {
                problems.push(Problem {
                    file: file.clone(),
                    at: format!("$.spec[{i}]"),
                    message: format!(
                        "{doc:?} is not a spec document ({})",
                        SPEC_DOCUMENTS.join(", ")
                    ),
                });
            } else if let Some(listed) = &clauses {
                if !listed.contains(r) {
                    problems.push(Problem {
                        file: file.clone(),
                        at: format!("$.spec[{i}]"),
                        message: format!("{r:?} is not listed in {}", clauses_path.display()),
                    });
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::new(ErrorKind::Corpus(problems)));
    }
    println!(
        "lint: {} case(s): structure, ids, spec references ok{}",
        corpus.cases.len(),
        if clauses.is_none() {
            " (no docs/spec-clauses.md: anchors not checked)"
        } else {
            ""
        }
    );
    if args.no_run {
        return Ok(crate::exit::OK);
    }
    let cfg = RunConfig {
        jobs: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        timeout: Duration::from_secs(10),
        ..RunConfig::default()
    };
    let engine = InProcess::default();
    let runner = Runner::new(&engine, &cfg).map_err(Error::usage)?;
    let selected: Vec<&Case> = corpus.cases.iter().collect();
    let header = RunHeader {
        runner_version: env!("CARGO_PKG_VERSION").into(),
        corpus_root: corpus.root.display().to_string(),
        corpus_version: corpus.version.clone(),
        corpus_hash: corpus.content_hash.clone(),
        corpus_cases: corpus.cases.len(),
        executor: engine.info(),
        selected: selected.len(),
        filters: "lint".into(),
        jobs: cfg.jobs,
        timeout: cfg.timeout,
        baseline: None,
        judge: cfg.judge,
    };
    let mut failures = Failures(Vec::new());
    let mut human = Human::new(std::io::sink(), false);
    let output = run(
        &runner,
        &header,
        &selected,
        Vec::new(),
        &mut [&mut failures, &mut human],
    );
    if failures.0.is_empty() {
        println!("lint: every case passes against the reference engine");
        let (p, f, k) = output.summary.tally();
        println!("{p} passed, {f} failed, {k} skipped");
        return Ok(crate::exit::OK);
    }
    Err(Error::new(ErrorKind::Unexpected(format!(
        "{} case(s) do not pass against the reference engine:\n  {}",
        failures.0.len(),
        failures.0.join("\n  ")
    ))))
}
