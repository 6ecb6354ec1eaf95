//! [`Patch`] → canonical envelope text, the inverse of [`super::parse`].
//!
//! The canonical form: LF line endings and a final newline; `@@` alone or
//! `@@ header`, one such line per header line of a hunk; a move spelled
//! `*** Move File: from -> to`, unless that spelling would read back
//! differently (a path containing ` -> `), then `*** Update File: from` +
//! `*** Move to: to`. For every envelope `s` that parses,
//! `parse(render(parse(s))) == parse(s)`.
//!
//! Rendering does not validate: a hand-built [`Patch`] that the parser could
//! never produce (a path with a newline, an empty hunk, a hunk without a
//! header line) renders to text that does not parse back.
//!
//! One pass, one `String` allocated with a size estimate: linear in the patch.

use super::ast::{Hunk, LineKind, Patch, SectionKind};

/// The text added per body line besides the line itself, plus slack for a
/// no-newline marker: used only to size the output buffer.
const PER_LINE_ESTIMATE: usize = 2;
/// The size estimate for a section or hunk line, besides its paths or header.
const PER_HEADER_ESTIMATE: usize = 40;

impl Patch<'_> {
    /// The canonical envelope text of this patch (LF line endings, ending
    /// with `*** End Patch\n`).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.render_len_estimate());
        out.push_str("*** Begin Patch\n");
        for section in &self.sections {
            match &section.kind {
                SectionKind::Add {
                    path,
                    lines,
                    no_newline_at_end,
                } => {
                    push_line(&mut out, &["*** Add File: ", path]);
                    for line in lines {
                        push_line(&mut out, &["+", line]);
                    }
                    if *no_newline_at_end {
                        out.push_str("\\ No newline at end of file\n");
                    }
                }
                SectionKind::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    match move_to {
                        None => push_line(&mut out, &["*** Update File: ", path]),
                        Some(to) if move_file_reads_back(path, to) => {
                            push_line(&mut out, &["*** Move File: ", path, " -> ", to]);
                        }
                        Some(to) => {
                            push_line(&mut out, &["*** Update File: ", path]);
                            push_line(&mut out, &["*** Move to: ", to]);
                        }
                    }
                    for hunk in hunks {
                        render_hunk(&mut out, hunk);
                    }
                }
                SectionKind::Delete { path } => push_line(&mut out, &["*** Delete File: ", path]),
            }
        }
        out.push_str("*** End Patch\n");
        out
    }

    /// An estimate (usually slightly high) of the rendered length.
    fn render_len_estimate(&self) -> usize {
        let mut len = 2 * PER_HEADER_ESTIMATE;
        for section in &self.sections {
            len += PER_HEADER_ESTIMATE;
            match &section.kind {
                SectionKind::Add { path, lines, .. } => {
                    len += path.len();
                    len += lines
                        .iter()
                        .map(|l| l.len() + PER_LINE_ESTIMATE)
                        .sum::<usize>();
                }
                SectionKind::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    len += path.len() + move_to.map_or(0, str::len);
                    for hunk in hunks {
                        len += hunk
                            .headers
                            .iter()
                            .map(|h| PER_HEADER_ESTIMATE + h.len())
                            .sum::<usize>();
                        len += hunk
                            .lines
                            .iter()
                            .map(|l| l.text.len() + PER_LINE_ESTIMATE)
                            .sum::<usize>();
                    }
                }
                SectionKind::Delete { path } => len += path.len(),
            }
        }
        len
    }
}

