//! Reporters: consumers of [`crate::event::Event`]s.
//!
//! - [`human`]: progress and readable failure explanations. **Unstable**:
//!   its layout may change in any release; only its last line,
//!   `N passed, N failed, N skipped`, is kept as is.
//! - [`jsonl`]: `--report json`, JSON lines. **Stable**, specified field by
//!   field in its module docs; fields are only ever added.
//! - [`junit`]: `--junit FILE`, JUnit XML. **Stable**: one `<testsuite>` per
//!   tool, one `<testcase>` per case, fail → `<failure>`, error → `<error>`,
//!   skip → `<skipped>`.
//! - [`markdown`]: `--report markdown`, a summary table for a CI step summary.
//!   Stable in content, not in layout.
//!
//! [`render`] holds the shared readable renderings (diffs with invisible
//! characters made visible, params as text); [`causes`] groups the failures
//! that share a cause for the human report.

pub mod causes;
pub mod human;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod render;
