//! The independent model of the `apply_patch` envelope: a line-list parser
//! and a naive hunk applier, written from `docs/clarifications.md` and the
//! grammar in patch-envelope.md, sharing no code with the engine.
//!
//! It is meant to be obviously correct rather than fast: the parser walks a
//! `Vec<&str>` with an index; the applier keeps the file as a `Vec` of line
//! items and, for every hunk, scans the whole list for its old block
//! (O(lines × hunk) per hunk). The differential oracles in `super` compare
//! the engine with it; when they disagree, one of the two is wrong, and the
//! model is short enough to check by reading.
//!
//! Left out: symlinks and the real filesystem (see [`super::apply_model`]).

use std::collections::BTreeMap;

use patchspec_engine::envelope::{LineKind, Patch, SectionKind};

/// `\ No newline at end of file`.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

/// A parsed envelope, with the envelope line of everything (so the oracle
/// compares line numbers too, which the engine's `Span` equality ignores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MPatch<'a> {
    /// The sections, in order.
    pub sections: Vec<MSection<'a>>,
}

/// One section and the line of its directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MSection<'a> {
    /// 1-based envelope line of the directive.
    pub line: usize,
    /// What it does.
    pub kind: MKind<'a>,
}

/// The three section shapes (a move is an update with `move_to`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MKind<'a> {
    /// `*** Add File:`.
    Add {
        /// As written.
        path: &'a str,
        /// `+` stripped.
        lines: Vec<&'a str>,
        /// Closed by the no-newline marker.
        no_newline: bool,
    },
    /// `*** Update File:` (optionally `*** Move to:`) or `*** Move File:`.
    Update {
        /// Source, as written.
        path: &'a str,
        /// Destination of a move.
        move_to: Option<&'a str>,
        /// The hunks.
        hunks: Vec<MHunk<'a>>,
    },
    /// `*** Delete File:`.
    Delete {
        /// As written.
        path: &'a str,
    },
}

/// One `@@` hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MHunk<'a> {
    /// Line of its (first) `@@`.
    pub line: usize,
    /// Text after each `@@` line of its header, one space stripped:
    /// consecutive `@@` lines are one header (C-env-stacked-headers).
    pub headers: Vec<&'a str>,
    /// Body lines.
    pub lines: Vec<MLine<'a>>,
    /// Closed by `*** End of File`.
    pub eof: bool,
}

/// One hunk body line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MLine<'a> {
    /// Its envelope line.
    pub line: usize,
    /// `' '`, `'-'` or `'+'`.
    pub kind: char,
    /// Without the prefix.
    pub text: &'a str,
    /// Followed by the no-newline marker.
    pub no_newline: bool,
}

