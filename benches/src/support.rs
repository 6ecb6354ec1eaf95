//! What the bench binaries share besides the generators: which inputs to
//! use (full sizes when measuring, small ones under `cargo test`), the I/O
//! floor, and the flip between a patch and its inverse that lets a bench
//! apply an edit on disk over and over without restoring the file.
//!
//! Nothing here depends on criterion, so the helpers stay testable and the
//! library keeps no dev-only dependency.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use patchspec_engine::hash::sha256_hex;

/// How a bench binary was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// `cargo bench`: measure, on the full-size inputs.
    Measure,
    /// `cargo test` (no `--bench` argument) or `--bench --test`: run every
    /// bench once, on small inputs, to prove it still works.
    Test,
}

impl RunMode {
    /// The mode of this process, decided as criterion decides it: `--bench`
    /// without `--test` measures; anything else is a test run.
    pub fn from_args() -> RunMode {
        Self::from(std::env::args().skip(1))
    }

    /// The mode for explicit arguments (without the program name).
    pub fn from(args: impl IntoIterator<Item = impl AsRef<str>>) -> RunMode {
        let (mut bench, mut test) = (false, false);
        for arg in args {
            match arg.as_ref() {
                "--bench" => bench = true,
                "--test" => test = true,
                _ => {}
            }
        }
        if bench && !test {
            RunMode::Measure
        } else {
            RunMode::Test
        }
    }

    /// The file sizes to generate, in bytes. `PATCHSPEC_BENCH_SIZES`
    /// (comma-separated sizes such as `1MB,10MB`) narrows a measuring run.
    pub fn file_sizes(self) -> Vec<usize> {
        match self {
            RunMode::Test => vec![64_000],
            RunMode::Measure => match std::env::var("PATCHSPEC_BENCH_SIZES") {
                Ok(list) if !list.trim().is_empty() => list
                    .split(',')
                    .map(|s| {
                        parse_size(s.trim())
                            .unwrap_or_else(|| panic!("PATCHSPEC_BENCH_SIZES: bad size {s:?}"))
                    })
                    .collect(),
                _ => vec![1_000_000, 10_000_000, 100_000_000],
            },
        }
    }

    /// How many hunks the envelope benches use.
    pub fn hunk_counts(self) -> Vec<usize> {
        match self {
            RunMode::Test => vec![1, 10, 100],
            RunMode::Measure => vec![1, 100, 10_000],
        }
    }

    /// How many changes the line-patch apply benches use.
    pub fn line_changes(self) -> usize {
        match self {
            RunMode::Test => 100,
            RunMode::Measure => 10_000,
        }
    }

    /// The size of the envelope the parse bench reads.
    pub fn parse_bytes(self) -> usize {
        match self {
            RunMode::Test => 200_000,
            RunMode::Measure => 50_000_000,
        }
    }

    /// How many changes the validator bench checks.
    pub fn validate_changes(self) -> usize {
        match self {
            RunMode::Test => 1_000,
            RunMode::Measure => 100_000,
        }
    }

    /// The (file size, hunks) cases of the process-level peer comparison.
    pub fn peer_cases(self) -> Vec<(usize, usize)> {
        match self {
            RunMode::Test => vec![(64_000, 10)],
            RunMode::Measure => {
                let sizes = self.file_sizes();
                [
                    (1_000_000, 100),
                    (10_000_000, 10_000),
                    (100_000_000, 1),
                    (100_000_000, 10_000),
                ]
                .into_iter()
                .filter(|(s, _)| sizes.contains(s))
                .collect()
            }
        }
    }
}

