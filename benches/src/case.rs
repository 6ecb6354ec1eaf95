//! One envelope benchmark case, whole: the original file, the expected
//! result, the envelope both ways, the same edit as a unified diff, and the
//! digests — in memory ([`Case::new`]) or written out as a directory that any
//! tool can be pointed at ([`Case::write`]).
//!
//! The written layout (see docs/performance.md):
//!
//! ```text
//! <dir>/ws/big.rs          the original file (the workspace is <dir>/ws)
//! <dir>/forward.patch      apply_patch envelope: original → expected
//! <dir>/reverse.patch      apply_patch envelope: expected → original
//! <dir>/edit.diff          unified diff (git style, -p1): original → expected
//! <dir>/expected.rs        the file after the forward edit
//! <dir>/sha256             "<before> <after>\n"
//! ```

use std::io;
use std::path::{Path, PathBuf};

use patchspec_engine::hash::sha256_hex;

use crate::{
    envelope, expected_after, spread_edits, unified_diff, Direction, SourceFile, FILE_PATH,
};

/// A generated envelope case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The number of hunks.
    pub hunks: usize,
    /// The file before the edit.
    pub original: Vec<u8>,
    /// The file after the edit.
    pub expected: Vec<u8>,
    /// The envelope that makes `expected` from `original`.
    pub forward: String,
    /// The envelope that makes `original` from `expected`.
    pub reverse: String,
    /// The same edit as a unified diff (`patch -p1`, `git apply`).
    pub diff: String,
    /// SHA-256 of `original`.
    pub sha_before: String,
    /// SHA-256 of `expected`.
    pub sha_after: String,
}

/// Where [`Case::write`] put things.
#[derive(Clone, Debug)]
pub struct CasePaths {
    /// The workspace directory, holding [`FILE_PATH`].
    pub workspace: PathBuf,
    /// The forward envelope.
    pub forward: PathBuf,
    /// The reverse envelope.
    pub reverse: PathBuf,
    /// The unified diff.
    pub diff: PathBuf,
    /// The expected result.
    pub expected: PathBuf,
}

impl Case {
    /// The case of `hunks` edits spread through `file`.
    pub fn new(file: &SourceFile, hunks: usize) -> Case {
        let edits = spread_edits(file, hunks);
        let expected = expected_after(file, &edits);
        Case {
            hunks,
            original: file.bytes().to_vec(),
            sha_before: sha256_hex(file.bytes()),
            sha_after: sha256_hex(&expected),
            expected,
            forward: envelope(FILE_PATH, file, &edits, Direction::Forward),
            reverse: envelope(FILE_PATH, file, &edits, Direction::Reverse),
            diff: unified_diff(FILE_PATH, file, &edits),
        }
    }

    /// Write the case under `dir` (created if missing), in the layout of the
    /// module documentation.
    pub fn write(&self, dir: &Path) -> io::Result<CasePaths> {
        let paths = CasePaths {
            workspace: dir.join("ws"),
            forward: dir.join("forward.patch"),
            reverse: dir.join("reverse.patch"),
            diff: dir.join("edit.diff"),
            expected: dir.join("expected.rs"),
        };
        std::fs::create_dir_all(&paths.workspace)?;
        std::fs::write(paths.workspace.join(FILE_PATH), &self.original)?;
        std::fs::write(&paths.forward, &self.forward)?;
        std::fs::write(&paths.reverse, &self.reverse)?;
        std::fs::write(&paths.diff, &self.diff)?;
        std::fs::write(&paths.expected, &self.expected)?;
        std::fs::write(
            dir.join("sha256"),
            format!("{} {}\n", self.sha_before, self.sha_after),
        )?;
        Ok(paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::scratch_dir;
    use crate::SEED;

    #[test]
    fn a_written_case_holds_what_the_layout_says() {
        let file = SourceFile::generate(20_000, SEED);
        let case = Case::new(&file, 3);
        let dir = scratch_dir().expect("temp dir");
        let paths = case.write(dir.path()).expect("write");
        let read = |p: &Path| std::fs::read(p).expect("read");
        assert_eq!(read(&paths.workspace.join(FILE_PATH)), file.bytes());
        assert_eq!(read(&paths.expected), case.expected);
        assert_eq!(read(&paths.forward), case.forward.as_bytes());
        assert_eq!(read(&paths.reverse), case.reverse.as_bytes());
        assert_eq!(read(&paths.diff), case.diff.as_bytes());
        assert_eq!(
            read(&dir.path().join("sha256")),
            format!(
                "{} {}\n",
                sha256_hex(file.bytes()),
                sha256_hex(&case.expected)
            )
            .as_bytes()
        );
    }
}