impl<'a> MPatch<'a> {
    /// The engine's [`Patch`] in model form (line numbers included),
    /// borrowing its texts.
    pub fn from_engine(p: &Patch<'a>) -> MPatch<'a> {
        let sections = p
            .sections
            .iter()
            .map(|s| MSection {
                line: s.span.line,
                kind: match &s.kind {
                    SectionKind::Add {
                        path,
                        lines,
                        no_newline_at_end,
                    } => MKind::Add {
                        path,
                        lines: lines.clone(),
                        no_newline: *no_newline_at_end,
                    },
                    SectionKind::Update {
                        path,
                        move_to,
                        hunks,
                    } => MKind::Update {
                        path,
                        move_to: *move_to,
                        hunks: hunks
                            .iter()
                            .map(|h| MHunk {
                                line: h.span.line,
                                headers: h.headers.clone(),
                                lines: h
                                    .lines
                                    .iter()
                                    .map(|l| MLine {
                                        line: l.span.line,
                                        kind: match l.kind {
                                            LineKind::Context => ' ',
                                            LineKind::Remove => '-',
                                            LineKind::Add => '+',
                                        },
                                        text: l.text,
                                        no_newline: l.no_newline,
                                    })
                                    .collect(),
                                eof: h.end_of_file,
                            })
                            .collect(),
                    },
                    SectionKind::Delete { path } => MKind::Delete { path },
                },
            })
            .collect();
        MPatch { sections }
    }
}

// ---------------------------------------------------------------- parser

/// One envelope line, classified on its own.
#[derive(Clone, Copy, Debug)]
enum L<'a> {
    Begin,
    End,
    EndOfFile,
    Add(&'a str),
    Update(&'a str),
    Delete(&'a str),
    MoveTo(&'a str),
    MoveFile(&'a str, &'a str),
    Marker,
    Text(&'a str),
    /// A malformed `***` line or marker: an error wherever it stands.
    Bad,
}

impl L<'_> {
    /// The directives that end a body and may start the next section.
    fn starts_section(self) -> bool {
        matches!(
            self,
            L::End | L::Add(_) | L::Update(_) | L::Delete(_) | L::MoveFile(..)
        )
    }
}

fn ok_path(p: &str) -> bool {
    !p.is_empty() && p.trim() == p
}

fn classify(s: &str) -> L<'_> {
    if s.starts_with("***") {
        match s {
            "*** Begin Patch" => return L::Begin,
            "*** End Patch" => return L::End,
            "*** End of File" => return L::EndOfFile,
            _ => {}
        }
        for (prefix, which) in [
            ("*** Add File: ", 0),
            ("*** Update File: ", 1),
            ("*** Delete File: ", 2),
            ("*** Move to: ", 3),
        ] {
            if let Some(p) = s.strip_prefix(prefix) {
                if !ok_path(p) {
                    return L::Bad;
                }
                return match which {
                    0 => L::Add(p),
                    1 => L::Update(p),
                    2 => L::Delete(p),
                    _ => L::MoveTo(p),
                };
            }
        }
        if let Some(arg) = s.strip_prefix("*** Move File: ") {
            if let Some((a, b)) = arg.split_once(" -> ") {
                if ok_path(a) && ok_path(b) {
                    return L::MoveFile(a, b);
                }
            }
        }
        return L::Bad;
    }
    if s == NO_NEWLINE {
        return L::Marker;
    }
    if let Some(rest) = s.strip_prefix(NO_NEWLINE) {
        if rest.chars().all(char::is_whitespace) {
            return L::Bad;
        }
    }
    L::Text(s)
}

struct P<'a> {
    lines: Vec<&'a str>,
    /// Index of the next line to look at (0-based); its number is `i + 1`.
    i: usize,
    claimed: BTreeMap<&'a str, usize>,
}

type R<T> = Result<T, usize>;

impl<'a> P<'a> {
    fn peek(&self) -> Option<L<'a>> {
        self.lines.get(self.i).map(|s| classify(s))
    }

    fn here(&self) -> usize {
        self.i + 1
    }

    fn claim(&mut self, path: &'a str, section: usize, line: usize) -> R<()> {
        if self.claimed.contains_key(path) {
            return Err(line);
        }
        self.claimed.insert(path, section);
        Ok(())
    }

    fn envelope(mut self) -> R<MPatch<'a>> {
        if self.lines.first() != Some(&"*** Begin Patch") {
            return Err(1);
        }
        self.i = 1;
        let mut sections = Vec::new();
        loop {
            let here = self.here();
            let Some(l) = self.peek() else {
                return Err(here);
            };
            let kind = match l {
                L::End => {
                    if sections.is_empty() {
                        return Err(here);
                    }
                    if self.i + 1 < self.lines.len() {
                        return Err(here + 1);
                    }
                    return Ok(MPatch { sections });
                }
                L::Add(path) => {
                    self.claim(path, here, here)?;
                    self.i += 1;
                    self.add_body(path)?
                }
                L::Update(path) => {
                    self.claim(path, here, here)?;
                    self.i += 1;
                    let mut move_to = None;
                    if let Some(L::MoveTo(to)) = self.peek() {
                        if to != path {
                            let to_line = self.here();
                            self.claim(to, here, to_line)?;
                        }
                        self.i += 1;
                        move_to = Some(to);
                    }
                    let hunks = self.hunks(move_to.is_some())?;
                    MKind::Update {
                        path,
                        move_to,
                        hunks,
                    }
                }
                L::MoveFile(from, to) => {
                    self.claim(from, here, here)?;
                    if to != from {
                        self.claim(to, here, here)?;
                    }
                    self.i += 1;
                    let hunks = self.hunks(true)?;
                    MKind::Update {
                        path: from,
                        move_to: Some(to),
                        hunks,
                    }
                }
                L::Delete(path) => {
                    self.claim(path, here, here)?;
                    self.i += 1;
                    self.section_end()?;
                    MKind::Delete { path }
                }
                _ => return Err(here),
            };
            sections.push(MSection { line: here, kind });
        }
    }

