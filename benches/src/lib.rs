//! Deterministic input generators for the patchspec benchmarks, reusable by
//! the fuzz crate and by tests.
//!
//! Everything here is a pure function of a size, a count and a seed: the same
//! arguments give the same bytes on every machine and every run (the random
//! source is a local SplitMix64, [`Rng`], not a crate whose stream could change
//! between versions).
//!
//! The main type is [`SourceFile`]: Rust-like source text built from a few
//! block shapes (a function, a struct with its `impl`, a constant table, a
//! test), with realistic line lengths (about 40 bytes on average), blank
//! lines, and many repeated lines such as `}` and `    }`. Each block has one
//! *target* line that contains the block's number and is therefore unique in
//! the file; its two neighbours are ordinary, often repeated, lines. From a
//! file and a count the module derives:
//!
//! - [`spread_edits`]: one [`Edit`] per chosen block, spread evenly through
//!   the file; rendered as an `apply_patch` envelope ([`envelope`], forward or
//!   [`Direction::Reverse`]), as a unified diff for GNU `patch` and
//!   `git apply` ([`unified_diff`]), and as the expected result
//!   ([`expected_after`]). Each hunk is one context line, the target removed,
//!   its replacement added, one context line: its old side is unique only
//!   because of the target, so the engine's uniqueness check really runs over
//!   the repeated neighbours.
//! - [`spread_line_edits`]: line-level changes for `workspace_write_patch`
//!   (TUL-002), all three operations in turn, with their inverse
//!   ([`reverse_line_edits`]), the expected result ([`line_edits_after`]) and
//!   the wire params ([`write_patch_params`]).
//! - [`big_envelope`]: a large multi-section envelope for parse throughput.
//!
//! Beside the generators: [`case`] writes one envelope case to a directory
//! (for the peer comparison and for trying a tool by hand), [`support`] holds
//! what the bench binaries share (the input sizes of a measuring run versus a
//! `cargo test` run, the I/O floor, the forward/reverse flip), and [`report`]
//! turns criterion's saved estimates into the tables of docs/performance.md.
//!
//! Around the library: the criterion benchmarks in `benches/` (`engine`: the
//! tools on large files beside the I/O floor; `peers`: the same edit through
//! GNU `patch` and `git apply`; `diagnose`: the failure path's cost) and the
//! `patchspec-benchgen` binary (`src/main.rs`), a thin command line over
//! [`case`] and [`report`].
//!
//! Left out: timing. Measuring is criterion's job, in `benches/*.rs`; the
//! generators themselves never touch the disk, so they stay usable from
//! `cargo test` and fuzz targets.
#![deny(missing_docs)]

pub mod case;
pub mod report;
pub mod support;

use std::fmt::Write as _;

use serde_json::{json, Value};

/// The seed every benchmark uses (the ASCII bytes of `patchspe`).
pub const SEED: u64 = 0x7061_7463_6873_7065;

/// The path the generated file has inside a benchmark workspace.
pub const FILE_PATH: &str = "big.rs";

/// A SplitMix64 pseudo-random stream: tiny, fast, and fixed forever, so the
/// generated inputs never change under a dependency upgrade.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One element of `items` (not empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Identifier words; few enough that lines built from them repeat.
const WORDS: &[&str] = &[
    "alpha", "buffer", "cursor", "delta", "entry", "frame", "graph", "handle", "index", "join",
    "kernel", "layout", "module", "node", "offset", "parser", "queue", "range", "span", "token",
    "value", "window",
];

/// Upper-camel forms of [`WORDS`], for type names.
const TYPES: &[&str] = &[
    "Alpha", "Buffer", "Cursor", "Delta", "Entry", "Frame", "Graph", "Handle", "Index", "Join",
    "Kernel", "Layout", "Module", "Node", "Offset", "Parser", "Queue", "Range", "Span", "Token",
    "Value", "Window",
];

