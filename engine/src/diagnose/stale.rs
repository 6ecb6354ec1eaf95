//! `apply_patch`: a file whose hash is not the one given, diagnosed by
//! what the first hunk that no longer applies to it shows.

use crate::envelope::Hunk;

use super::ambiguous::multiple_matches;
use super::not_found::diagnose_hunk;
use super::{Cause, Diagnosis};

/// Diagnose an `Update` section whose expected hash does not match the
/// file: `Some` with `file_changed` first, then what the first hunk that no
/// longer applies to the current file shows (`hunk_index`); `None` when
/// there are no hunks.
pub fn stale_file(current: &[u8], hunks: &[Hunk<'_>]) -> Option<Diagnosis> {
    stale_file_inner(current, hunks).map(Diagnosis::total)
}

fn stale_file_inner(current: &[u8], hunks: &[Hunk<'_>]) -> Option<Diagnosis> {
    if hunks.is_empty() {
        return None;
    }
    let failing = crate::matching::splice_hunks(current, hunks).err();
    let Some(err) = failing else {
        let mut d = Diagnosis::new(
            vec![Cause::FileChanged],
            "the file changed since the patch was written (its SHA-256 is not the one given), though every hunk still matches it: re-read the file, check the hunks still mean what you want, and send its current hash".into(),
        );
        d.expected_lines = 0;
        return Some(d);
    };
    let k = err.hunk_index;
    let mut d = match err.failure {
        crate::matching::HunkFailure::MultipleMatches { count: total, .. } => {
            multiple_matches(current, hunks, k, total)
        }
        _ => diagnose_hunk(current, hunks, k),
    };
    d.causes.retain(|&c| c != Cause::FileChanged);
    d.causes.insert(0, Cause::FileChanged);
    d.hunk_index = Some(k);
    d.hint = format!(
        "the file changed since the patch was written (its SHA-256 is not the one given); in the file as it is now, hunk {k}: {}",
        d.hint
    );
    Some(d)
}