    /// After a complete body: the end, or a line that starts a section.
    fn section_end(&self) -> R<()> {
        match self.peek() {
            None => Ok(()),
            Some(l) if l.starts_section() => Ok(()),
            Some(_) => Err(self.here()),
        }
    }

    fn add_body(&mut self, path: &'a str) -> R<MKind<'a>> {
        let mut lines = Vec::new();
        let mut no_newline = false;
        while let Some(l) = self.peek() {
            match l {
                L::Text(t) if t.starts_with('+') => {
                    lines.push(&t[1..]);
                    self.i += 1;
                }
                L::Marker if !lines.is_empty() => {
                    self.i += 1;
                    no_newline = true;
                    self.section_end()?;
                    break;
                }
                l if l.starts_section() => break,
                _ => return Err(self.here()),
            }
        }
        Ok(MKind::Add {
            path,
            lines,
            no_newline,
        })
    }

    fn hunks(&mut self, optional: bool) -> R<Vec<MHunk<'a>>> {
        let mut hunks = Vec::new();
        while let Some(l) = self.peek() {
            match l {
                L::Text(t) if t.starts_with("@@") => {
                    let at = self.here();
                    let header = &t[2..];
                    let header = header.strip_prefix(' ').unwrap_or(header);
                    self.i += 1;
                    hunks.push(self.hunk(at, header)?);
                }
                l if l.starts_section() && (optional || !hunks.is_empty()) => break,
                _ => return Err(self.here()),
            }
        }
        Ok(hunks)
    }

    fn hunk(&mut self, at: usize, header: &'a str) -> R<MHunk<'a>> {
        let mut headers = vec![header];
        let mut lines: Vec<MLine<'a>> = Vec::new();
        let mut eof = false;
        let mut after_marker = false;
        while let Some(l) = self.peek() {
            let here = self.here();
            match l {
                L::Text(t) => match t.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => {
                        lines.push(MLine {
                            line: here,
                            kind: c,
                            text: &t[1..],
                            no_newline: false,
                        });
                        after_marker = false;
                        self.i += 1;
                    }
                    _ if t.starts_with("@@") && !lines.is_empty() => break,
                    _ if t.starts_with("@@") => {
                        // Before any body line: one more header line.
                        let h = &t[2..];
                        headers.push(h.strip_prefix(' ').unwrap_or(h));
                        self.i += 1;
                    }
                    _ => return Err(here),
                },
                L::Marker => {
                    if after_marker {
                        return Err(here);
                    }
                    let Some(last) = lines.last_mut() else {
                        return Err(here);
                    };
                    last.no_newline = true;
                    after_marker = true;
                    self.i += 1;
                }
                L::EndOfFile if !lines.is_empty() => {
                    self.i += 1;
                    eof = true;
                    break;
                }
                l if l.starts_section() && !lines.is_empty() => break,
                _ => return Err(here),
            }
        }
        // A marker must follow the last line of the side(s) it speaks for
        // (C-text-final-newline); checked once the hunk is complete, and
        // reported at the (first) misplaced marker.
        let last_old = lines.iter().rposition(|l| l.kind != '+');
        let last_new = lines.iter().rposition(|l| l.kind != '-');
        for (j, l) in lines.iter().enumerate() {
            let ok = match l.kind {
                ' ' => Some(j) == last_old && Some(j) == last_new,
                '-' => Some(j) == last_old,
                _ => Some(j) == last_new,
            };
            if l.no_newline && !ok {
                return Err(l.line + 1);
            }
        }
        Ok(MHunk {
            line: at,
            headers,
            lines,
            eof,
        })
    }
}

/// Parse an envelope; `Err(line)` is the 1-based line of the first error
/// (one past the last line when the envelope ends too early).
pub fn parse(bytes: &[u8]) -> Result<MPatch<'_>, usize> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count())
        }
    };
    // The pieces between `\n`s (a final `\n` ends the last line). Found
    // with memchr rather than `str::split`: the same pieces, found a vector
    // at a time rather than through a searcher whose every comparison the
    // fuzzer's instrumentation records (docs/fuzzing.md).
    let mut lines: Vec<&str> = Vec::new();
    if !text.is_empty() {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', body.as_bytes()) {
            lines.push(&body[start..end]);
            start = end + 1;
        }
        lines.push(&body[start..]);
    }
    if lines.first() == Some(&"*** Begin Patch\r") {
        for l in &mut lines {
            if let Some(s) = l.strip_suffix('\r') {
                *l = s;
            }
        }
    }
    P {
        lines,
        i: 0,
        claimed: BTreeMap::new(),
    }
    .envelope()
}

