//! `--junit FILE`: JUnit XML, written when the run finishes. **Stable**:
//! one `<testsuites name="patchspec">`, one `<testsuite>` per tool (sorted),
//! one `<testcase name="<case id>" classname="<tool>">` per case in id order.
//! `fail` → `<failure type="fail">`, `xpass` → `<failure type="xpass">`,
//! `error` → `<error type="<errorKind>">`, `skip` → `<skipped>`; `pass` and
//! `xfail` are successes (an xfail carries the property `outcome=xfail`).
//! The failure's description is the human explanation (unstable text).
//! Every `<testsuite>` carries the property `judge` (`full` or `outcome`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::event::{CaseResult, Event, Reporter};
use crate::outcome::Outcome;

/// Collects cases and writes the XML file at the end.
pub struct Junit {
    path: PathBuf,
    suites: BTreeMap<String, Vec<TestCase>>,
    judge: crate::judge::Judge,
}

impl Junit {
    /// Write to `path` when the run finishes.
    pub fn new(path: PathBuf) -> Junit {
        Junit {
            path,
            suites: BTreeMap::new(),
            judge: crate::judge::Judge::default(),
        }
    }
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
    if !r.stderr.is_empty() {
        tc.set_system_err_lossy(r.stderr.as_bytes());
    }
    tc
}

impl Reporter for Junit {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        match event {
            Event::RunStarted(h) => {
                self.judge = h.judge;
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
            Event::RunFinished(s) => {
                let mut report = Report::new("patchspec");
                report.set_time(s.duration);
                for (tool, cases) in std::mem::take(&mut self.suites) {
                    let mut suite = TestSuite::new(tool);
                    suite.add_property(Property::new("judge", self.judge.as_str()));
                    suite.add_test_cases(cases);
                    report.add_test_suite(suite);
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
