//! Corpus commands: `list`, `show`, `repro`, `coverage` and `lint`.
//!
//! `coverage` lists each clause of `docs/spec-clauses.md` with the cases
//! that cite it and the named tests its line points to (``(pinned by test:
//! FILE::…::NAME)``, for what only fault injection or a race can reach; the
//! test must exist). A clause with neither is a gap; a gap, or a test
//! reference that names no existing function, fails the command.
//!
//! `lint` checks what the loader checks (the schema's structural rules, ids
//! equal to paths, unique ids, summaries), plus that the schema file exists
//! and parses, that a versioned corpus (`VERSION`) has its entry in
//! `CHANGELOG.md`, that every `spec` reference names one of the spec
//! documents (or `clarifications`) and, when `docs/spec-clauses.md` exists
//! next to the corpus, an anchor listed there (`- \`doc#anchor\`:
//! description`), and finally that every case passes against the reference
//! engine (in-process). Structural problems exit 2; cases failing against
//! the reference exit 1. That the schema file and the loader's rules agree
//! is not re-checked here but by a test (`conformance/tests/schema.rs`,
//! with a real JSON Schema validator, over every case of the corpus).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use patchspec_engine::hash::sha256_hex;

use crate::case::{Case, ExpectFiles, Problem, SPEC_DOCUMENTS};
use crate::cli::{CoverageArgs, LintArgs, ListArgs, ReproArgs, ShowArgs};
use crate::cmd_check::{load_corpus, selection};
use crate::error::{Error, ErrorKind};
use crate::event::{Event, Reporter, RunHeader};
use crate::report::human::Human;
use crate::report::render::{indent, params_labelled, visible, visible_bytes, HashLabels};
use crate::run::{run, RunConfig, Runner};
use crate::transport::inprocess::InProcess;
use crate::transport::Executor;
use crate::workspace::{materialise, SENTINEL_TEXT};

/// A failed write to stdout (a closed pipe never fails: see [`crate::output`]).
fn out_err(e: std::io::Error) -> Error {
    Error::io(format!("cannot write to stdout: {e}"))
}

/// `patchspec list`.
pub fn list(args: &ListArgs) -> Result<i32, Error> {
    let corpus = load_corpus(&args.corpus)?;
    let sel = selection(&args.filter);
    let selected = sel.apply(&corpus.cases).map_err(Error::usage)?;
    if selected.is_empty() {
        return Err(Error::new(ErrorKind::NothingSelected(sel.describe())));
    }
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
        crate::cmd_check::resolve_argv(&args.executor)
    };
    let command = argv
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Result<Vec<_>, _>>()?;
    crate::output::eprintln_quietly(format_args!(
        "wrote {} (workspace ws/, request.json, case.json); reproduce with:",
        out.display()
    ));
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

/// The marker of a clause pinned by a named test instead of (or besides) a
/// case: ``(pinned by test: FILE::…::NAME)`` at the end of its line, FILE
/// relative to the repository root. `(pinned by test: pending)` holds the
/// place of a test not yet written: the clause stays a gap.
const TEST_MARKER: &str = "(pinned by test: ";

/// A clause's description without its test markers, and the markers.
fn split_markers(description: &str) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut tests = Vec::new();
    let mut rest = description;
    while let Some(at) = rest.find(TEST_MARKER) {
        text.push_str(&rest[..at]);
        let after = &rest[at + TEST_MARKER.len()..];
        match after.find(')') {
            Some(end) => {
                tests.push(after[..end].trim().to_owned());
                rest = &after[end + 1..];
            }
            None => {
                tests.push(after.trim().to_owned());
                rest = "";
            }
        }
    }
    text.push_str(rest);
    (text.trim().to_owned(), tests)
}

/// What a test marker names, checked against the source tree.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TestRef {
    /// The file exists and declares `fn NAME`.
    Found,
    /// `pending`: a placeholder for a test not yet written.
    Pending,
    /// Malformed, or the file or the function is not there.
    Missing(String),
}