/// How many lines the parser sees in `bytes` (a final `\n` ends the last
/// line; it does not start a new one).
pub fn line_count(bytes: &[u8]) -> usize {
    if bytes.is_empty() {
        return 0;
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    1 + body.iter().filter(|&&b| b == b'\n').count()
}

// ---------------------------------------------------------------- applier

/// Why a hunk failed, as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HunkErr {
    /// A `\ No newline` marker on a line that is not last of its side.
    Misplaced,
    /// The old block occurs nowhere.
    NotFound,
    /// It occurs more than once.
    Multiple,
    /// Its one match touches what an earlier hunk wrote or removed.
    Overlapping,
}

/// A file split into lines: (content, ending) pairs, and whether a BOM leads.
pub struct FileLines<'a> {
    /// A UTF-8 BOM stood in front.
    pub bom: bool,
    /// (content, ending) with ending `"\n"`, `"\r\n"` or `""` (last line only).
    pub lines: Vec<(&'a [u8], &'a [u8])>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Split `bytes` into lines, the obvious way.
pub fn split_lines(bytes: &[u8]) -> FileLines<'_> {
    let (bom, mut rest) = match bytes.strip_prefix(BOM) {
        Some(r) => (true, r),
        None => (false, bytes),
    };
    let mut lines = Vec::new();
    while !rest.is_empty() {
        match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let (line, tail) = rest.split_at(i + 1);
                let (content, ending) = if line.ends_with(b"\r\n") {
                    line.split_at(line.len() - 2)
                } else {
                    line.split_at(line.len() - 1)
                };
                lines.push((content, ending));
                rest = tail;
            }
            None => {
                lines.push((rest, &[][..]));
                rest = &[];
            }
        }
    }
    FileLines { bom, lines }
}

impl<'a> FileLines<'a> {
    /// The ending for added lines: that of the first terminated line, LF if none.
    pub fn newline(&self) -> &'a [u8] {
        self.lines
            .iter()
            .find(|(_, e)| !e.is_empty())
            .map_or(b"\n", |&(_, e)| e)
    }

    /// Whether the file ends with a newline (an empty file does).
    pub fn final_newline(&self) -> bool {
        self.lines.last().is_none_or(|(_, e)| !e.is_empty())
    }
}

/// Join lines back: BOM, every line with its ending (a line without one gets
/// `nl` when another follows), the last one's ending set by `final_newline`.
pub fn join_lines(bom: bool, lines: &[(&[u8], &[u8])], nl: &[u8], final_newline: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice(BOM);
    }
    for (i, (content, ending)) in lines.iter().enumerate() {
        out.extend_from_slice(content);
        let last = i + 1 == lines.len();
        if last && !final_newline {
            continue;
        }
        if ending.is_empty() {
            out.extend_from_slice(nl);
        } else {
            out.extend_from_slice(ending);
        }
    }
    out
}

/// A post-state item: a line (with the hunk that wrote it, if any) or the
/// place where a hunk removed lines and wrote none.
#[derive(Clone, Debug)]
enum Item<'a> {
    Line {
        content: &'a [u8],
        /// Original ending, or `""` for an added line (it takes the file's).
        ending: &'a [u8],
        owner: Option<usize>,
    },
    Cut,
}

