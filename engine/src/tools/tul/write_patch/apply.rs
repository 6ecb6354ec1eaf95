//! The applier for one file (TUL-002's client side), pure and in memory.
//!
//! One pass over the original: [`Lines`] is built once, untouched runs of
//! lines are kept as byte ranges of the original, added lines are written
//! with the file's line ending: the result is a splice
//! ([`crate::content::Splicing`]) that the committer writes out without
//! assembling it. No allocation per line; the cost is linear in file size plus change size: every original
//! line is passed over once (copied, or compared and dropped), every added
//! line written once. `apply_counting` counts those unit steps, and a test
//! holds the bound on 200,000 lines and 10,000 changes.
//!
//! The line model and the final-newline rule (`docs/clarifications.md`,
//! C-wp-line-model, C-wp-final-newline): every line number refers to the
//! original file; whether the file ends with a newline is a property of the
//! file that edits keep. So if the original lacks a final newline, the
//! result's last line lacks one too (an old last line that is no longer last
//! gains the file's ending); if the original has one (or is empty), every
//! line of the result ends with one.

use super::batch::{LineChange, LineOp, OrderCheck, Placement};
use crate::content::Splicing;
use crate::diagnose::{self, Diagnosis};
use crate::text::{Lines, BOM};

/// Why a file's changes could not be applied to its content.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// A range or insert point lies beyond the end of the file.
    #[error("change {change_index}: {what} is beyond the end of the file ({line_count} lines)")]
    RangeOutOfBounds {
        /// Index of the change in its file's `changes`.
        change_index: usize,
        /// `lines a..=b` or `after line k`.
        what: String,
        /// How many lines the file has.
        line_count: usize,
    },
    /// A line of the file differs from `expectedOriginalLines`.
    // The message names the line and the cause, never the file's text: it
    // goes into events and the patch store, which keep no file content
    // (docs/security.md); `actual` travels in the result's details only.
    #[error("change {change_index}: line {line} is not the expected original line ({})", diagnosis.cause().as_str())]
    LineMismatch {
        /// Index of the change in its file's `changes`.
        change_index: usize,
        /// The 1-based line number of the first mismatching line.
        line: u64,
        /// The text the change expected.
        expected: String,
        /// The line's actual content (lossily decoded when not UTF-8).
        actual: String,
        /// Why, and where the expected lines are (computed on this failure
        /// path only; see `crate::diagnose::line_mismatch`).
        diagnosis: Box<Diagnosis>,
    },
    /// The changes break a rule the validator enforces (only reachable when
    /// a caller builds [`LineChange`]s by hand).
    #[error("change {change_index}: {reason}")]
    InvalidChange {
        /// Index of the change in its file's `changes`.
        change_index: usize,
        /// What is wrong.
        reason: &'static str,
    },
}

impl ApplyError {
    /// The index of the change at fault.
    pub fn change_index(&self) -> usize {
        match self {
            ApplyError::RangeOutOfBounds { change_index, .. }
            | ApplyError::LineMismatch { change_index, .. }
            | ApplyError::InvalidChange { change_index, .. } => *change_index,
        }
    }
}

/// The output being built, with what the final-newline rule needs.
struct Out<'a, 'b> {
    lines: &'b Lines<'a>,
    nl: &'static [u8],
    out: Splicing,
    /// Length of the ending of the last line written (`None`: no line yet).
    last_ending: Option<usize>,
    /// Unit steps so far: original lines copied or compared, lines added.
    steps: u64,
}

impl Out<'_, '_> {
    /// Copy original lines `from..to` (0-based, half-open) verbatim.
    fn copy(&mut self, from: usize, to: usize) {
        if from >= to {
            return;
        }
        self.steps += (to - from) as u64;
        self.out.base(self.lines.start(from)..self.lines.start(to));
        let ending = self.lines.ending(to - 1).len();
        if ending == 0 {
            // The old last line, which had no ending: give it one; it is
            // taken off again at the end if this line stays last.
            self.out.add(self.nl);
            self.last_ending = Some(self.nl.len());
        } else {
            self.last_ending = Some(ending);
        }
    }

    /// Write lines the change adds, each with the file's ending.
    fn add(&mut self, new_lines: &[String]) {
        self.steps += new_lines.len() as u64;
        for line in new_lines {
            self.out.add(line.as_bytes());
            self.out.add(self.nl);
            self.last_ending = Some(self.nl.len());
        }
    }
}

