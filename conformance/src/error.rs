//! The library's error: an opaque [`Error`] carrying an [`ErrorKind`].
//!
//! Messages are lowercase fragments; the command line prints them after
//! `error: ` and maps the kind to an exit code in [`Error::exit_code`].

use std::fmt;

use crate::case::Problem;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad command-line arguments or an impossible combination.
    Usage(String),
    /// Invalid corpus files (every problem found).
    Corpus(Vec<Problem>),
    /// The filters selected no case.
    NothingSelected(String),
    /// Every selected case would be skipped: the run would judge nothing
    /// (refused unless `--allow-empty`).
    NothingJudged(String),
    /// The corpus is not the one pinned by `--corpus-version`/`--corpus-hash`.
    CorpusPin(String),
    /// The baseline cannot be read, or may not be rewritten.
    Baseline(String),
    /// The executor could not be started or spoke no valid protocol.
    ExecutorUnusable(String),
    /// A check found problems (e.g. `patchspec lint` on a corpus whose cases fail).
    Unexpected(String),
    /// Writing a report or a file failed.
    Io(String),
}

/// A command's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

impl Error {
    /// Wrap a kind.
    pub fn new(kind: ErrorKind) -> Error {
        Error { kind }
    }

    /// The kind.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Shorthand for a usage error.
    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Usage(message.into()))
    }

    /// Shorthand for an I/O error.
    pub fn io(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Io(message.into()))
    }

    /// The process exit code for this error: the one mapping of errors to
    /// the table of [`crate::exit`] (exhaustive, no wildcard arm).
    pub fn exit_code(&self) -> i32 {
        use crate::exit::{EXECUTOR_UNUSABLE, UNEXPECTED, USAGE};
        match &self.kind {
            ErrorKind::Usage(_)
            | ErrorKind::Corpus(_)
            | ErrorKind::NothingSelected(_)
            | ErrorKind::NothingJudged(_)
            | ErrorKind::CorpusPin(_)
            | ErrorKind::Baseline(_) => USAGE,
            ErrorKind::ExecutorUnusable(_) => EXECUTOR_UNUSABLE,
            ErrorKind::Unexpected(_) | ErrorKind::Io(_) => UNEXPECTED,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Usage(m) => write!(f, "{m}"),
            ErrorKind::Corpus(problems) => {
                write!(f, "the corpus is invalid ({} problem(s)):", problems.len())?;
                for p in problems {
                    write!(f, "\n  {p}")?;
                }
                Ok(())
            }
            ErrorKind::NothingSelected(m) => write!(f, "no case selected: {m}"),
            ErrorKind::NothingJudged(m) => write!(
                f,
                "nothing to judge: {m}. A gate that judges nothing proves nothing; fix the declaration or the filters, or pass --allow-empty to accept it"
            ),
            ErrorKind::CorpusPin(m) => write!(f, "{m}"),
            ErrorKind::Baseline(m) => write!(f, "{m}"),
            ErrorKind::ExecutorUnusable(m) => write!(f, "executor unusable: {m}"),
            ErrorKind::Unexpected(m) => write!(f, "{m}"),
            ErrorKind::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}
