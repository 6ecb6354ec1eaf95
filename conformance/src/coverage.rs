//! Spec-clause coverage (`patchspec coverage`): which cases, and which named
//! tests, pin each clause of `docs/spec-clauses.md`.
//!
//! The clause list is the lines `- \`doc#anchor\`: description` of that
//! file ([`clause_list`]). A clause is pinned by every case whose `spec`
//! cites it, and by the named tests its line points to (``(pinned by test:
//! FILE::…::NAME)``, for what only fault injection or a race can reach; the
//! test must exist: [`resolve_test`]). A clause with neither is a gap; a
//! gap, or a test reference that names no existing function, makes the
//! coverage incomplete ([`Coverage::is_complete`]). A clause no black-box
//! case can observe (the trash, staged writes, the journal, the lock) says
//! so with ``(unobservable)`` ([`UNOBSERVABLE_MARKER`]): only its named tests
//! pin it, it is reported apart from the case-pinned clauses, and a case
//! citing it is an error ([`Coverage::miscited`]): a case cannot pin what
//! it cannot see. `patchspec lint` reads
//! the same list to check that every case's `spec` anchor is listed
//! ([`crate::corpus_lint`]).
//!
//! The command itself (`cmd_corpus::coverage`) only finds the files and
//! prints [`Coverage::to_json`] or [`Coverage::write_text`].

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::case::Corpus;

/// Clauses listed in docs/spec-clauses.md (`- \`doc#anchor\`: description`), in order.
pub fn clause_list(path: &Path) -> Option<Vec<(String, String)>> {
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
pub fn listed_clauses(path: &Path) -> Option<BTreeSet<String>> {
    clause_list(path).map(|l| l.into_iter().map(|(r, _)| r).collect())
}

/// The marker of a clause pinned by a named test instead of (or besides) a
/// case: ``(pinned by test: FILE::…::NAME)`` at the end of its line, FILE
/// relative to the repository root. `(pinned by test: pending)` holds the
/// place of a test not yet written: the clause stays a gap.
const TEST_MARKER: &str = "(pinned by test: ";

/// The marker of a clause no black-box case can observe: only its named
/// tests pin it, and no case may cite it.
pub const UNOBSERVABLE_MARKER: &str = "(unobservable)";

/// The clauses of a clause list marked [`UNOBSERVABLE_MARKER`].
pub fn unobservable_clauses(clauses: &[(String, String)]) -> BTreeSet<String> {
    clauses
        .iter()
        .filter(|(_, d)| d.contains(UNOBSERVABLE_MARKER))
        .map(|(r, _)| r.clone())
        .collect()
}

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
pub enum TestRef {
    /// The file exists and declares `fn NAME`.
    Found,
    /// `pending`: a placeholder for a test not yet written.
    Pending,
    /// Malformed, or the file or the function is not there.
    Missing(String),
}

/// Check a marker `FILE::…::NAME` under `repo`: FILE must exist and contain
/// `fn NAME(` or `fn NAME<`.
pub fn resolve_test(repo: &Path, marker: &str) -> TestRef {
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

/// One clause of the list, with what pins it.
#[derive(Clone, Debug)]
pub struct Row<'a> {
    /// `doc#anchor`.
    pub clause: &'a str,
    /// The description, without its test markers.
    pub description: String,
    /// The ids of the cases whose `spec` cites the clause, in corpus order.
    pub cases: Vec<&'a str>,
    /// Each test marker, and what it names.
    pub tests: Vec<(String, TestRef)>,
    /// Marked [`UNOBSERVABLE_MARKER`]: only the tests pin it.
    pub unobservable: bool,
}

impl Row<'_> {
    /// Some test marker names an existing test.
    pub fn by_test(&self) -> bool {
        self.tests.iter().any(|(_, t)| *t == TestRef::Found)
    }

    /// Neither a case nor an existing test pins the clause (for an
    /// unobservable one: no existing test; its cases do not count).
    pub fn is_gap(&self) -> bool {
        if self.unobservable {
            return !self.by_test();
        }
        self.cases.is_empty() && !self.by_test()
    }
}

