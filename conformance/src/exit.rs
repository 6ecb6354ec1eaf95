//! Exit codes of `patchspec check` (and the other commands): a documented,
//! append-only table. CI scripts depend on these numbers; never renumber,
//! only add.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every selected case ended as expected (pass, skip, or xfail) |
//! | 1 | unexpected results: a fail, error or xpass, a stale baseline entry, a run-level protocol error or write outside the workspaces, or selected cases left unrun by `--fail-fast`/`--max-fail` |
//! | 2 | usage or corpus error: bad arguments, invalid case files, zero cases selected, every selected case skipped (unless `--allow-empty`), a corpus that is not the pinned one (`--corpus-version`, `--corpus-hash`), unreadable baseline, refused baseline rewrite |
//! | 3 | the executor is unusable: it could not be started, failed the handshake, declared a tool the corpus does not know, or spoke no valid protocol on the first case |
//!
//! The mapping from an error to its code is the single exhaustive `match` in
//! [`code_for`]; there is no wildcard arm.

use crate::error::ErrorKind;

/// Everything ran as expected.
pub const OK: i32 = 0;
/// Unexpected results (the gate fails).
pub const UNEXPECTED: i32 = 1;
/// Usage or corpus error.
pub const USAGE: i32 = 2;
/// The executor is unusable.
pub const EXECUTOR_UNUSABLE: i32 = 3;

/// The exit code for a command's error.
pub fn code_for(kind: &ErrorKind) -> i32 {
    match kind {
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

/// The exit code for a finished run: [`UNEXPECTED`] when anything broke the
/// gate (see [`crate::event::RunSummary::is_unexpected`]), else [`OK`].
pub fn for_summary(summary: &crate::event::RunSummary) -> i32 {
    if summary.is_unexpected() {
        UNEXPECTED
    } else {
        OK
    }
}
