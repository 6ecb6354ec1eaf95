//! The corpus's own checks (`patchspec lint`), beyond what loading it checks.
//!
//! Loading ([`crate::case`]) already enforces the schema's structural rules,
//! ids equal to paths, unique ids and summaries. [`structure`] adds: the
//! schema file exists and parses, a versioned corpus (`VERSION`) has its
//! entry in `CHANGELOG.md`, every `spec` reference names one of the spec
//! documents (or `clarifications`) and, when `docs/spec-clauses.md` exists
//! next to the corpus, an anchor listed there (`- \`doc#anchor\`:
//! description`, read by [`crate::coverage::listed_clauses`]).
//! [`against_reference`] then runs every case against the reference engine
//! (in-process). The command maps structural problems to exit 2 and cases
//! failing against the reference to exit 1. That the schema file and the
//! loader's rules agree is not re-checked here but by a test
//! (`conformance/tests/schema.rs`, with a real JSON Schema validator, over
//! every case of the corpus).

use std::path::PathBuf;
use std::time::Duration;

use crate::case::{Case, Corpus, Problem, SPEC_DOCUMENTS};
use crate::error::Error;
use crate::event::{Event, Reporter, RunHeader, RunSummary};
use crate::report::human::Human;
use crate::run::{run, RunConfig, Runner};
use crate::transport::inprocess::InProcess;
use crate::transport::Executor;

/// What [`structure`] found.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    /// Every problem, each with its file and JSON path.
    pub problems: Vec<Problem>,
    /// `docs/spec-clauses.md` was found, so `spec` anchors were checked
    /// against it (not only their documents).
    pub anchors_checked: bool,
}

/// The checks that need no engine: the schema file, the changelog entry of
/// the corpus version, and every case's `spec` references.
pub fn structure(corpus: &Corpus) -> Structure {
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
    let clauses = crate::coverage::listed_clauses(&clauses_path);
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
    Structure {
        problems,
        anchors_checked: clauses.is_some(),
    }
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

/// What [`against_reference`] found.
#[derive(Clone, Debug)]
pub struct ReferenceRun {
    /// `ID: OUTCOME (first line of why)` for each case that did not pass.
    pub failures: Vec<String>,
    /// The run's summary.
    pub summary: RunSummary,
}

/// Run every case of the corpus against the reference engine, in-process,
/// on every core, with a 10 s timeout a case.
pub fn against_reference(corpus: &Corpus) -> Result<ReferenceRun, Error> {
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
    let header = RunHeader::new(
        corpus,
        engine.info(),
        selected.len(),
        "lint".into(),
        &cfg,
        None,
    );
    let mut failures = Failures(Vec::new());
    let mut human = Human::new(std::io::sink(), Default::default());
    let output = run(
        &runner,
        &header,
        &selected,
        Vec::new(),
        &mut [&mut failures, &mut human],
    );
    Ok(ReferenceRun {
        failures: failures.0,
        summary: output.summary,
    })
}