/// Check a marker `FILE::…::NAME` under `repo`: FILE must exist and contain
/// `fn NAME(` or `fn NAME<`.
fn resolve_test(repo: &Path, marker: &str) -> TestRef {
    if marker == "pending" {
        return TestRef::Pending;
    }
    let (Some((file, _)), Some((_, name))) = (marker.split_once("::"), marker.rsplit_once("::"))
    else {
        return TestRef::Missing("not of the form FILE::…::NAME".into());
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return TestRef::Missing(format!("{name:?} is not a function name"));
    }
    let Ok(source) = std::fs::read_to_string(repo.join(file)) else {
        return TestRef::Missing(format!("cannot read {file}"));
    };
    let declared = [format!("fn {name}("), format!("fn {name}<")]
        .iter()
        .any(|decl| source.contains(decl.as_str()));
    if declared {
        TestRef::Found
    } else {
        TestRef::Missing(format!("{file} declares no fn {name}"))
    }
}

/// `patchspec coverage`: each clause with the cases whose `spec` cites it,
/// and the named tests that pin what no case can observe.
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
    let mut pinned: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for c in &corpus.cases {
        for r in &c.spec {
            pinned.entry(r.as_str()).or_default().push(c.id.as_str());
        }
    }
    struct Row<'a> {
        clause: &'a str,
        description: String,
        cases: &'a [&'a str],
        tests: Vec<(String, TestRef)>,
    }
    let rows: Vec<Row<'_>> = clauses
        .iter()
        .map(|(r, d)| {
            let (description, markers) = split_markers(d);
            Row {
                clause: r,
                description,
                cases: pinned.get(r.as_str()).map(Vec::as_slice).unwrap_or(&[]),
                tests: markers
                    .into_iter()
                    .map(|m| {
                        let found = resolve_test(&repo, &m);
                        (m, found)
                    })
                    .collect(),
            }
        })
        .collect();
    let by_test = |row: &Row<'_>| row.tests.iter().any(|(_, t)| *t == TestRef::Found);
    let is_gap = |row: &Row<'_>| row.cases.is_empty() && !by_test(row);
    let gaps: Vec<&Row<'_>> = rows.iter().filter(|r| is_gap(r)).collect();
    let tests_only = rows
        .iter()
        .filter(|r| r.cases.is_empty() && by_test(r))
        .count();
    let broken: Vec<(&str, &str, &str)> = rows
        .iter()
        .flat_map(|r| {
            r.tests.iter().filter_map(move |(m, t)| match t {
                TestRef::Missing(why) => Some((r.clause, m.as_str(), why.as_str())),
                TestRef::Found | TestRef::Pending => None,
            })
        })
        .collect();
    let mut out = crate::output::stdout();
    if args.json {
        let doc = serde_json::json!({
            "clauses": rows.iter().map(|r| serde_json::json!({
                "clause": r.clause,
                "description": r.description,
                "cases": r.cases,
                "tests": r.tests.iter().map(|(m, t)| serde_json::json!({
                    "test": m,
                    "status": match t {
                        TestRef::Found => "found",
                        TestRef::Pending => "pending",
                        TestRef::Missing(_) => "missing",
                    },
                })).collect::<Vec<_>>(),
                "pinnedBy": if !r.cases.is_empty() { "cases" } else if by_test(r) { "test" } else { "nothing" },
            })).collect::<Vec<_>>(),
            "gaps": gaps.iter().map(|r| r.clause).collect::<Vec<_>>(),
            "missingTests": broken.iter().map(|(c, m, why)| serde_json::json!({
                "clause": c, "test": m, "problem": why,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{doc:#}").map_err(out_err)?;
    } else {
        for row in &rows {
            if args.gaps && !is_gap(row) {
                continue;
            }
            let n = row.cases.len();
            let what = if n == 0 && by_test(row) {
                "pinned by test".to_owned()
            } else {
                format!("{n} case{}", if n == 1 { "" } else { "s" })
            };
            writeln!(out, "{}  ({what})  {}", row.clause, row.description).map_err(out_err)?;
            for id in row.cases.iter().take(if args.gaps { 0 } else { 5 }) {
                writeln!(out, "    {id}").map_err(out_err)?;
            }
            if n > 5 && !args.gaps {
                writeln!(out, "    ... and {} more", n - 5).map_err(out_err)?;
            }
            for (m, t) in &row.tests {
                match t {
                    TestRef::Found if !args.gaps => {
                        writeln!(out, "    test: {m}").map_err(out_err)?
                    }
                    TestRef::Found => {}
                    TestRef::Pending => {
                        writeln!(out, "    test: pending (not yet written)").map_err(out_err)?
                    }
                    TestRef::Missing(why) => {
                        writeln!(out, "    test NOT FOUND: {m} ({why})").map_err(out_err)?
                    }
                }
            }
        }
        writeln!(
            out,
            "coverage: {} clauses, {} pinned, {} gaps; {} pinned by a named test only",
            rows.len(),
            rows.len() - gaps.len(),
            gaps.len(),
            tests_only
        )
        .map_err(out_err)?;
        for (clause, m, why) in &broken {
            writeln!(out, "coverage: {clause}: the test {m} is not found ({why})")
                .map_err(out_err)?;
        }
    }
    Ok(if gaps.is_empty() && broken.is_empty() {
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
    let schema = PathBuf::from("schema/case.schema.json");
    match corpus.read_file("schema/case.schema.json") {
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
    if let Some(version) = &corpus.version {
        let changelog = PathBuf::from("CHANGELOG.md");
        let heading = format!("## {version}");
        match corpus.read_file("CHANGELOG.md") {
            Ok(text)
                if String::from_utf8_lossy(&text)
                    .lines()
                    .any(|l| l.trim_end() == heading) => {}
            Ok(_) => problems.push(Problem {
                file: changelog.clone(),
                at: "$".into(),
                message: format!(
                    "no entry for the corpus version {version} (a line `{heading}`, from VERSION)"
                ),
            }),
            Err(e) => problems.push(Problem {
                file: changelog.clone(),
                at: "$".into(),
                message: format!(
                    "cannot read the changelog a versioned corpus needs (VERSION is {version}): {e}"
                ),
            }),
        }
    }
    // The clause list is the repository's, next to a corpus directory; the
    // embedded corpus was linted against it before it was built in.
    let clauses_path = corpus
        .root
        .dir()
        .map(|dir| dir.join("../docs/spec-clauses.md"))
        .unwrap_or_default();
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
    let mut out = crate::output::stdout();
    writeln!(
        out,
        "lint: {} case(s): structure, ids, spec references ok{}",
        corpus.cases.len(),
        if clauses.is_none() {
            " (no docs/spec-clauses.md: anchors not checked)"
        } else {
            ""
        }
    )
    .map_err(out_err)?;
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
    let mut human = Human::new(std::io::sink(), Default::default());
    let output = run(
        &runner,
        &header,
        &selected,
        Vec::new(),
        &mut [&mut failures, &mut human],
    );
    if failures.0.is_empty() {
        writeln!(out, "lint: every case passes against the reference engine").map_err(out_err)?;
        let (p, f, k) = output.summary.tally();
        writeln!(out, "{p} passed, {f} failed, {k} skipped").map_err(out_err)?;
        return Ok(crate::exit::OK);
    }
    Err(Error::new(ErrorKind::Unexpected(format!(
        "{} case(s) do not pass against the reference engine:\n  {}",
        failures.0.len(),
        failures.0.join("\n  ")
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_split_off_the_description() {
        let (d, t) = split_markers(
            "unexpected errors (pinned by test: a.rs::tests::x) (pinned by test: b.rs::y)",
        );
        assert_eq!(d, "unexpected errors");
        assert_eq!(t, vec!["a.rs::tests::x".to_owned(), "b.rs::y".to_owned()]);
        assert_eq!(split_markers("plain"), ("plain".to_owned(), vec![]));
    }

    #[test]
    fn a_test_reference_must_name_an_existing_function() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        std::fs::write(
            dir.path().join("src/a.rs"),
            "#[test]\nfn io_fails() {}\nfn generic<T>() {}\nfn io_fails_twice() {}\n",
        )
        .expect("write");
        let r = |m: &str| resolve_test(dir.path(), m);
        assert_eq!(r("src/a.rs::tests::io_fails"), TestRef::Found);
        assert_eq!(r("src/a.rs::generic"), TestRef::Found);
        assert_eq!(r("pending"), TestRef::Pending);
        for bad in [
            "src/a.rs::tests::io",
            "src/b.rs::io_fails",
            "io_fails",
            "src/a.rs::",
            "src/a.rs::not a name",
        ] {
            assert!(matches!(r(bad), TestRef::Missing(_)), "{bad}");
        }
    }
}