#[cfg(any(test, feature = "testing"))]
/// Apply validated `changes` to `original`, returning the new bytes.
///
/// Checks, per change in order: that it lies within the file
/// ([`ApplyError::RangeOutOfBounds`]; `afterLine` may equal the line count,
/// which appends) and that the lines of a replace/delete equal
/// `expectedOriginalLines` byte for byte, without their endings
/// ([`ApplyError::LineMismatch`], the first differing line). A BOM stays in
/// front; untouched lines keep their bytes; CRLF files stay CRLF.
pub fn apply_changes(original: &[u8], changes: &[LineChange]) -> Result<Vec<u8>, ApplyError> {
    splice_changes(original, changes).map(|splicing| splicing.render(original))
}

/// `apply_changes` without assembling the result: the new file as
/// stretches of `original` and added bytes, for the committer.
pub fn splice_changes(original: &[u8], changes: &[LineChange]) -> Result<Splicing, ApplyError> {
    apply_counting(original, changes).map(|(splicing, _steps)| splicing)
}

/// [`splice_changes`], and the unit steps it took (original lines copied or
/// compared, lines added): at most the file's line count plus the lines the
/// changes expect and add.
fn apply_counting(original: &[u8], changes: &[LineChange]) -> Result<(Splicing, u64), ApplyError> {
    let lines = Lines::new(original);
    let n = lines.len();
    let nl = lines.newline().as_bytes();
    let mut out = Out {
        lines: &lines,
        nl,
        out: Splicing::default(),
        last_ending: None,
        steps: 0,
    };
    if lines.has_bom() {
        out.out.base(0..BOM.len());
    }
    let mut order = OrderCheck::default();
    // Original lines consumed so far.
    let mut pos = 0usize;
    for (index, change) in changes.iter().enumerate() {
        match order.push(change.op.position()) {
            Placement::Clear => {}
            Placement::OutOfOrder => {
                return Err(ApplyError::InvalidChange {
                    change_index: index,
                    reason: "changes are out of order",
                })
            }
            Placement::Overlap => {
                return Err(ApplyError::InvalidChange {
                    change_index: index,
                    reason: "changes overlap",
                })
            }
        }
        match &change.op {
            LineOp::Insert {
                after_line,
                new_lines,
            } => {
                let k = usize::try_from(*after_line)
                    .ok()
                    .filter(|k| *k <= n)
                    .ok_or_else(|| ApplyError::RangeOutOfBounds {
                        change_index: index,
                        what: format!("after line {after_line}"),
                        line_count: n,
                    })?;
                out.copy(pos, k);
                pos = k;
                out.add(new_lines);
            }
            LineOp::Replace {
                start_line,
                end_line,
                expected_original_lines: expected,
                ..
            }
            | LineOp::Delete {
                start_line,
                end_line,
                expected_original_lines: expected,
            } => {
                if *start_line < 1 || end_line < start_line {
                    return Err(ApplyError::InvalidChange {
                        change_index: index,
                        reason: "the range is empty or starts before line 1",
                    });
                }
                let (s, e) = match (usize::try_from(*start_line), usize::try_from(*end_line)) {
                    (Ok(s), Ok(e)) if e <= n => (s, e),
                    _ => {
                        return Err(ApplyError::RangeOutOfBounds {
                            change_index: index,
                            what: format!("lines {start_line}..={end_line}"),
                            line_count: n,
                        })
                    }
                };
                if expected.len() != e - s + 1 {
                    return Err(ApplyError::InvalidChange {
                        change_index: index,
                        reason: "expectedOriginalLines does not match the range length",
                    });
                }
                out.steps += expected.len() as u64;
                for (offset, want) in expected.iter().enumerate() {
                    let i = s - 1 + offset;
                    let have = lines.content(i);
                    if have != want.as_bytes() {
                        return Err(ApplyError::LineMismatch {
                            change_index: index,
                            line: (i + 1) as u64,
                            expected: want.clone(),
                            actual: String::from_utf8_lossy(have).into_owned(),
                            diagnosis: Box::new(diagnose::line_mismatch(
                                original,
                                s,
                                expected,
                                change.op.new_lines(),
                            )),
                        });
                    }
                }
                out.copy(pos, s - 1);
                pos = e;
                out.add(change.op.new_lines());
            }
        }
    }
    out.copy(pos, n);
    if !lines.ends_with_newline() {
        if let Some(len) = out.last_ending {
            out.out.truncate_end(len);
        }
    }
    Ok((out.out, out.steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(after_line: u64, lines: &[&str]) -> LineChange {
        ch(LineOp::Insert {
            after_line,
            new_lines: lines.iter().map(|s| s.to_string()).collect(),
        })
    }

    fn rep(start_line: u64, end_line: u64, expected: &[&str], lines: &[&str]) -> LineChange {
        ch(LineOp::Replace {
            start_line,
            end_line,
            expected_original_lines: expected.iter().map(|s| s.to_string()).collect(),
            new_lines: lines.iter().map(|s| s.to_string()).collect(),
        })
    }

    fn del(start_line: u64, end_line: u64, expected: &[&str]) -> LineChange {
        ch(LineOp::Delete {
            start_line,
            end_line,
            expected_original_lines: expected.iter().map(|s| s.to_string()).collect(),
        })
    }

    fn ch(op: LineOp) -> LineChange {
        LineChange {
            change_id: "chg-test".into(),
            change_key: None,
            description: None,
            op,
        }
    }

    fn check(original: &str, changes: &[LineChange], expected: &str) {
        let got = apply_changes(original.as_bytes(), changes).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            expected,
            "original {original:?}"
        );
    }

    #[test]
    fn each_operation_edits_whole_lines() {
        check("a\nb\nc\n", &[ins(0, &["x"])], "x\na\nb\nc\n");
        check("a\nb\nc\n", &[ins(1, &["x", "y"])], "a\nx\ny\nb\nc\n");
        check("a\nb\nc\n", &[ins(3, &["x"])], "a\nb\nc\nx\n");
        check(
            "a\nb\nc\n",
            &[rep(2, 2, &["b"], &["B1", "B2"])],
            "a\nB1\nB2\nc\n",
        );
        check("a\nb\nc\n", &[rep(1, 3, &["a", "b", "c"], &[])], "");
        check("a\nb\nc\n", &[del(2, 3, &["b", "c"])], "a\n");
    }

    #[test]
    fn line_numbers_refer_to_the_original_file() {
        // The insert after 1 does not shift the replace of line 3.
        check(
            "1\n2\n3\n4\n",
            &[
                ins(1, &["x", "y"]),
                rep(3, 3, &["3"], &["three"]),
                del(4, 4, &["4"]),
            ],
            "1\nx\ny\n2\nthree\n",
        );
        // Insert right after a replaced range and right before one.
        check(
            "1\n2\n3\n",
            &[
                ins(0, &["top"]),
                rep(1, 1, &["1"], &["one"]),
                ins(1, &["after1"]),
                del(2, 2, &["2"]),
            ],
            "top\none\nafter1\n3\n",
        );
    }

    #[test]
    fn crlf_files_stay_crlf_and_context_keeps_its_bytes() {
        check("a\r\nb\r\n", &[ins(1, &["x"])], "a\r\nx\r\nb\r\n");
        // Mixed endings: untouched lines keep theirs; added lines use the first line's.
        check(
            "a\r\nb\nc\r\n",
            &[rep(2, 2, &["b"], &["B"])],
            "a\r\nB\r\nc\r\n",
        );
        check("a\nb\r\n", &[ins(2, &["x"])], "a\nb\r\nx\n");
    }

    #[test]
    fn the_final_newline_state_is_kept() {
        // Inserting after the last line of a file without a final newline:
        // the old last line gains an ending, the new last line has none.
        check("a\nb", &[ins(2, &["c"])], "a\nb\nc");
        check("a\r\nb", &[ins(2, &["c", "d"])], "a\r\nb\r\nc\r\nd");
        // Deleting the last line: the new last line loses its ending.
        check("a\nb", &[del(2, 2, &["b"])], "a");
        check("a\nb\n", &[del(2, 2, &["b"])], "a\n");
        // Replacing it keeps the state.
        check("a\nb", &[rep(2, 2, &["b"], &["c", "d"])], "a\nc\nd");
        // Inserting in the middle does not touch the end.
        check("a\nb", &[ins(1, &["x"])], "a\nx\nb");
        // Deleting every line leaves an empty file either way.
        check("a\nb", &[del(1, 2, &["a", "b"])], "");
        // An empty file counts as ending with a newline.
        check("", &[ins(0, &["a", "b"])], "a\nb\n");
        // A lone unterminated line.
        check("a", &[ins(0, &["x"])], "x\na");
        check("a", &[ins(1, &["x"])], "a\nx");
    }

    #[test]
    fn a_bom_stays_in_front_and_is_not_line_content() {
        check(
            "\u{feff}a\nb\n",
            &[rep(1, 1, &["a"], &["A"])],
            "\u{feff}A\nb\n",
        );
        check("\u{feff}a\n", &[ins(0, &["x"])], "\u{feff}x\na\n");
        check("\u{feff}a\n", &[del(1, 1, &["a"])], "\u{feff}");
    }

    #[test]
    fn expected_lines_compare_exactly() {
        let err = apply_changes(b"a\nb \nc\n", &[rep(1, 2, &["a", "b"], &["x"])]).unwrap_err();
        let ApplyError::LineMismatch {
            change_index,
            line,
            expected,
            actual,
            diagnosis,
        } = err
        else {
            panic!("expected a line mismatch, got {err:?}");
        };
        assert_eq!(
            (change_index, line, expected.as_str(), actual.as_str()),
            (0, 2, "b", "b ")
        );
        assert_eq!(
            diagnosis.cause(),
            crate::diagnose::Cause::TrailingWhitespace
        );
        // CRLF endings are not content; a lone CR is.
        assert!(apply_changes(b"a\r\n", &[del(1, 1, &["a"])]).is_ok());
        assert!(apply_changes(b"a\r\r\n", &[del(1, 1, &["a"])]).is_err());
        assert!(apply_changes(b"a\r\r\n", &[del(1, 1, &["a\r"])]).is_ok());
    }

    #[test]
    fn ranges_beyond_the_end_are_errors() {
        let err = apply_changes(b"a\nb\n", &[del(2, 3, &["b", "c"])]).unwrap_err();
        assert!(
            matches!(err, ApplyError::RangeOutOfBounds { line_count: 2, .. }),
            "{err:?}"
        );
        let err = apply_changes(b"a\nb\n", &[ins(3, &["x"])]).unwrap_err();
        assert!(matches!(err, ApplyError::RangeOutOfBounds { .. }));
        let err = apply_changes(b"", &[del(1, 1, &[""])]).unwrap_err();
        assert!(matches!(
            err,
            ApplyError::RangeOutOfBounds { line_count: 0, .. }
        ));
        let err = apply_changes(b"a\n", &[del(u64::MAX, u64::MAX, &["a"])]).unwrap_err();
        assert!(matches!(err, ApplyError::RangeOutOfBounds { .. }));
    }

    #[test]
    fn hand_built_changes_that_break_the_rules_are_refused_not_panicked_on() {
        let bad = [
            vec![ins(1, &["x"]), ins(0, &["y"])],
            vec![del(1, 2, &["a", "b"]), ins(1, &["y"])],
            vec![del(0, 0, &[""])],
            vec![del(2, 1, &[])],
            vec![del(1, 2, &["a"])],
        ];
        for changes in bad {
            let err = apply_changes(b"a\nb\n", &changes).unwrap_err();
            assert!(matches!(err, ApplyError::InvalidChange { .. }), "{err:?}");
        }
    }

    #[test]
    fn ten_thousand_changes_on_a_large_file_are_one_linear_pass() {
        // 200,000 lines (~2.6 MB) and 10,000 changes, counted in steps; the
        // time is measured by the `line_patch_in_memory` benchmark.
        let mut original = Vec::new();
        for i in 0..200_000 {
            original.extend_from_slice(format!("line {i:07}\n").as_bytes());
        }
        let changes: Vec<LineChange> = (0..10_000u64)
            .map(|j| {
                let line = j * 20 + 1;
                if j % 2 == 0 {
                    rep(
                        line,
                        line,
                        &[&format!("line {:07}", line - 1)],
                        &["changed"],
                    )
                } else {
                    ins(line, &["inserted"])
                }
            })
            .collect();
        let (out, steps) = apply_counting(&original, &changes).unwrap();
        assert_eq!(Lines::new(&out.render(&original)).len(), 200_000 + 5_000);
        // Each original line once, plus the 5,000 expected and 10,000 added
        // lines: a pass that went back over the file would count billions.
        assert!(steps <= 200_000 + 5_000 + 10_000, "{steps} steps");
        assert!(
            steps >= 200_000,
            "{steps} steps: the file was not passed over"
        );
    }
}
