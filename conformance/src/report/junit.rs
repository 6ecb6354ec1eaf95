//! `--junit FILE`: JUnit XML, written when the run finishes. **Stable**:
//! one `<testsuites name="patchspec">`, one `<testsuite>` per tool (sorted),
//! one `<testcase name="<case id>" classname="<tool>">` per case in id order.
//! `fail` → `<failure type="fail">`, `xpass` → `<failure type="xpass">`,
//! `error` → `<error type="<errorKind>">`, `skip` → `<skipped>` (counted in
//! the suite's `skipped` attribute; its `disabled` is always 0); `pass` and
//! `xfail` are successes (an xfail carries the property `outcome=xfail`).
//! A selected case left unrun by `--fail-fast`/`--max-fail` is a testcase
//! with `<skipped message="not run: stopped by …">` (property
//! `outcome=not-run`). Then, when there are any: a `<testsuite
//! name="baseline">` with one `<testcase name="<id>">` holding `<failure
//! type="stale">` per baseline id that is not in the corpus, and a
//! `<testsuite name="run">` with one `<testcase name="run-error-<n>">`
//! holding `<error type="run">` per violation blamed on no case. So the XML
//! counts a failure whenever the exit code is 1.
//!
//! Every `<testsuite>` carries the run's identity as `<properties>`:
//! `runner` (`patchspec <version>`, the judge), `corpus.version`,
//! `corpus.hash` (`sha256:<hex>`), `corpus.cases`, `executor.transport`,
//! `executor.command`, `executor.implementation` (`<name> <version>`, or
//! `undeclared`) and `executor.declaredBy` (`builtin`, `hello`, `none`).
//! The failure's description is the human explanation (unstable text).
//! Every `<testsuite>` carries the property `judge` (`full` or `outcome`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::event::{CaseResult, Event, Reporter, RunHeader};
use crate::outcome::Outcome;

/// Collects cases and writes the XML file at the end.
pub struct Junit {
    path: PathBuf,
    suites: BTreeMap<String, Vec<TestCase>>,
    properties: Vec<(String, String)>,
}

impl Junit {
    /// Write to `path` when the run finishes.
    pub fn new(path: PathBuf) -> Junit {
        Junit {
            path,
            suites: BTreeMap::new(),
            properties: Vec::new(),
        }
    }
}

/// The run's identity, as suite properties.
fn identity(h: &RunHeader) -> Vec<(String, String)> {
    let e = &h.executor;
    [
        ("runner", format!("patchspec {}", h.runner_version)),
        ("judge", h.judge.as_str().to_owned()),
        (
            "corpus.version",
            h.corpus_version.clone().unwrap_or_else(|| "none".into()),
        ),
        ("corpus.hash", format!("sha256:{}", h.corpus_hash)),
        ("corpus.cases", h.corpus_cases.to_string()),
        ("executor.transport", e.transport.to_owned()),
        ("executor.command", e.command.join(" ")),
        (
            "executor.implementation",
            e.implementation
                .as_ref()
                .map(|i| format!("{} {}", i.name, i.version))
                .unwrap_or_else(|| "undeclared".into()),
        ),
        ("executor.declaredBy", e.declared_by.as_str().to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn testcase(r: &CaseResult) -> TestCase {
    let explain = || super::render::explain(r);
    let status = match r.outcome {
        Outcome::Pass | Outcome::Xfail => TestCaseStatus::success(),
        Outcome::Skip => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(r.detail.message.clone().unwrap_or_default());
            s
        }
        Outcome::Fail | Outcome::Xpass => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(r.outcome.as_str());
            let first = r.detail.result.first().map(ToString::to_string);
            let message = match r.outcome {
                Outcome::Xpass => "passed, but the baseline lists it as a known failure".to_owned(),
                Outcome::Pass | Outcome::Fail | Outcome::Error | Outcome::Skip | Outcome::Xfail => {
                    first.unwrap_or_else(|| "the tree after the call differs".into())
                }
            };
            s.set_message(message);
            s.set_description(explain());
            s
        }
        Outcome::Error => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_type(r.detail.error_kind.unwrap_or("error"));
            s.set_message(r.detail.message.clone().unwrap_or_default());
            s.set_description(explain());
            s
        }
    };
    let mut tc = TestCase::new(r.id.clone(), status);
    tc.set_classname(r.tool.clone());
    tc.set_time(r.duration);
    tc.add_property(Property::new("outcome", r.outcome.as_str()));
    if r.amended {
        tc.add_property(Property::new("amended", "true"));
    }
    if !r.stderr.is_empty() {
        tc.set_system_err_lossy(r.stderr.as_bytes());
    }
    tc
}