/// Every listed clause with what pins it.
#[derive(Clone, Debug)]
pub struct Coverage<'a> {
    /// The clauses, in the list's order.
    pub rows: Vec<Row<'a>>,
}

impl<'a> Coverage<'a> {
    /// Match the `clauses` of [`clause_list`] with the corpus's cases, and
    /// resolve their test markers under `repo` (the repository root).
    pub fn new(corpus: &'a Corpus, clauses: &'a [(String, String)], repo: &Path) -> Coverage<'a> {
        let mut pinned: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in &corpus.cases {
            for r in &c.spec {
                pinned.entry(r.as_str()).or_default().push(c.id.as_str());
            }
        }
        let rows = clauses
            .iter()
            .map(|(r, d)| {
                let (description, markers) = split_markers(d);
                let unobservable = description.contains(UNOBSERVABLE_MARKER);
                let description = description
                    .replace(UNOBSERVABLE_MARKER, "")
                    .trim()
                    .to_owned();
                Row {
                    unobservable,
                    clause: r,
                    description,
                    cases: pinned.get(r.as_str()).cloned().unwrap_or_default(),
                    tests: markers
                        .into_iter()
                        .map(|m| {
                            let found = resolve_test(repo, &m);
                            (m, found)
                        })
                        .collect(),
                }
            })
            .collect();
        Coverage { rows }
    }

    /// The clauses nothing pins.
    pub fn gaps(&self) -> Vec<&Row<'a>> {
        self.rows.iter().filter(|r| r.is_gap()).collect()
    }

    /// How many observable clauses only a named test pins.
    pub fn tests_only(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| !r.unobservable && r.cases.is_empty() && r.by_test())
            .count()
    }

    /// The clauses marked unobservable.
    pub fn unobservable(&self) -> Vec<&Row<'a>> {
        self.rows.iter().filter(|r| r.unobservable).collect()
    }

    /// `(clause, case)` for each case citing an unobservable clause.
    pub fn miscited(&self) -> Vec<(&str, &str)> {
        self.rows
            .iter()
            .filter(|r| r.unobservable)
            .flat_map(|r| r.cases.iter().map(move |c| (r.clause, *c)))
            .collect()
    }

    /// `(clause, marker, why)` for each test marker that names no test.
    pub fn broken(&self) -> Vec<(&str, &str, &str)> {
        self.rows
            .iter()
            .flat_map(|r| {
                r.tests.iter().filter_map(move |(m, t)| match t {
                    TestRef::Missing(why) => Some((r.clause, m.as_str(), why.as_str())),
                    TestRef::Found | TestRef::Pending => None,
                })
            })
            .collect()
    }

    /// No gap, no broken test reference, no case citing an unobservable
    /// clause: the command exits 0.
    pub fn is_complete(&self) -> bool {
        self.gaps().is_empty() && self.broken().is_empty() && self.miscited().is_empty()
    }

    /// `patchspec coverage --json`: the clauses with their cases and tests,
    /// the gaps, and the missing tests.
    pub fn to_json(&self) -> Value {
        json!({
            "clauses": self.rows.iter().map(|r| json!({
                "clause": r.clause,
                "description": r.description,
                "cases": r.cases,
                "tests": r.tests.iter().map(|(m, t)| json!({
                    "test": m,
                    "status": match t {
                        TestRef::Found => "found",
                        TestRef::Pending => "pending",
                        TestRef::Missing(_) => "missing",
                    },
                })).collect::<Vec<_>>(),
                "unobservable": r.unobservable,
                "pinnedBy": if r.unobservable { if r.by_test() { "test (unobservable)" } else { "nothing" } } else if !r.cases.is_empty() { "cases" } else if r.by_test() { "test" } else { "nothing" },
            })).collect::<Vec<_>>(),
            "gaps": self.gaps().iter().map(|r| r.clause).collect::<Vec<_>>(),
            "miscited": self.miscited().iter().map(|(clause, case)| json!({"clause": clause, "case": case})).collect::<Vec<_>>(),
            "missingTests": self.broken().iter().map(|(c, m, why)| json!({
                "clause": c, "test": m, "problem": why,
            })).collect::<Vec<_>>(),
        })
    }

    /// `patchspec coverage [--gaps]`: each clause (only the gaps with
    /// `gaps_only`) with up to five of its cases and its tests, then the
    /// totals and every broken test reference.
    pub fn write_text(&self, out: &mut dyn Write, gaps_only: bool) -> std::io::Result<()> {
        for row in &self.rows {
            if gaps_only && !row.is_gap() {
                continue;
            }
            let n = row.cases.len();
            let what = if row.unobservable {
                "unobservable: pinned by test only".to_owned()
            } else if n == 0 && row.by_test() {
                "pinned by test".to_owned()
            } else {
                format!("{n} case{}", if n == 1 { "" } else { "s" })
            };
            writeln!(out, "{}  ({what})  {}", row.clause, row.description)?;
            for id in row.cases.iter().take(if gaps_only { 0 } else { 5 }) {
                writeln!(out, "    {id}")?;
            }
            if n > 5 && !gaps_only {
                writeln!(out, "    ... and {} more", n - 5)?;
            }
            for (m, t) in &row.tests {
                match t {
                    TestRef::Found if !gaps_only => writeln!(out, "    test: {m}")?,
                    TestRef::Found => {}
                    TestRef::Pending => writeln!(out, "    test: pending (not yet written)")?,
                    TestRef::Missing(why) => writeln!(out, "    test NOT FOUND: {m} ({why})")?,
                }
            }
        }
        let gaps = self.gaps().len();
        let unobservable = self.unobservable();
        let unobservable_pinned = unobservable.iter().filter(|r| r.by_test()).count();
        writeln!(
            out,
            "coverage: {} clauses, {} pinned, {} gaps; {} pinned by a named test only; {} unobservable by a black-box case, pinned by an engine test",
            self.rows.len(),
            self.rows.len() - gaps,
            gaps,
            self.tests_only(),
            unobservable_pinned,
        )?;
        for (clause, case) in self.miscited() {
            writeln!(
                out,
                "coverage: {case} cites {clause}, which no black-box case can observe (unobservable): cite what the case observes"
            )?;
        }
        for (clause, m, why) in &self.broken() {
            writeln!(out, "coverage: {clause}: the test {m} is not found ({why})")?;
        }
        Ok(())
    }
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

    #[test]
    fn unobservable_clauses_count_only_their_tests_and_refuse_citations() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/a.rs"), "fn trash() {}\n").expect("write");
        let corpus = crate::case::Corpus {
            root: crate::case::CorpusRoot::Embedded,
            cases: vec![],
            version: None,
            content_hash: String::new(),
        };
        let clauses = vec![
            (
                "d#a".to_owned(),
                "the trash (unobservable) (pinned by test: src/a.rs::trash)".to_owned(),
            ),
            ("d#b".to_owned(), "staged (unobservable)".to_owned()),
        ];
        let cov = Coverage::new(&corpus, &clauses, dir.path());
        assert!(cov.rows[0].unobservable && !cov.rows[0].is_gap());
        assert_eq!(cov.rows[0].description, "the trash");
        assert!(
            cov.rows[1].is_gap(),
            "an unobservable clause without a test is a gap"
        );
        assert_eq!(unobservable_clauses(&clauses).len(), 2);
        let mut row = cov.rows[0].clone();
        row.cases.push("x/y");
        let cited = Coverage { rows: vec![row] };
        assert_eq!(cited.miscited(), [("d#a", "x/y")]);
        assert!(!cited.is_complete());
    }
}