/// A generated source-like file: its bytes, where each line starts, and the
/// unique target line of each block.
#[derive(Clone, Debug)]
pub struct SourceFile {
    bytes: Vec<u8>,
    /// Start offset of every line, then `bytes.len()`.
    starts: Vec<usize>,
    /// 0-based index of each block's target line, ascending.
    targets: Vec<usize>,
}

impl SourceFile {
    /// Generate at least `min_bytes` bytes (whole blocks, so slightly more)
    /// of source text from `seed`. Every line ends with `\n`.
    pub fn generate(min_bytes: usize, seed: u64) -> SourceFile {
        let mut file = SourceFile {
            bytes: Vec::with_capacity(min_bytes + 1024),
            starts: Vec::with_capacity(min_bytes / 36 + 16),
            targets: Vec::with_capacity(min_bytes / 300 + 4),
        };
        let mut rng = Rng::new(seed);
        let mut n = 0usize;
        let mut line = String::new();
        while file.bytes.len() < min_bytes {
            file.block(&mut rng, n, &mut line);
            n += 1;
        }
        file.starts.push(file.bytes.len());
        file
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The number of lines.
    pub fn line_count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The number of blocks, hence of possible [`Edit`]s.
    pub fn block_count(&self) -> usize {
        self.targets.len()
    }

    /// The 0-based index of block `b`'s target line.
    pub fn target(&self, b: usize) -> usize {
        self.targets[b]
    }

    /// Line `i` (0-based) without its `\n`.
    pub fn line(&self, i: usize) -> &str {
        let bytes = &self.bytes[self.starts[i]..self.starts[i + 1] - 1];
        std::str::from_utf8(bytes).expect("the generator writes ASCII only")
    }

    fn push(&mut self, line: &str) {
        self.starts.push(self.bytes.len());
        self.bytes.extend_from_slice(line.as_bytes());
        self.bytes.push(b'\n');
    }

    fn push_target(&mut self, line: &str) {
        self.targets.push(self.starts.len());
        self.push(line);
    }

    /// Append block number `n`, in one of four shapes.
    fn block(&mut self, rng: &mut Rng, n: usize, buf: &mut String) {
        let mut emit = |file: &mut SourceFile, target: bool, f: &dyn Fn(&mut String)| {
            buf.clear();
            f(buf);
            if target {
                file.push_target(buf);
            } else {
                file.push(buf);
            }
        };
        let [w1, w2, w3, w4, w5, w6] = std::array::from_fn(|_| rng.pick(WORDS));
        let [t1, t2] = std::array::from_fn(|_| rng.pick(TYPES));
        match rng.below(4) {
            0 => {
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "/// Folds the {w1} {w2} into one {w3} before the {w4} pass (item {n})."
                    );
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "/// An empty {w4} gives back the {w3} seed unchanged.");
                });
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "pub fn fold_{w1}_{w2}_{n}({w3}_seed: u64, {w4}_bytes: &[u8]) -> u64 {{"
                    );
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    let mut {w5}_acc = {w3}_seed;");
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    for byte in {w4}_bytes.iter() {{");
                });
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "        {w5}_acc = {w5}_acc.wrapping_mul(31) ^ u64::from(*byte);"
                    );
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "        debug_assert!({w5}_acc != u64::MAX, \"the {w1} {w2} overflowed while folding\");");
                });
                emit(self, false, &|s| s.push_str("    }"));
                emit(self, true, &|s| {
                    let _ = write!(s, "    {w5}_acc ^ {n}");
                });
                emit(self, false, &|s| s.push('}'));
                emit(self, false, &|_| {});
            }
            1 => {
                emit(self, false, &|s| {
                    let _ = write!(s, "/// The {w1} state of a {w2}, kept between {w3} calls.");
                });
                emit(self, false, &|s| {
                    s.push_str("#[derive(Clone, Debug, PartialEq)]")
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "pub struct {t1}{t2}{n} {{");
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    /// How many {w4} entries the {w1} has seen so far.");
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    pub {w4}_count: u32,");
                });
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "    pub {w5}_{w6}_by_{w1}: std::collections::HashMap<String, Vec<{t2}>>,"
                    );
                });
                emit(self, false, &|s| s.push('}'));
                emit(self, false, &|_| {});
                emit(self, false, &|s| {
                    let _ = write!(s, "impl {t1}{t2}{n} {{");
                });
                emit(self, true, &|s| {
                    let _ = write!(s, "    pub const ID: u32 = {n};");
                });
                emit(self, false, &|s| s.push('}'));
                emit(self, false, &|_| {});
            }
            2 => {
                let rows = 2 + rng.below(5);
                let values: Vec<(&str, &str, usize)> = (0..rows)
                    .map(|_| (rng.pick(WORDS), rng.pick(TYPES), rng.below(64)))
                    .collect();
                emit(self, false, &|s| {
                    let _ = write!(s, "/// Weights of the {w1} {w2} table, looked up by name when a {w3} is scored.");
                });
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "pub const {}_{n}: &[(&str, Kind, u32)] = &[",
                        w1.to_uppercase()
                    );
                });
                for (word, kind, value) in &values {
                    emit(self, false, &|s| {
                        let _ = write!(s, "    (\"{word}\", Kind::{kind}, {value}),");
                    });
                }
                emit(self, true, &|s| {
                    let _ = write!(s, "    (\"{w3}\", Kind::{t1}, {n}), // key");
                });
                emit(self, false, &|s| s.push_str("];"));
                emit(self, false, &|_| {});
            }
            _ => {
                emit(self, false, &|s| s.push_str("#[test]"));
                emit(self, false, &|s| {
                    let _ = write!(s, "fn {w1}_{w2}_round_trips_{n}() {{");
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    let input = \"{w3} {w4} {w5} {w6}\";");
                });
                emit(self, false, &|s| {
                    let _ = write!(
                        s,
                        "    let parsed = {w1}::parse(input).expect(\"valid {w2}\");"
                    );
                });
                emit(self, false, &|s| {
                    let _ = write!(s, "    assert!(parsed.iter().all(|{w3}| {w3}.is_valid()), \"every {w3} of the {w1} is valid\");");
                });
                emit(self, true, &|s| {
                    let _ = write!(s, "    assert_eq!(parsed.len(), {n});");
                });
                emit(self, false, &|s| s.push('}'));
                emit(self, false, &|_| {});
            }
        }
    }
}

