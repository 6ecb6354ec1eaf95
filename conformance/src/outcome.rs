//! Outcomes: what happened to one case, before and after the baseline.
//!
//! [`RawOutcome`] is what the run itself found (pass, fail, error, skip);
//! [`Outcome`] is the verdict after the baseline (known failures) is applied,
//! adding xfail and xpass. Whether an outcome breaks the gate is decided in
//! one exhaustive `match` ([`Outcome::is_unexpected`]), with no wildcard arm,
//! so a new outcome cannot slip through unclassified.

use std::fmt;

/// What the run found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RawOutcome {
    /// Result and tree as expected.
    Pass,
    /// A valid answer, but a wrong result document or tree (or a write outside the workspace).
    Fail,
    /// No valid answer: crash, timeout, protocol violation, mismatched toolCallId, or a runner-side problem.
    Error,
    /// Not run: a tool or tag the executor does not support.
    Skip,
}

/// The verdict after the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Passed, and not listed in the baseline.
    Pass,
    /// Failed, and not listed (or listed with another outcome).
    Fail,
    /// Errored, and not listed (or listed with another outcome).
    Error,
    /// Skipped.
    Skip,
    /// Failed or errored exactly as the baseline says.
    Xfail,
    /// Listed in the baseline, but passed.
    Xpass,
}

/// Every outcome, in report order.
pub const ALL_OUTCOMES: [Outcome; 6] = [
    Outcome::Pass,
    Outcome::Fail,
    Outcome::Error,
    Outcome::Skip,
    Outcome::Xfail,
    Outcome::Xpass,
];

impl Outcome {
    /// The stable name used in every report: `pass`, `fail`, `error`, `skip`, `xfail`, `xpass`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Error => "error",
            Outcome::Skip => "skip",
            Outcome::Xfail => "xfail",
            Outcome::Xpass => "xpass",
        }
    }

    /// Does this outcome fail the gate?
    pub fn is_unexpected(self) -> bool {
        match self {
            Outcome::Pass | Outcome::Skip | Outcome::Xfail => false,
            Outcome::Fail | Outcome::Error | Outcome::Xpass => true,
        }
    }

    /// Does it count as "passed" in the closing `N passed, N failed, N skipped` line?
    /// Pass and xfail (as expected) count as passed; fail, error and xpass as
    /// failed; skip as skipped.
    pub fn tally(self) -> Tally {
        match self {
            Outcome::Pass | Outcome::Xfail => Tally::Passed,
            Outcome::Fail | Outcome::Error | Outcome::Xpass => Tally::Failed,
            Outcome::Skip => Tally::Skipped,
        }
    }
}

/// The three columns of the closing line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tally {
    /// As expected.
    Passed,
    /// Breaks the gate.
    Failed,
    /// Not run.
    Skipped,
}

impl RawOutcome {
    /// `pass`, `fail`, `error` or `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            RawOutcome::Pass => "pass",
            RawOutcome::Fail => "fail",
            RawOutcome::Error => "error",
            RawOutcome::Skip => "skip",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for RawOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