/// One hunk: its `@@` line(s), its body, its markers.
fn render_hunk(out: &mut String, hunk: &Hunk<'_>) {
    for header in &hunk.headers {
        if header.is_empty() {
            out.push_str("@@\n");
        } else {
            push_line(out, &["@@ ", header]);
        }
    }
    for line in &hunk.lines {
        let prefix = match line.kind {
            LineKind::Context => " ",
            LineKind::Remove => "-",
            LineKind::Add => "+",
        };
        push_line(out, &[prefix, line.text]);
        if line.no_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    if hunk.end_of_file {
        out.push_str("*** End of File\n");
    }
}

/// Append the pieces, then `\n`.
fn push_line(out: &mut String, pieces: &[&str]) {
    for piece in pieces {
        out.push_str(piece);
    }
    out.push('\n');
}

/// True when `*** Move File: from -> to` parses back to this `from` and
/// `to`: the parser splits on the first ` -> `, so neither path may contain
/// one, and `from` may not end in ` ->` (which, with the separator's space,
/// would form an earlier ` -> `).
fn move_file_reads_back(from: &str, to: &str) -> bool {
    !from.contains(" -> ") && !to.contains(" -> ") && !from.ends_with(" ->")
}

#[cfg(test)]
mod tests {
    //! The canonical form, then properties: a generated patch renders to
    //! text that parses back to it; generated envelopes in any accepted
    //! spelling parse to the generated patch and survive parse → render →
    //! parse.

    use proptest::prelude::*;

    use crate::envelope::{parse, Hunk, HunkLine, LineKind, Patch, Section, SectionKind, Span};

    /// Render `patch`; compare to `expected`; parse the text back.
    #[track_caller]
    fn check(patch: &Patch<'_>, expected: &str) {
        let rendered = patch.render();
        assert_eq!(rendered, expected);
        assert_eq!(parse(&rendered).as_ref(), Ok(patch));
    }

    fn section(kind: SectionKind<'_>) -> Section<'_> {
        Section {
            span: Span::default(),
            kind,
        }
    }

    fn hunk<'a>(
        headers: &[&'a str],
        lines: &[(LineKind, &'a str, bool)],
        end_of_file: bool,
    ) -> Hunk<'a> {
        Hunk {
            span: Span::default(),
            headers: headers.to_vec(),
            lines: lines
                .iter()
                .map(|&(kind, text, no_newline)| HunkLine {
                    span: Span::default(),
                    kind,
                    text,
                    no_newline,
                })
                .collect(),
            end_of_file,
        }
    }

    #[test]
    fn canonical_form() {
        use LineKind::{Add, Context, Remove};
        let patch = Patch {
            sections: vec![
                section(SectionKind::Add {
                    path: "new",
                    lines: vec!["a", "", "b"],
                    no_newline_at_end: true,
                }),
                section(SectionKind::Add {
                    path: "empty",
                    lines: vec![],
                    no_newline_at_end: false,
                }),
                section(SectionKind::Update {
                    path: "u",
                    move_to: None,
                    hunks: vec![
                        hunk(
                            &[""],
                            &[
                                (Context, "c", false),
                                (Remove, "r", true),
                                (Add, "a", false),
                            ],
                            false,
                        ),
                        hunk(&[" spaced"], &[(Add, "", false)], true),
                        hunk(&["class A", "", "  def b"], &[(Context, "x", false)], false),
                    ],
                }),
                section(SectionKind::Update {
                    path: "from",
                    move_to: Some("to"),
                    hunks: vec![],
                }),
                section(SectionKind::Delete { path: "gone" }),
            ],
        };
        check(
            &patch,
            "*** Begin Patch\n\
             *** Add File: new\n+a\n+\n+b\n\\ No newline at end of file\n\
             *** Add File: empty\n\
             *** Update File: u\n@@\n c\n-r\n\\ No newline at end of file\n+a\n\
             @@  spaced\n+\n*** End of File\n\
             @@ class A\n@@\n@@   def b\n x\n\
             *** Move File: from -> to\n\
             *** Delete File: gone\n\
             *** End Patch\n",
        );
    }

    #[test]
    fn a_move_that_move_file_cannot_spell() {
        for (from, to) in [("a -> b", "c"), ("a", "b -> c"), ("a ->", "b")] {
            let patch = Patch {
                sections: vec![section(SectionKind::Update {
                    path: from,
                    move_to: Some(to),
                    hunks: vec![],
                })],
            };
            check(
                &patch,
                &format!(
                    "*** Begin Patch\n*** Update File: {from}\n*** Move to: {to}\n*** End Patch\n"
                ),
            );
        }
        // `from` ending in " -" or `to` starting with ">" still reads back.
        let patch = Patch {
            sections: vec![section(SectionKind::Update {
                path: "a -",
                move_to: Some("> b"),
                hunks: vec![],
            })],
        };
        check(
            &patch,
            "*** Begin Patch\n*** Move File: a - -> > b\n*** End Patch\n",
        );
    }

    // ---- an owned patch, for generation ---------------------------------------

    #[derive(Clone, Debug)]
    enum OwnedSection {
        Add {
            path: String,
            lines: Vec<String>,
            no_newline_at_end: bool,
        },
        Update {
            path: String,
            move_to: Option<String>,
            hunks: Vec<OwnedHunk>,
        },
        Delete {
            path: String,
        },
    }

    #[derive(Clone, Debug)]
    struct OwnedHunk {
        headers: Vec<String>,
        lines: Vec<(LineKind, String, bool)>,
        end_of_file: bool,
    }

    /// The borrowed [`Patch`] of generated sections.
    fn borrow(sections: &[OwnedSection]) -> Patch<'_> {
        let sections = sections
            .iter()
            .map(|s| {
                section(match s {
                    OwnedSection::Add {
                        path,
                        lines,
                        no_newline_at_end,
                    } => SectionKind::Add {
                        path,
                        lines: lines.iter().map(String::as_str).collect(),
                        no_newline_at_end: *no_newline_at_end,
                    },
                    OwnedSection::Update {
                        path,
                        move_to,
                        hunks,
                    } => SectionKind::Update {
                        path,
                        move_to: move_to.as_deref(),
                        hunks: hunks
                            .iter()
                            .map(|h| Hunk {
                                span: Span::default(),
                                headers: h.headers.iter().map(String::as_str).collect(),
                                lines: h
                                    .lines
                                    .iter()
                                    .map(|(kind, text, no_newline)| HunkLine {
                                        span: Span::default(),
                                        kind: *kind,
                                        text,
                                        no_newline: *no_newline,
                                    })
                                    .collect(),
                                end_of_file: h.end_of_file,
                            })
                            .collect(),
                    },
                    OwnedSection::Delete { path } => SectionKind::Delete { path },
                })
            })
            .collect();
        Patch { sections }
    }

    /// Text of one line: anything but `\n`, with the grammar's own
    /// characters and markers over-represented.
    fn text() -> impl Strategy<Value = String> {
        const SPECIAL: &[&str] = &[
            "",
            " ",
            "\r",
            " -> ",
            "*** End Patch",
            "*** End of File",
            "@@",
            "\\ No newline at end of file",
            "+",
            "-",
        ];
        prop_oneof![
            4 => "[ a-c+\\-@*\\\\>\r\t\u{e9}\u{65e5}\u{1f30d}]{0,8}",
            1 => proptest::sample::select(SPECIAL).prop_map(str::to_owned),
            1 => any::<String>().prop_map(|s| s.replace('\n', "")),
        ]
    }

    /// The free part of a path: no surrounding whitespace, no `\n`.
    fn path_part() -> impl Strategy<Value = String> {
        const SPECIAL: &[&str] = &["x ->", "a -> b", "a -", "> b", "-> ", " ->x", "日本"];
        prop_oneof![
            3 => "[a-c/.\\- >\r\t\u{e9}]{0,6}",
            1 => proptest::sample::select(SPECIAL).prop_map(str::to_owned),
        ]
        .prop_map(|s| s.trim().to_owned())
    }

    /// A unique path: the part before the first `:` (or after the last)
    /// is a number never used twice.
    fn unique_path(id: &mut usize, part: &str, id_first: bool) -> String {
        *id += 1;
        if id_first {
            format!("{id}:{part}")
        } else {
            format!("{part}:{id}")
        }
    }

    fn hunk_strategy() -> impl Strategy<Value = OwnedHunk> {
        (
            // One to three header lines: stacked headers are one header.
            proptest::collection::vec(text(), 1..4),
            proptest::collection::vec(
                (
                    proptest::sample::select(
                        &[LineKind::Context, LineKind::Remove, LineKind::Add][..],
                    ),
                    text(),
                    proptest::bool::weighted(0.15),
                ),
                1..6,
            ),
            proptest::bool::weighted(0.3),
        )
            .prop_map(|(headers, mut lines, end_of_file)| {
                // Keep only markers the parser accepts: on the last line of
                // the side(s) they speak for.
                let last_old = lines.iter().rposition(|l| l.0 != LineKind::Add);
                let last_new = lines.iter().rposition(|l| l.0 != LineKind::Remove);
                for (i, line) in lines.iter_mut().enumerate() {
                    let ok = match line.0 {
                        LineKind::Context => Some(i) == last_old && Some(i) == last_new,
                        LineKind::Remove => Some(i) == last_old,
                        LineKind::Add => Some(i) == last_new,
                    };
                    line.2 &= ok;
                }
                OwnedHunk {
                    headers,
                    lines,
                    end_of_file,
                }
            })
    }

    /// One section, with placeholder paths (made unique by [`patch_strategy`]).
    fn section_strategy() -> impl Strategy<Value = OwnedSection> {
        prop_oneof![
            (proptest::collection::vec(text(), 0..5), any::<bool>()).prop_map(|(lines, nl)| {
                let no_newline_at_end = nl && !lines.is_empty();
                OwnedSection::Add {
                    path: String::new(),
                    lines,
                    no_newline_at_end,
                }
            }),
            (
                any::<bool>(),
                proptest::collection::vec(hunk_strategy(), 0..4)
            )
                .prop_map(|(moves, mut hunks)| {
                    if !moves && hunks.is_empty() {
                        hunks.push(OwnedHunk {
                            headers: vec![String::new()],
                            lines: vec![(LineKind::Context, String::new(), false)],
                            end_of_file: false,
                        });
                    }
                    OwnedSection::Update {
                        path: String::new(),
                        move_to: moves.then(String::new),
                        hunks,
                    }
                }),
            Just(OwnedSection::Delete {
                path: String::new()
            }),
        ]
    }

    /// A valid patch: 1..6 sections, unique paths (a move onto itself now
    /// and then, which the parser leaves to the planner).
    fn patch_strategy() -> impl Strategy<Value = Vec<OwnedSection>> {
        (proptest::collection::vec(
            (
                section_strategy(),
                path_part(),
                path_part(),
                any::<bool>(),
                any::<bool>(),
                proptest::bool::weighted(0.1),
            ),
            1..6,
        ),)
            .prop_map(|(sections,)| {
                let mut id = 0;
                sections
                    .into_iter()
                    .map(
                        |(mut s, from, to, from_id_first, to_id_first, onto_itself)| {
                            let from = unique_path(&mut id, &from, from_id_first);
                            match &mut s {
                                OwnedSection::Add { path, .. } | OwnedSection::Delete { path } => {
                                    *path = from
                                }
                                OwnedSection::Update { path, move_to, .. } => {
                                    if let Some(dest) = move_to {
                                        *dest = if onto_itself {
                                            from.clone()
                                        } else {
                                            unique_path(&mut id, &to, to_id_first)
                                        };
                                    }
                                    *path = from;
                                }
                            }
                            s
                        },
                    )
                    .collect()
            })
    }

    /// A tiny deterministic choice stream for [`render_variant`].
    struct Choices(u64);

    impl Choices {
        fn pick(&mut self) -> bool {
            // xorshift64
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 & 1 == 1
        }
    }

    /// An envelope for `sections` in any spelling the parser accepts: either
    /// move spelling (when `Move File` can carry the paths), `@@h` or `@@ h`,
    /// `@@ ` for no header, CRLF or LF, with or without a final newline.
    fn render_variant(sections: &[OwnedSection], seed: u64) -> String {
        let mut c = Choices(seed | 1);
        let mut lines: Vec<String> = vec!["*** Begin Patch".into()];
        for s in sections {
            match s {
                OwnedSection::Add {
                    path,
                    lines: body,
                    no_newline_at_end,
                } => {
                    lines.push(format!("*** Add File: {path}"));
                    lines.extend(body.iter().map(|l| format!("+{l}")));
                    if *no_newline_at_end {
                        lines.push("\\ No newline at end of file".into());
                    }
                }
                OwnedSection::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    match move_to {
                        Some(to) if super::move_file_reads_back(path, to) && c.pick() => {
                            lines.push(format!("*** Move File: {path} -> {to}"));
                        }
                        Some(to) => {
                            lines.push(format!("*** Update File: {path}"));
                            lines.push(format!("*** Move to: {to}"));
                        }
                        None => lines.push(format!("*** Update File: {path}")),
                    }
                    for h in hunks {
                        for header in &h.headers {
                            let spaced = header.starts_with(' ') || c.pick();
                            lines.push(if spaced {
                                format!("@@ {header}")
                            } else {
                                format!("@@{header}")
                            });
                        }
                        for (kind, text, no_newline) in &h.lines {
                            let prefix = match kind {
                                LineKind::Context => ' ',
                                LineKind::Remove => '-',
                                LineKind::Add => '+',
                            };
                            lines.push(format!("{prefix}{text}"));
                            if *no_newline {
                                lines.push("\\ No newline at end of file".into());
                            }
                        }
                        if h.end_of_file {
                            lines.push("*** End of File".into());
                        }
                    }
                }
                OwnedSection::Delete { path } => lines.push(format!("*** Delete File: {path}")),
            }
        }
        lines.push("*** End Patch".into());
        let newline = if c.pick() { "\r\n" } else { "\n" };
        let mut text = lines.join(newline);
        if c.pick() {
            text.push_str(newline);
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Generated patch → render → parse is the identity (also as CRLF).
        #[test]
        fn render_then_parse_is_the_identity(sections in patch_strategy()) {
            let patch = borrow(&sections);
            let rendered = patch.render();
            let reparsed = parse(&rendered);
            prop_assert_eq!(reparsed.as_ref(), Ok(&patch), "rendered: {:?}", rendered);
            let crlf = rendered.replace('\n', "\r\n");
            let reparsed = parse(&crlf);
            prop_assert_eq!(reparsed.as_ref(), Ok(&patch), "as CRLF: {:?}", crlf);
        }

        /// A generated envelope in any accepted spelling parses to its patch,
        /// and parse → render → parse is the identity.
        #[test]
        fn parse_then_render_then_parse_is_the_identity(sections in patch_strategy(), seed in any::<u64>()) {
            let text = render_variant(&sections, seed);
            let parsed = parse(&text);
            prop_assert_eq!(parsed.as_ref(), Ok(&borrow(&sections)), "envelope: {:?}", text);
            let parsed = parsed.expect("checked above");
            let rendered = parsed.render();
            let reparsed = parse(&rendered);
            prop_assert_eq!(reparsed.as_ref(), Ok(&parsed), "rendered: {:?}", rendered);
            // The canonical text is a fixed point.
            let canonical = reparsed.expect("checked above").render();
            prop_assert_eq!(canonical, rendered);
        }
    }
}