/// One edit: replace the target line `line` (0-based) by `new_text`. The
/// hunk carries the line before and the line after as context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// 0-based index of the replaced line (a block's target).
    pub line: usize,
    /// The replacement.
    pub new_text: String,
}

/// `count` edits spread evenly through `file`, in file order.
///
/// # Panics
///
/// When `count` exceeds [`SourceFile::block_count`] (one edit per block).
pub fn spread_edits(file: &SourceFile, count: usize) -> Vec<Edit> {
    let blocks = file.block_count();
    assert!(
        count <= blocks,
        "{count} edits need {count} blocks; the file has {blocks}"
    );
    (0..count)
        .map(|i| {
            // The middle of the i-th of `count` equal stretches of blocks.
            let b = (2 * i + 1) * blocks / (2 * count);
            let line = file.target(b);
            Edit {
                line,
                new_text: format!("{} // patched", file.line(line)),
            }
        })
        .collect()
}

/// Which way an envelope goes: `Forward` turns the file into
/// [`expected_after`]; `Reverse` turns that back into the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Original → edited.
    Forward,
    /// Edited → original.
    Reverse,
}

/// The `apply_patch` envelope of `edits` to `file`, as an Update of `path`.
pub fn envelope(path: &str, file: &SourceFile, edits: &[Edit], direction: Direction) -> String {
    let mut out = String::with_capacity(64 + edits.len() * 120);
    out.push_str("*** Begin Patch\n");
    let _ = writeln!(out, "*** Update File: {path}");
    for edit in edits {
        let (old, new) = sides(file, edit, direction);
        let _ = writeln!(out, "@@");
        let _ = writeln!(out, " {}", file.line(edit.line - 1));
        let _ = writeln!(out, "-{old}");
        let _ = writeln!(out, "+{new}");
        let _ = writeln!(out, " {}", file.line(edit.line + 1));
    }
    out.push_str("*** End Patch\n");
    out
}