/// Parse `64KB`, `1MB`, `100MB` or a plain byte count (decimal units).
pub fn parse_size(text: &str) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    let (digits, unit) = match upper.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => upper.split_at(i),
        None => (upper.as_str(), ""),
    };
    let n: usize = digits.parse().ok()?;
    let unit = match unit {
        "" | "B" => 1,
        "KB" | "K" => 1_000,
        "MB" | "M" => 1_000_000,
        "GB" | "G" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// The on-disk floor: what any atomic rewrite of `dir/name` costs at least.
/// Read the file, SHA-256 it, write the bytes to a sibling temp file, fsync
/// it, rename it over the file. Returns the digest so it is not optimised away.
pub fn floor_on_disk(dir: &Path, name: &str) -> io::Result<String> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path)?;
    let digest = sha256_hex(&bytes);
    let tmp = dir.join(format!("{name}.floor.tmp"));
    let mut file = File::create(&tmp)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, &path)?;
    Ok(digest)
}

/// The in-memory floor: one plain copy of the bytes.
pub fn floor_in_memory(bytes: &[u8]) -> Vec<u8> {
    bytes.to_vec()
}

/// An edit and its inverse, taken in turn, so that a bench can apply an edit
/// to a file on disk any number of times and leave it as it found it.
#[derive(Clone, Debug)]
pub struct Flip<T> {
    forward: T,
    reverse: T,
    applied: bool,
}

impl<T> Flip<T> {
    /// Start with the file in its original state.
    pub fn new(forward: T, reverse: T) -> Flip<T> {
        Flip {
            forward,
            reverse,
            applied: false,
        }
    }

    /// The forward edit.
    pub fn forward_edit(&self) -> &T {
        &self.forward
    }

    /// The edit to apply next (forward, then reverse, then forward ...).
    pub fn step(&mut self) -> &T {
        let edit = if self.applied {
            &self.reverse
        } else {
            &self.forward
        };
        self.applied = !self.applied;
        edit
    }

    /// The inverse to apply to get back to the original, if the last edit
    /// applied was the forward one.
    pub fn restore(&mut self) -> Option<&T> {
        if self.applied {
            self.applied = false;
            Some(&self.reverse)
        } else {
            None
        }
    }
}

/// A scratch directory for on-disk benches: under `PATCHSPEC_BENCH_DIR` when
/// set (to pick the filesystem), else the system temp directory.
pub fn scratch_dir() -> io::Result<tempfile::TempDir> {
    match std::env::var_os("PATCHSPEC_BENCH_DIR") {
        Some(dir) => tempfile::Builder::new()
            .prefix("patchspec-bench-")
            .tempdir_in(dir),
        None => tempfile::Builder::new()
            .prefix("patchspec-bench-")
            .tempdir(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_follows_criterion() {
        assert_eq!(RunMode::from(["--bench"]), RunMode::Measure);
        assert_eq!(RunMode::from(["--bench", "envelope"]), RunMode::Measure);
        assert_eq!(RunMode::from(["--bench", "--test"]), RunMode::Test);
        assert_eq!(RunMode::from(Vec::<String>::new()), RunMode::Test);
        assert_eq!(RunMode::from(["--nocapture"]), RunMode::Test);
    }

    #[test]
    fn sizes_parse_in_decimal_units() {
        assert_eq!(parse_size("64KB"), Some(64_000));
        assert_eq!(parse_size("100mb"), Some(100_000_000));
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("1TB"), None);
        assert_eq!(parse_size("MB"), None);
    }

    #[test]
    fn flip_alternates_and_restores() {
        let mut flip = Flip::new("fwd", "rev");
        assert_eq!(flip.restore(), None);
        assert_eq!(*flip.step(), "fwd");
        assert_eq!(*flip.step(), "rev");
        assert_eq!(*flip.step(), "fwd");
        assert_eq!(flip.restore(), Some(&"rev"));
        assert_eq!(flip.restore(), None);
    }

    #[test]
    fn the_disk_floor_leaves_the_file_as_it_was() {
        let dir = scratch_dir().expect("temp dir");
        std::fs::write(dir.path().join("f"), b"abc\n").expect("write");
        let digest = floor_on_disk(dir.path(), "f").expect("floor");
        assert_eq!(digest, sha256_hex(b"abc\n"));
        assert_eq!(std::fs::read(dir.path().join("f")).expect("read"), b"abc\n");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }
}
