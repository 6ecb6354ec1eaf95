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
//!
//! [`Reporters`] is the set one `check` run writes to, from its report
//! options ([`Destinations`]): built here, so the command only names them.

pub mod causes;
pub mod human;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod render;

use std::io::Write;
use std::path::{Path, PathBuf};

use self::human::Human;
use self::jsonl::JsonLines;
use self::junit::Junit;
use self::markdown::Markdown;
use crate::error::Error;
use crate::event::Reporter;

/// The report written to stdout (or `--report-file`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Readable (unstable layout).
    Human,
    /// JSON lines (stable).
    Json,
    /// Markdown summary for a CI step summary.
    Markdown,
}

/// Which reports a run writes, and where (`check`'s report options).
#[derive(Clone, Copy, Debug)]
pub struct Destinations<'a> {
    /// The report on stdout, or in `report_file`.
    pub format: ReportFormat,
    /// Where the `format` report goes instead of stdout.
    pub report_file: Option<&'a Path>,
    /// Also JUnit XML to this file.
    pub junit: Option<&'a Path>,
    /// The human report lists every case.
    pub verbose: bool,
}

/// The reporters of one run: the human report always (on stdout, or on
/// stderr when the chosen machine format takes stdout), the chosen format,
/// and JUnit when asked.
pub struct Reporters {
    human: Human<Box<dyn Write>>,
    json: Option<JsonLines<Box<dyn Write>>>,
    markdown: Option<Markdown<Box<dyn Write>>>,
    junit: Option<Junit>,
}

impl Reporters {
    /// Open the reporters `to` names; a report file that cannot be created
    /// is an I/O error.
    pub fn open(to: &Destinations<'_>) -> Result<Reporters, Error> {
        let stdout_taken = to.format != ReportFormat::Human && to.report_file.is_none();
        let human_out: Box<dyn Write> = if stdout_taken {
            Box::new(crate::output::stderr())
        } else {
            Box::new(crate::output::stdout())
        };
        let human = Human::new(
            human_out,
            human::Options {
                progress: human::progress_wanted(),
                verbose: to.verbose,
            },
        );
        let machine_out = || -> Result<Box<dyn Write>, Error> {
            match to.report_file {
                Some(p) => Ok(Box::new(std::io::BufWriter::new(
                    std::fs::File::create(p)
                        .map_err(|e| Error::io(format!("cannot write {}: {e}", p.display())))?,
                ))),
                None => Ok(Box::new(crate::output::stdout())),
            }
        };
        let (mut json, mut markdown) = (None, None);
        match to.format {
            ReportFormat::Human => {}
            ReportFormat::Json => json = Some(JsonLines::new(machine_out()?)),
            ReportFormat::Markdown => markdown = Some(Markdown::new(machine_out()?)),
        }
        Ok(Reporters {
            human,
            json,
            markdown,
            junit: to.junit.map(PathBuf::from).map(Junit::new),
        })
    }

    /// Every reporter, for [`crate::run::run`].
    pub fn all(&mut self) -> Vec<&mut dyn Reporter> {
        let mut all: Vec<&mut dyn Reporter> = vec![&mut self.human];
        if let Some(j) = self.json.as_mut() {
            all.push(j);
        }
        if let Some(m) = self.markdown.as_mut() {
            all.push(m);
        }
        if let Some(j) = self.junit.as_mut() {
            all.push(j);
        }
        all
    }
}