fn sides<'a>(file: &'a SourceFile, edit: &'a Edit, direction: Direction) -> (&'a str, &'a str) {
    match direction {
        Direction::Forward => (file.line(edit.line), &edit.new_text),
        Direction::Reverse => (&edit.new_text, file.line(edit.line)),
    }
}

/// The same edits as a git-style unified diff (one line of context), which
/// GNU `patch -p1` and `git apply` both accept. Use their `-R` for the
/// reverse direction.
pub fn unified_diff(path: &str, file: &SourceFile, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(64 + edits.len() * 140);
    let _ = writeln!(out, "diff --git a/{path} b/{path}");
    let _ = writeln!(out, "--- a/{path}");
    let _ = writeln!(out, "+++ b/{path}");
    for edit in edits {
        // The hunk starts at the context line before the target: 1-based
        // number `edit.line`. Replacements are one for one, so both sides
        // keep their numbers.
        let _ = writeln!(out, "@@ -{0},3 +{0},3 @@", edit.line);
        let _ = writeln!(out, " {}", file.line(edit.line - 1));
        let _ = writeln!(out, "-{}", file.line(edit.line));
        let _ = writeln!(out, "+{}", edit.new_text);
        let _ = writeln!(out, " {}", file.line(edit.line + 1));
    }
    out
}

/// The file after `edits`.
pub fn expected_after(file: &SourceFile, edits: &[Edit]) -> Vec<u8> {
    let extra: usize = edits.iter().map(|e| e.new_text.len()).sum();
    let mut out = Vec::with_capacity(file.bytes.len() + extra);
    let mut cursor = 0;
    for edit in edits {
        out.extend_from_slice(&file.bytes[cursor..file.starts[edit.line]]);
        out.extend_from_slice(edit.new_text.as_bytes());
        out.push(b'\n');
        cursor = file.starts[edit.line + 1];
    }
    out.extend_from_slice(&file.bytes[cursor..]);
    out
}

/// One line-level change of `workspace_write_patch` (TUL-002); line numbers
/// are 1-based and refer to the file the change applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineEdit {
    /// Insert `lines` after line `after_line` (0: at the top).
    Insert {
        /// The line the new lines follow.
        after_line: usize,
        /// The new lines.
        lines: Vec<String>,
    },
    /// Replace line `line`, which must read `expected`, by `lines`.
    Replace {
        /// The replaced line.
        line: usize,
        /// Its current content.
        expected: String,
        /// The replacement.
        lines: Vec<String>,
    },
    /// Delete line `line`, which must read `expected`.
    Delete {
        /// The deleted line.
        line: usize,
        /// Its current content.
        expected: String,
    },
}

/// `count` single-line changes spread evenly through `file`, cycling
/// replace, delete, insert, in file order.
///
/// # Panics
///
/// When `count` exceeds half the file's lines (changes need room between them).
pub fn spread_line_edits(file: &SourceFile, count: usize) -> Vec<LineEdit> {
    let lines = file.line_count();
    assert!(
        2 * count <= lines,
        "{count} line changes need {} lines; the file has {lines}",
        2 * count
    );
    (0..count)
        .map(|i| {
            let index = (2 * i + 1) * lines / (2 * count); // 0-based
            let line = index + 1;
            let text = file.line(index).to_string();
            match i % 3 {
                0 => LineEdit::Replace {
                    line,
                    lines: vec![format!("{text} // replaced")],
                    expected: text,
                },
                1 => LineEdit::Delete {
                    line,
                    expected: text,
                },
                _ => LineEdit::Insert {
                    after_line: line,
                    lines: vec![format!("// inserted {i}")],
                },
            }
        })
        .collect()
}

