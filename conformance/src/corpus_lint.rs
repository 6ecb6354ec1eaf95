//! The corpus's own checks (`patchspec lint`), beyond what loading it checks.
//!
//! Loading ([`crate::case`]) already enforces the schema's structural rules,
//! ids equal to paths, unique ids and summaries. [`structure`] adds: the
//! schema file exists and parses, a versioned corpus (`VERSION`) has its
//! entry in `CHANGELOG.md`, every `spec` reference names one of the spec
//! documents (or `clarifications`) and, when `docs/spec-clauses.md` exists
//! next to the corpus, an anchor listed there (`- \`doc#anchor\`:
//! description`, read by [`crate::coverage::listed_clauses`]) that is not
//! marked `(unobservable)` (only engine tests pin those), and no
//! summary claims more than its case checks ([`summary_claims`]: a file the
//! case does not have, a SHA-256 the expectation checks only by format),
//! and every `$sha256Of` names a file of the expected tree
//! ([`hashed_files_exist`]).
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
use crate::event::{Event, Reporter, RunSummary};
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
    let unobservable = crate::coverage::clause_list(&clauses_path)
        .map(|list| crate::coverage::unobservable_clauses(&list))
        .unwrap_or_default();
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
                } else if unobservable.contains(r) {
                    problems.push(Problem {
                        file: file.clone(),
                        at: format!("$.spec[{i}]"),
                        message: format!(
                            "{r:?} is marked (unobservable) in {}: no black-box case can observe it, so none may cite it; cite what the case observes",
                            clauses_path.display()
                        ),
                    });
                }
            }
        }
    }
    for c in &corpus.cases {
        problems.extend(summary_claims(c));
        problems.extend(hashed_files_exist(c));
    }
    Structure {
        problems,
        anchors_checked: clauses.is_some(),
    }
}

/// A summary that claims more than its case checks: it names a file path
/// (`src/a/Z.java`: segments joined by `/`, the last with an extension) that
/// appears nowhere in the case's `given`, `call` or `expect`, or it speaks of
/// a SHA-256 (`SHA-256`, `hash`, `digest`) while every hash member of the
/// expectation (a key containing `sha` or `hash`) is checked only by its
/// format (`$regex`, `$type`, `$any`, `$nonEmpty`, `$all` of those). A reader
/// trusts the summary; an implementation that breaks what it claims must
/// fail the case. Heuristic on purpose: it flags the two shapes of the
/// overclaims found in the corpus (issue 24), not every possible one.
pub fn summary_claims(case: &Case) -> Vec<Problem> {
    use std::sync::OnceLock;
    static PATH: OnceLock<regex::Regex> = OnceLock::new();
    static HASH: OnceLock<regex::Regex> = OnceLock::new();
    let path = PATH.get_or_init(|| {
        regex::Regex::new(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+").expect("a valid regex")
    });
    let hash = HASH.get_or_init(|| {
        regex::Regex::new(r"(?i)sha-?256|\bhash\b|\bdigest\b").expect("a valid regex")
    });
    let file = PathBuf::from(format!("{}.json", case.id));
    let mut problems = Vec::new();
    let body = serde_json::json!([case.given, case.call, case.expect]).to_string();
    for token in path.find_iter(&case.summary).map(|m| m.as_str()) {
        let last = token.rsplit('/').next().unwrap_or(token);
        let has_extension = last.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
        });
        if has_extension && !body.contains(token) {
            problems.push(Problem {
                file: file.clone(),
                at: "$.summary".into(),
                message: format!(
                    "the summary names {token:?}, which the case's given, call and expect do not have"
                ),
            });
        }
    }
    if hash.is_match(&case.summary) {
        let mut format_only = Vec::new();
        let mut exact = false;
        hash_members(&case.expect.result, "$", &mut format_only, &mut exact);
        if !exact && !format_only.is_empty() {
            problems.push(Problem {
                file,
                at: "$.summary".into(),
                message: format!(
                    "the summary speaks of a SHA-256, but the expectation checks it only by its format ({}): pin the value, or do not claim it",
                    format_only.join(", ")
                ),
            });
        }
    }
    problems
}