impl Junit {
    fn suite(&self, name: String, cases: Vec<TestCase>) -> TestSuite {
        let mut suite = TestSuite::new(name);
        for (k, v) in &self.properties {
            suite.add_property(Property::new(k.clone(), v.clone()));
        }
        suite.add_test_cases(cases);
        // quick-junit counts skips as `disabled`; JUnit consumers (Ant,
        // Surefire, GitHub and GitLab reports) read them from `skipped`.
        let skipped = std::mem::take(&mut suite.disabled);
        suite
            .extra
            .insert("skipped".into(), skipped.to_string().into());
        suite
    }
}

impl Reporter for Junit {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::RunStarted(h) => {
                self.properties = identity(h);
                Ok(())
            }
            Event::CaseProgress { .. } => Ok(()),
            Event::CaseFinished(r) => {
                self.suites
                    .entry(r.tool.clone())
                    .or_default()
                    .push(testcase(r));
                Ok(())
            }
            Event::CaseAmended(r) => {
                let cases = self.suites.entry(r.tool.clone()).or_default();
                match cases.iter_mut().find(|tc| tc.name.as_str() == r.id) {
                    Some(tc) => *tc = testcase(r),
                    None => cases.push(testcase(r)),
                }
                Ok(())
            }
            Event::RunFinished(s) => {
                let mut suites = std::mem::take(&mut self.suites);
                let why = s.stopped.as_deref().unwrap_or("an unusable executor");
                for (id, tool) in &s.not_run_cases {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(format!("not run: stopped by {why}"));
                    let mut tc = TestCase::new(id.clone(), status);
                    tc.set_classname(tool.clone());
                    tc.add_property(Property::new("outcome", "not-run"));
                    let cases = suites.entry(tool.clone()).or_default();
                    cases.push(tc);
                }
                let mut report = Report::new("patchspec");
                report.set_time(s.duration);
                for (tool, mut cases) in suites {
                    cases.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
                    report.add_test_suite(self.suite(tool, cases));
                }
                if !s.stale.is_empty() {
                    let cases = s
                        .stale
                        .iter()
                        .map(|id| {
                            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                            status.set_type("stale");
                            status.set_message(
                                "listed in the baseline but not in the corpus: remove it",
                            );
                            let mut tc = TestCase::new(id.clone(), status);
                            tc.set_classname("baseline");
                            tc
                        })
                        .collect();
                    report.add_test_suite(self.suite("baseline".into(), cases));
                }
                if !s.run_errors.is_empty() {
                    let cases = s
                        .run_errors
                        .iter()
                        .enumerate()
                        .map(|(i, e)| {
                            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                            status.set_type("run");
                            status.set_message(e.clone());
                            let mut tc = TestCase::new(format!("run-error-{}", i + 1), status);
                            tc.set_classname("run");
                            tc
                        })
                        .collect();
                    report.add_test_suite(self.suite("run".into(), cases));
                }
                let xml = report.to_string().map_err(std::io::Error::other)?;
                std::fs::write(&self.path, xml).map_err(|e| {
                    std::io::Error::new(
                        e.kind(),
                        format!("cannot write {}: {e}", self.path.display()),
                    )
                })
            }
        }
    }
}