/// The changes that undo `edits` on the file they produce, in file order.
pub fn reverse_line_edits(edits: &[LineEdit]) -> Vec<LineEdit> {
    // `shift`: how far lines after the changes so far have moved.
    let mut shift: isize = 0;
    let at = |line: usize, shift: isize| line.checked_add_signed(shift).expect("in the file");
    edits
        .iter()
        .map(|edit| match edit {
            LineEdit::Replace {
                line,
                expected,
                lines,
            } => {
                assert_eq!(lines.len(), 1, "the generator replaces one line by one");
                LineEdit::Replace {
                    line: at(*line, shift),
                    expected: lines[0].clone(),
                    lines: vec![expected.clone()],
                }
            }
            LineEdit::Delete { line, expected } => {
                let undo = LineEdit::Insert {
                    after_line: at(*line, shift) - 1,
                    lines: vec![expected.clone()],
                };
                shift -= 1;
                undo
            }
            LineEdit::Insert { after_line, lines } => {
                assert_eq!(lines.len(), 1, "the generator inserts one line");
                let undo = LineEdit::Delete {
                    line: at(*after_line, shift) + 1,
                    expected: lines[0].clone(),
                };
                shift += 1;
                undo
            }
        })
        .collect()
}

/// `original` (lines ended by `\n`) after `edits`.
pub fn line_edits_after(original: &[u8], edits: &[LineEdit]) -> Vec<u8> {
    let mut starts: Vec<usize> = vec![0];
    starts.extend(
        original
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    if starts.last() != Some(&original.len()) {
        starts.push(original.len());
    }
    let mut out = Vec::with_capacity(original.len() + edits.len() * 24);
    let mut copied = 0usize; // lines copied so far (0-based next line)
    let copy_to = |out: &mut Vec<u8>, copied: &mut usize, to: usize| {
        out.extend_from_slice(&original[starts[*copied]..starts[to]]);
        *copied = to;
    };
    for edit in edits {
        match edit {
            LineEdit::Insert { after_line, lines } => {
                copy_to(&mut out, &mut copied, *after_line);
                for l in lines {
                    out.extend_from_slice(l.as_bytes());
                    out.push(b'\n');
                }
            }
            LineEdit::Replace { line, lines, .. } => {
                copy_to(&mut out, &mut copied, line - 1);
                for l in lines {
                    out.extend_from_slice(l.as_bytes());
                    out.push(b'\n');
                }
                copied = *line;
            }
            LineEdit::Delete { line, .. } => {
                copy_to(&mut out, &mut copied, line - 1);
                copied = *line;
            }
        }
    }
    out.extend_from_slice(&original[starts[copied]..]);
    out
}

/// The `workspace_write_patch` params: one file, `doc_path`, guarded by
/// `original_sha256`, with `edits` as its changes.
pub fn write_patch_params(doc_path: &str, original_sha256: &str, edits: &[LineEdit]) -> Value {
    let changes: Vec<Value> = edits
        .iter()
        .map(|edit| match edit {
            LineEdit::Insert { after_line, lines } => json!({
                "operation": "insert",
                "afterLine": after_line,
                "newLines": lines,
            }),
            LineEdit::Replace {
                line,
                expected,
                lines,
            } => json!({
                "operation": "replace",
                "startLine": line,
                "endLine": line,
                "expectedOriginalLines": [expected],
                "newLines": lines,
            }),
            LineEdit::Delete { line, expected } => json!({
                "operation": "delete",
                "startLine": line,
                "endLine": line,
                "expectedOriginalLines": [expected],
            }),
        })
        .collect();
    json!({
        "files": [{
            "docPath": doc_path,
            "originalSha256": original_sha256,
            "changes": changes,
        }]
    })
}

/// A large envelope for parse throughput: at least `min_bytes` of many
/// sections — mostly Updates of 10 long hunks (8 context lines, 2 removed,
/// 2 added, 8 context), with an Add, a Delete and a Move every 50 sections.
/// The sections name files that need not exist: it is for parsing only.
pub fn big_envelope(min_bytes: usize, seed: u64) -> String {
    let pool = SourceFile::generate(min_bytes.clamp(4096, 4 << 20), seed);
    let mut cursor = 0usize;
    let mut next = || {
        let line = pool.line(cursor);
        cursor = (cursor + 1) % pool.line_count();
        line
    };
    let mut out = String::with_capacity(min_bytes + 4096);
    out.push_str("*** Begin Patch\n");
    let mut section = 0usize;
    while out.len() < min_bytes {
        let path = format!("src/gen/module_{section}.rs");
        match section % 50 {
            47 => {
                let _ = writeln!(out, "*** Add File: {path}");
                for _ in 0..30 {
                    let _ = writeln!(out, "+{}", next());
                }
            }
            48 => {
                let _ = writeln!(out, "*** Delete File: {path}");
            }
            kind => {
                if kind == 49 {
                    let _ = writeln!(out, "*** Update File: {path}");
                    let _ = writeln!(out, "*** Move to: src/moved/module_{section}.rs");
                } else {
                    let _ = writeln!(out, "*** Update File: {path}");
                }
                for _ in 0..10 {
                    out.push_str("@@\n");
                    for prefix in [" "; 8]
                        .iter()
                        .chain(&["-", "-", "+", "+"])
                        .chain(&[" "; 8])
                    {
                        out.push_str(prefix);
                        out.push_str(next());
                        out.push('\n');
                    }
                }
            }
        }
        section += 1;
    }
    out.push_str("*** End Patch\n");
    out
}

/// A size written the way the benches name it: `64KB`, `1MB`, `100MB`
/// (decimal units, as criterion's `BytesDecimal` throughput reports them).
pub fn size_label(bytes: usize) -> String {
    match bytes {
        b if b >= 1_000_000 && b % 1_000_000 == 0 => format!("{}MB", b / 1_000_000),
        b if b >= 1_000 && b % 1_000 == 0 => format!("{}KB", b / 1_000),
        b => format!("{b}B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchspec_engine::envelope;
    use patchspec_engine::hash::sha256_hex;
    use patchspec_engine::matching::apply_hunks;
    use patchspec_engine::tools::tul::write_patch;

    fn apply_envelope(original: &[u8], text: &str) -> Vec<u8> {
        let patch = envelope::parse(text).expect("the generated envelope parses");
        assert_eq!(patch.sections.len(), 1);
        let envelope::SectionKind::Update { hunks, .. } = &patch.sections[0].kind else {
            panic!("the generated envelope is one Update section");
        };
        apply_hunks(original, hunks).expect("the generated envelope applies")
    }

    #[test]
    fn generation_is_deterministic_and_seeded() {
        let a = SourceFile::generate(50_000, SEED);
        assert_eq!(a.bytes(), SourceFile::generate(50_000, SEED).bytes());
        assert_ne!(a.bytes(), SourceFile::generate(50_000, SEED + 1).bytes());
        assert!(a.bytes().len() >= 50_000 && a.bytes().len() < 51_000);
    }

    #[test]
    fn the_file_looks_like_source() {
        let file = SourceFile::generate(200_000, SEED);
        let n = file.line_count();
        let average = file.bytes().len() as f64 / n as f64;
        assert!(
            (30.0..=50.0).contains(&average),
            "average line length {average}"
        );
        let count = |text: &str| (0..n).filter(|&i| file.line(i) == text).count();
        assert!(count("}") > n / 20, "closing braces repeat");
        assert!(count("") > n / 20, "blank lines repeat");
        let mut targets: Vec<&str> = (0..file.block_count())
            .map(|b| file.line(file.target(b)))
            .collect();
        for &t in &targets {
            assert_eq!(count(t), 1, "target {t:?} is unique");
        }
        targets.dedup();
        assert_eq!(targets.len(), file.block_count());
    }

    #[test]
    fn the_envelope_applies_both_ways() {
        let file = SourceFile::generate(100_000, SEED);
        for count in [1, 10, file.block_count()] {
            let edits = spread_edits(&file, count);
            assert_eq!(edits.len(), count);
            assert!(edits.windows(2).all(|w| w[0].line + 3 <= w[1].line));
            let after = expected_after(&file, &edits);
            let forward = envelope(FILE_PATH, &file, &edits, Direction::Forward);
            assert_eq!(apply_envelope(file.bytes(), &forward), after);
            let reverse = envelope(FILE_PATH, &file, &edits, Direction::Reverse);
            assert_eq!(apply_envelope(&after, &reverse), file.bytes());
        }
    }

    #[test]
    fn the_unified_diff_matches_the_envelope() {
        let file = SourceFile::generate(20_000, SEED);
        let edits = spread_edits(&file, 2);
        let diff = unified_diff(FILE_PATH, &file, &edits);
        let l = edits[0].line;
        let expected_start = format!(
            "diff --git a/big.rs b/big.rs\n--- a/big.rs\n+++ b/big.rs\n@@ -{l},3 +{l},3 @@\n {}\n-{}\n+{}\n {}\n",
            file.line(l - 1),
            file.line(l),
            edits[0].new_text,
            file.line(l + 1)
        );
        assert!(diff.starts_with(&expected_start), "{diff}");
        assert_eq!(diff.lines().filter(|l| l.starts_with("@@")).count(), 2);
    }

    #[test]
    fn the_line_patch_applies_both_ways() {
        let file = SourceFile::generate(100_000, SEED);
        for count in [1, 3, 100, file.line_count() / 2] {
            let edits = spread_line_edits(&file, count);
            let after = line_edits_after(file.bytes(), &edits);
            let reverse = reverse_line_edits(&edits);
            assert_eq!(line_edits_after(&after, &reverse), file.bytes(), "{count}");

            let forward_params = write_patch_params(FILE_PATH, &sha256_hex(file.bytes()), &edits);
            let batch = write_patch::validate(&forward_params).expect("the batch is valid");
            let applied = write_patch::apply_changes(file.bytes(), &batch.files[0].changes)
                .expect("the batch applies");
            assert_eq!(applied, after, "{count}");
            let reverse_params = write_patch_params(FILE_PATH, &sha256_hex(&after), &reverse);
            let batch = write_patch::validate(&reverse_params).expect("the reverse batch is valid");
            let undone = write_patch::apply_changes(&after, &batch.files[0].changes)
                .expect("the reverse batch applies");
            assert_eq!(undone, file.bytes(), "{count}");
        }
    }

    #[test]
    fn the_big_envelope_parses() {
        let text = big_envelope(600_000, SEED);
        assert!(text.len() >= 600_000);
        let patch = envelope::parse(&text).expect("the big envelope parses");
        let sections = patch.sections.len();
        assert!(sections > 50, "{sections} sections");
        let kinds = |f: fn(&envelope::SectionKind<'_>) -> bool| {
            patch.sections.iter().filter(|s| f(&s.kind)).count()
        };
        assert!(kinds(|k| matches!(k, envelope::SectionKind::Add { .. })) >= 1);
        assert!(kinds(|k| matches!(k, envelope::SectionKind::Delete { .. })) >= 1);
        assert!(
            kinds(|k| matches!(
                k,
                envelope::SectionKind::Update {
                    move_to: Some(_),
                    ..
                }
            )) >= 1
        );
    }

    #[test]
    fn sizes_are_labelled_in_decimal_units() {
        assert_eq!(size_label(100_000_000), "100MB");
        assert_eq!(size_label(64_000), "64KB");
        assert_eq!(size_label(1234), "1234B");
    }
}