/// Apply the hunks of one Update section to `original`, the naive way
/// (clarifications C-match-*, C-text-*).
pub fn apply_hunks<'a>(
    original: &'a [u8],
    hunks: &[MHunk<'a>],
) -> Result<Vec<u8>, (usize, HunkErr)> {
    let file = split_lines(original);
    let nl = file.newline();
    // Marker placement first, for every hunk (it is a property of the patch).
    let mut shapes = Vec::new();
    for (i, h) in hunks.iter().enumerate() {
        let last_old = h.lines.iter().rposition(|l| l.kind != '+');
        let last_new = h.lines.iter().rposition(|l| l.kind != '-');
        let (mut old_nn, mut new_nn) = (false, false);
        for (j, l) in h.lines.iter().enumerate() {
            if !l.no_newline {
                continue;
            }
            let ok = match l.kind {
                ' ' => Some(j) == last_old && Some(j) == last_new,
                '-' => Some(j) == last_old,
                _ => Some(j) == last_new,
            };
            if !ok {
                return Err((i, HunkErr::Misplaced));
            }
            old_nn |= l.kind != '+';
            new_nn |= l.kind != '-';
        }
        shapes.push((old_nn, new_nn));
    }
    let mut items: Vec<Item> = file
        .lines
        .iter()
        .map(|&(content, ending)| Item::Line {
            content,
            ending,
            owner: None,
        })
        .collect();
    let mut final_nl = file.final_newline();
    for (i, h) in hunks.iter().enumerate() {
        let (old_nn, new_nn) = shapes[i];
        let at_end = h.eof || old_nn || new_nn;
        let old: Vec<&[u8]> = h
            .lines
            .iter()
            .filter(|l| l.kind != '+')
            .map(|l| l.text.as_bytes())
            .collect();
        if old_nn && final_nl {
            return Err((i, HunkErr::NotFound));
        }
        let line_at: Vec<usize> = (0..items.len())
            .filter(|&k| matches!(items[k], Item::Line { .. }))
            .collect();
        let n = line_at.len();
        if old.is_empty() {
            if !at_end && n > 0 {
                return Err((i, HunkErr::Multiple));
            }
            for l in h.lines.iter().filter(|l| l.kind == '+') {
                items.push(Item::Line {
                    content: l.text.as_bytes(),
                    ending: &[],
                    owner: Some(i),
                });
            }
            if new_nn {
                final_nl = false;
            }
            continue;
        }
        let content = |k: usize| match &items[line_at[k]] {
            Item::Line { content, .. } => *content,
            Item::Cut => unreachable!("line_at indexes lines only"),
        };
        let matches: Vec<usize> = (0..n.saturating_sub(old.len() - 1))
            .filter(|&s| (0..old.len()).all(|j| content(s + j) == old[j]))
            .filter(|&s| !at_end || s + old.len() == n)
            .collect();
        let s = match matches.len() {
            0 => return Err((i, HunkErr::NotFound)),
            1 => matches[0],
            _ => return Err((i, HunkErr::Multiple)),
        };
        let (first, last) = (line_at[s], line_at[s + old.len() - 1]);
        let touches = items[first..=last].iter().any(|it| match it {
            Item::Line { owner, .. } => owner.is_some(),
            Item::Cut => true,
        });
        if touches {
            return Err((i, HunkErr::Overlapping));
        }
        let matched: Vec<Item> = items[first..=last].to_vec();
        let mut old_iter = matched.into_iter();
        let mut new_items = Vec::new();
        for l in &h.lines {
            match l.kind {
                ' ' => {
                    let Some(Item::Line {
                        content, ending, ..
                    }) = old_iter.next()
                    else {
                        unreachable!("the match has one line per old line")
                    };
                    new_items.push(Item::Line {
                        content,
                        ending,
                        owner: Some(i),
                    });
                }
                '-' => {
                    old_iter.next();
                }
                _ => new_items.push(Item::Line {
                    content: l.text.as_bytes(),
                    ending: &[],
                    owner: Some(i),
                }),
            }
        }
        if new_items.is_empty() {
            new_items.push(Item::Cut);
        }
        let reaches_end = s + old.len() == n;
        items.splice(first..=last, new_items);
        if at_end || reaches_end {
            if new_nn {
                final_nl = false;
            } else if old_nn {
                final_nl = true;
            }
        }
    }
    let lines: Vec<(&[u8], &[u8])> = items
        .into_iter()
        .filter_map(|it| match it {
            Item::Line {
                content, ending, ..
            } => Some((content, ending)),
            Item::Cut => None,
        })
        .collect();
    Ok(join_lines(file.bom, &lines, nl, final_nl))
}

/// The bytes of an Add section (C-env-add-newline).
pub fn add_content(lines: &[&str], no_newline: bool) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    if !no_newline && lines.last().is_some_and(|l| !l.is_empty()) {
        out.push(b'\n');
    }
    out
}