/// Every `$sha256Of` of a case's pattern names a file of the tree the case
/// expects after the call (its `expect.files`, or its given files when that
/// is `"unchanged"`). The other tie, `$equals`, needs the result document
/// to resolve: the run against the reference engine reports a pointer that
/// names nothing there.
pub fn hashed_files_exist(case: &Case) -> Vec<Problem> {
    fn walk(pattern: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
        use serde_json::Value;
        match pattern {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$sha256Of" {
                        if let Some(path) = v.as_str() {
                            out.push((at.to_owned(), path.to_owned()));
                        }
                    }
                    walk(v, &crate::pattern::child(at, k), out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut named = Vec::new();
    walk(&case.expect.result, "$.expect.result", &mut named);
    let files = crate::judge::expected_files(case);
    named
        .into_iter()
        .filter(|(_, path)| !files.contains_key(path))
        .map(|(at, path)| Problem {
            file: PathBuf::from(format!("{}.json", case.id)),
            at,
            message: format!(
                "$sha256Of names {path:?}, which is not a file of the tree the case expects after the call"
            ),
        })
        .collect()
}

/// The hash members of a pattern: `format_only` gets the JSON path of each one
/// checked only by its format; `exact` is set when one is pinned by a value.
fn hash_members(
    pattern: &serde_json::Value,
    at: &str,
    format_only: &mut Vec<String>,
    exact: &mut bool,
) {
    use serde_json::Value;
    fn is_format_matcher(v: &Value) -> bool {
        match v.as_object() {
            Some(m) if m.len() == 1 => match m.iter().next() {
                Some((k, _)) if matches!(k.as_str(), "$regex" | "$type" | "$any" | "$nonEmpty") => {
                    true
                }
                Some((k, Value::Array(all))) if k == "$all" => all.iter().all(is_format_matcher),
                _ => false,
            },
            _ => false,
        }
    }
    match pattern {
        Value::Object(map) => {
            for (key, value) in map {
                let lower = key.to_ascii_lowercase();
                let path = format!("{at}.{key}");
                if !key.starts_with('$') && (lower.contains("sha") || lower.contains("hash")) {
                    let tied = value.as_object().is_some_and(|m| {
                        m.len() == 1 && (m.contains_key("$sha256Of") || m.contains_key("$equals"))
                    });
                    if is_format_matcher(value) {
                        format_only.push(path.clone());
                    } else if value.is_string() || value.is_null() || tied {
                        *exact = true;
                    }
                }
                hash_members(value, &path, format_only, exact);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                hash_members(item, &format!("{at}[{i}]"), format_only, exact);
            }
        }
        _ => {}
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
    let header = cfg.header(corpus, engine.info(), selected.len(), "lint".into(), None);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(summary: &str, given_file: &str, result: serde_json::Value) -> Case {
        serde_json::from_value(serde_json::json!({
            "id": "grep_file/scope/x", "summary": summary, "spec": ["clarifications#C-ide-walk"],
            "tool": "grep_file", "given": {"files": {given_file: "x\n"}}, "call": {"pattern": "x"},
            "expect": {"result": result, "files": "unchanged"}
        }))
        .expect("a valid case")
    }

    #[test]
    fn a_summary_naming_a_file_the_case_lacks_is_flagged() {
        let c = case(
            "src/a/Z.java comes before src/a.txt",
            "a/z.txt",
            serde_json::json!({"success": true}),
        );
        let problems = summary_claims(&c);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].message.contains("\"src/a/Z.java\""),
            "{}",
            problems[0].message
        );
        assert_eq!(problems[0].at, "$.summary");
    }

    #[test]
    fn files_the_case_has_and_words_with_slashes_pass() {
        let c = case(
            "a/z.txt before a.txt; tab/space and .patchspec/trash/... are words",
            "a/z.txt",
            serde_json::json!({"success": true}),
        );
        assert!(summary_claims(&c).is_empty());
    }

    #[test]
    fn a_sha_claim_checked_only_by_format_is_flagged_and_an_exact_one_passes() {
        let format = serde_json::json!({"success": true, "sha256": {"$all": [{"$regex": "^[0-9a-f]{64}$"}, {"$type": "string"}]}});
        let problems = summary_claims(&case("gives the new SHA-256", "a.txt", format.clone()));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("$.sha256"),
            "{}",
            problems[0].message
        );
        assert!(summary_claims(&case("replaces the line", "a.txt", format)).is_empty());
        let exact = serde_json::json!({"success": true, "file": {"sha256": "ab"}});
        assert!(summary_claims(&case("gives the new SHA-256", "a.txt", exact)).is_empty());
    }

    #[test]
    fn a_sha256_of_a_file_the_case_does_not_expect_is_flagged() {
        let good = case(
            "x",
            "a.txt",
            serde_json::json!({"success": true, "h": {"$sha256Of": "a.txt"}}),
        );
        assert!(hashed_files_exist(&good).is_empty());
        let bad = case(
            "x",
            "a.txt",
            serde_json::json!({"success": true, "h": {"$sha256Of": "b.txt"}}),
        );
        let problems = hashed_files_exist(&bad);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].at, "$.expect.result.h");
        let claim = case(
            "gives the new SHA-256",
            "a.txt",
            serde_json::json!({"success": true, "sha256": {"$sha256Of": "a.txt"}}),
        );
        assert!(summary_claims(&claim).is_empty());
    }
}
