//! Envelope text → [`Patch`]: the `apply_patch` grammar, strictly.
//!
//! The main entry is [`parse`]; [`ParseError`] says where (the 1-based
//! envelope line) and what was expected versus found. The parser stops at
//! the first error: the envelope is a single plan, and an error anywhere
//! refuses all of it.
//!
//! # The grammar
//!
//! ```text
//! envelope := "*** Begin Patch" NL section+ "*** End Patch" [NL]
//! section  := add | update | delete | move
//! add      := "*** Add File: " path NL ("+" text NL)* ["\ No newline at end of file" NL]
//! update   := "*** Update File: " path NL ["*** Move to: " path NL] hunk*
//! delete   := "*** Delete File: " path NL
//! move     := "*** Move File: " path " -> " path NL hunk*
//! hunk     := ("@@" [" "] header NL)+ body+ ["*** End of File" NL]
//! body     := (" " | "-" | "+") text NL ["\ No newline at end of file" NL]
//! ```
//!
//! Several `@@` lines in a row are one hunk's header, not empty hunks
//! (models trained on OpenAI's envelope stack them to narrow the place:
//! `@@ class Foo` then `@@ def bar`); like all header text they are
//! informational. An update without a move needs at least one hunk. Lines
//! are split on `\n`;
//! when the first line is `*** Begin Patch\r` the envelope is CRLF and one
//! trailing `\r` is stripped from every line, otherwise a `\r` is content.
//! Marker lines match exactly (trailing whitespace is an error of its own),
//! a path has no surrounding whitespace, and no path (as written) appears in
//! two sections.
//!
//! # What it leaves out
//!
//! Paths are not normalised or checked against the workspace (the path guard
//! and the planner do that), and no hunk is matched against a file
//! ([`crate::matching`]). Nothing here is lenient: a dropped leading space on
//! a blank context line, text around the envelope, or a marker with trailing
//! spaces is an error that names its line, never a guess.
//!
//! # Cost
//!
//! One pass over the text, no allocation per line (the [`Patch`] borrows every
//! line), and a hash map for the duplicate-path check: linear in the envelope.

use std::collections::HashMap;

use super::ast::{Hunk, HunkLine, LineKind, Patch, Section, SectionKind, Span};

/// A parse error: where (1-based envelope line) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based envelope line. At most one past the last line (an envelope
    /// that ends too early is reported on the line after its last).
    pub line: usize,
    /// What was expected and what was found; a lowercase fragment.
    pub message: String,
}

/// Parse an envelope.
///
/// The returned [`Patch`] borrows its paths and line texts from `text`.
///
/// # Errors
///
/// Any departure from the grammar (see the module documentation), with the
/// envelope line where it stands.
pub fn parse(text: &str) -> Result<Patch<'_>, ParseError> {
    Parser::new(text).envelope()
}

/// Parse an envelope given as bytes: invalid UTF-8 is a parse error at its line.
///
/// # Errors
///
/// As [`parse`], plus an envelope that is not valid UTF-8.
pub fn parse_bytes(bytes: &[u8]) -> Result<Patch<'_>, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(ParseError {
            line: 1 + memchr::memchr_iter(b'\n', &bytes[..e.valid_up_to()]).count(),
            message: "the envelope is not valid UTF-8".into(),
        }),
    }
}

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const END_OF_FILE: &str = "*** End of File";
const NO_NEWLINE: &str = "\\ No newline at end of file";
const ADD_FILE: &str = "*** Add File:";
const UPDATE_FILE: &str = "*** Update File:";
const DELETE_FILE: &str = "*** Delete File:";
const MOVE_FILE: &str = "*** Move File:";
const MOVE_TO: &str = "*** Move to:";
const MOVE_ARROW: &str = " -> ";

/// The longest stretch of a found line quoted in an error, in characters.
const QUOTE_MAX_CHARS: usize = 60;

/// A `***` line, recognised.
#[derive(Clone, Copy, Debug)]
enum Directive<'a> {
    BeginPatch,
    EndPatch,
    EndOfFile,
    AddFile(&'a str),
    UpdateFile(&'a str),
    DeleteFile(&'a str),
    MoveFile(&'a str, &'a str),
    MoveTo(&'a str),
}

impl Directive<'_> {
    /// True for the lines that close whatever body came before them.
    fn ends_body(self) -> bool {
        matches!(
            self,
            Directive::EndPatch
                | Directive::AddFile(_)
                | Directive::UpdateFile(_)
                | Directive::DeleteFile(_)
                | Directive::MoveFile(..)
        )
    }

    /// The error for a directive that stands where the grammar has no place
    /// for it and no better message applies.
    fn misplaced(self, found: &str) -> String {
        match self {
            Directive::BeginPatch => "'*** Begin Patch' may only stand on line 1".into(),
            Directive::MoveTo(_) => {
                "'*** Move to:' must directly follow an '*** Update File:' line".into()
            }
            Directive::EndOfFile => {
                "'*** End of File' may only close a hunk, after at least one hunk line".into()
            }
            Directive::EndPatch
            | Directive::AddFile(_)
            | Directive::UpdateFile(_)
            | Directive::DeleteFile(_)
            | Directive::MoveFile(..) => format!("unexpected {}", describe(found)),
        }
    }
}

/// One envelope line, classified without looking at its neighbours.
#[derive(Clone, Copy, Debug)]
enum Line<'a> {
    /// A valid `***` directive.
    Directive(Directive<'a>),
    /// `\ No newline at end of file`.
    NoNewline,
    /// Anything else: body lines, `@@` lines, junk.
    Text,
}

/// Classify one line (CRLF already stripped). The errors here hold wherever
/// the line stands: an unknown `***` directive, a malformed path, trailing
/// whitespace after a marker.
fn classify(text: &str) -> Result<Line<'_>, String> {
    if text.starts_with("***") {
        return directive(text).map(Line::Directive);
    }
    if let Some(rest) = text.strip_prefix(NO_NEWLINE) {
        if rest.is_empty() {
            return Ok(Line::NoNewline);
        }
        if rest.chars().all(char::is_whitespace) {
            return Err(format!("trailing whitespace after '{NO_NEWLINE}'"));
        }
    }
    Ok(Line::Text)
}

/// Recognise a line that starts with `***`.
fn directive(text: &str) -> Result<Directive<'_>, String> {
    for (marker, directive) in [
        (BEGIN_PATCH, Directive::BeginPatch),
        (END_PATCH, Directive::EndPatch),
        (END_OF_FILE, Directive::EndOfFile),
    ] {
        if let Some(rest) = text.strip_prefix(marker) {
            if rest.is_empty() {
                return Ok(directive);
            }
            if rest.chars().all(char::is_whitespace) {
                return Err(format!("trailing whitespace after '{marker}'"));
            }
        }
    }
    if let Some(rest) = text.strip_prefix(ADD_FILE) {
        return argument(ADD_FILE, rest)
            .and_then(path)
            .map(Directive::AddFile);
    }
    if let Some(rest) = text.strip_prefix(UPDATE_FILE) {
        return argument(UPDATE_FILE, rest)
            .and_then(path)
            .map(Directive::UpdateFile);
    }
    if let Some(rest) = text.strip_prefix(DELETE_FILE) {
        return argument(DELETE_FILE, rest)
            .and_then(path)
            .map(Directive::DeleteFile);
    }
    if let Some(rest) = text.strip_prefix(MOVE_TO) {
        return argument(MOVE_TO, rest)
            .and_then(path)
            .map(Directive::MoveTo);
    }
    if let Some(rest) = text.strip_prefix(MOVE_FILE) {
        let arg = argument(MOVE_FILE, rest)?;
        let Some((from, to)) = arg.split_once(MOVE_ARROW) else {
            return Err(format!(
                "expected '{MOVE_FILE} <from> -> <to>', found {}",
                describe(text)
            ));
        };
        let from = path(from).map_err(|e| format!("move source: {e}"))?;
        let to = path(to).map_err(|e| format!("move destination: {e}"))?;
        return Ok(Directive::MoveFile(from, to));
    }
    Err(format!(
        "unknown directive {}; the directives are '{ADD_FILE} <path>', \
         '{UPDATE_FILE} <path>', '{MOVE_TO} <path>', '{DELETE_FILE} <path>', \
         '{MOVE_FILE} <from> -> <to>', '{END_OF_FILE}' and '{END_PATCH}'",
        quote(text)
    ))
}

/// The argument after `name` (a directive ending in `:`): one space, then
/// the rest of the line.
fn argument<'a>(name: &str, rest: &'a str) -> Result<&'a str, String> {
    if rest.chars().all(char::is_whitespace) {
        return Err(format!("missing path after '{name}'"));
    }
    match rest.strip_prefix(' ') {
        Some(arg) => Ok(arg),
        None => Err(format!(
            "expected a space after '{name}', found {}",
            describe(rest)
        )),
    }
}

/// Check a path as written: non-empty, no surrounding whitespace.
fn path(path: &str) -> Result<&str, String> {
    if path.is_empty() {
        Err("the path is empty".into())
    } else if path.trim() != path {
        Err(format!(
            "path {} has leading or trailing whitespace",
            quote(path)
        ))
    } else {
        Ok(path)
    }
}

/// `text` in double quotes with Rust escapes, cut after
/// [`QUOTE_MAX_CHARS`] characters (then followed by `...`).
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_MAX_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
    }
}

/// What an error says it found: a quoted line, or "an empty line".
fn describe(text: &str) -> String {
    if text.is_empty() {
        "an empty line".into()
    } else {
        quote(text)
    }
}

/// The lines of an envelope, one at a time, with one line of look-ahead.
struct Cursor<'a> {
    /// The lines not yet looked at (the final line terminator, if any, is
    /// already cut off, so every item is a line).
    lines: std::str::Split<'a, char>,
    /// True when the envelope uses CRLF (its first line ends in `\r`).
    crlf: bool,
    /// How many lines have been consumed; the next line is `consumed + 1`.
    consumed: usize,
    /// The next line, once looked at; `Some(None)` at the end.
    peeked: Option<Option<&'a str>>,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut lines = body.split('\n');
        if text.is_empty() {
            // `"".split('\n')` yields one empty item; an empty text has no line.
            lines.next();
        }
        let crlf = body
            .split('\n')
            .next()
            .is_some_and(|first| first.strip_suffix('\r') == Some(BEGIN_PATCH));
        Cursor {
            lines,
            crlf,
            consumed: 0,
            peeked: None,
        }
    }

    /// The number of the next line (1-based).
    fn next_line(&self) -> usize {
        self.consumed + 1
    }

    /// The next line's text, CRLF stripped, without consuming it.
    fn peek_text(&mut self) -> Option<&'a str> {
        let (lines, crlf) = (&mut self.lines, self.crlf);
        *self.peeked.get_or_insert_with(|| {
            lines.next().map(|l| match l.strip_suffix('\r') {
                Some(stripped) if crlf => stripped,
                _ => l,
            })
        })
    }

    /// The next line, classified, without consuming it.
    fn peek(&mut self) -> Result<Option<(Line<'a>, &'a str)>, ParseError> {
        let line = self.next_line();
        match self.peek_text() {
            None => Ok(None),
            Some(text) => match classify(text) {
                Ok(kind) => Ok(Some((kind, text))),
                Err(message) => Err(ParseError { line, message }),
            },
        }
    }

    /// Consume the line last peeked at.
    fn bump(&mut self) {
        if let Some(Some(_)) = self.peeked.take() {
            self.consumed += 1;
        }
    }
}

/// The parser's state: the cursor, the sections so far, and the paths they
/// claim.
struct Parser<'a> {
    cursor: Cursor<'a>,
    sections: Vec<Section<'a>>,
    /// Every path used so far (as written) → the line of its section.
    claimed: HashMap<&'a str, usize>,
}

/// Shorthand for an error at `line`.
fn error<T>(line: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser {
            cursor: Cursor::new(text),
            sections: Vec::new(),
            claimed: HashMap::new(),
        }
    }

    /// The whole envelope.
    fn envelope(mut self) -> Result<Patch<'a>, ParseError> {
        self.begin()?;
        let end_line = loop {
            let line = self.cursor.next_line();
            let Some((kind, text)) = self.cursor.peek()? else {
                return self.missing_end();
            };
            self.cursor.bump();
            let Line::Directive(directive) = kind else {
                return error(line, self.expected_section(text));
            };
            let kind = match directive {
                Directive::EndPatch => break line,
                Directive::AddFile(path) => {
                    self.claim(path, line, line)?;
                    self.add_body(path)?
                }
                Directive::UpdateFile(path) => {
                    self.claim(path, line, line)?;
                    let move_to = match self.cursor.peek()? {
                        Some((Line::Directive(Directive::MoveTo(to)), _)) => {
                            let to_line = self.cursor.next_line();
                            self.cursor.bump();
                            if to != path {
                                self.claim(to, line, to_line)?;
                            }
                            Some(to)
                        }
                        _ => None,
                    };
                    let hunks = self.hunks(path, move_to.is_some())?;
                    SectionKind::Update {
                        path,
                        move_to,
                        hunks,
                    }
                }
                Directive::MoveFile(from, to) => {
                    self.claim(from, line, line)?;
                    if to != from {
                        self.claim(to, line, line)?;
                    }
                    let hunks = self.hunks(from, true)?;
                    SectionKind::Update {
                        path: from,
                        move_to: Some(to),
                        hunks,
                    }
                }
                Directive::DeleteFile(path) => {
                    self.claim(path, line, line)?;
                    self.expect_section_end("'*** Delete File:' takes no body")?;
                    SectionKind::Delete { path }
                }
                Directive::BeginPatch | Directive::EndOfFile | Directive::MoveTo(_) => {
                    return error(line, directive.misplaced(text));
                }
            };
            self.sections.push(Section {
                span: Span { line },
                kind,
            });
        };
        if self.sections.is_empty() {
            return error(end_line, "the envelope has no file sections");
        }
        // Only one line terminator may follow `*** End Patch`, and the cursor
        // has cut it off already: any further line is extra text.
        if self.cursor.peek_text().is_some() {
            return error(
                self.cursor.next_line(),
                format!("unexpected text after '{END_PATCH}'"),
            );
        }
        Ok(Patch {
            sections: self.sections,
        })
    }

    /// Line 1: exactly `*** Begin Patch`.
    fn begin(&mut self) -> Result<(), ParseError> {
        let found = match self.cursor.peek_text() {
            Some(BEGIN_PATCH) => {
                self.cursor.bump();
                return Ok(());
            }
            Some(text) => {
                if let Some(rest) = text.strip_prefix(BEGIN_PATCH) {
                    if rest.chars().all(char::is_whitespace) {
                        return error(1, format!("trailing whitespace after '{BEGIN_PATCH}'"));
                    }
                }
                if text.starts_with('\u{feff}') {
                    format!("{} (a UTF-8 byte order mark)", quote(text))
                } else {
                    describe(text)
                }
            }
            None => "an empty envelope".into(),
        };
        error(1, format!("expected '{BEGIN_PATCH}', found {found}"))
    }

    /// The envelope ended before `*** End Patch`.
    fn missing_end<T>(&self) -> Result<T, ParseError> {
        error(
            self.cursor.next_line(),
            format!("expected '{END_PATCH}' before the end of the envelope"),
        )
    }

    /// What the error says when a section was expected and `found` stands.
    fn expected_section(&self, found: &str) -> String {
        let what = if self.sections.is_empty() {
            "a file section"
        } else {
            "the next file section"
        };
        format!(
            "expected {what} ('{ADD_FILE}', '{UPDATE_FILE}', '{DELETE_FILE}' or \
             '{MOVE_FILE}') or '{END_PATCH}', found {}",
            describe(found)
        )
    }

    /// Record that the section at `section_line` uses `path` (written on
    /// `line`); a path may appear in one section only.
    fn claim(&mut self, path: &'a str, section_line: usize, line: usize) -> Result<(), ParseError> {
        match self.claimed.insert(path, section_line) {
            None => Ok(()),
            Some(first) => error(
                line,
                format!(
                    "path {} is already used by the section at line {first}; \
                     each path may appear in one section",
                    quote(path)
                ),
            ),
        }
    }

    /// After a body that is complete (a delete, an add closed by its
    /// no-newline marker, a hunk closed by `*** End of File`): the next line
    /// must start a section or end the envelope.
    fn expect_section_end(&mut self, after: &str) -> Result<(), ParseError> {
        let line = self.cursor.next_line();
        match self.cursor.peek()? {
            None => Ok(()),
            Some((Line::Directive(d), _)) if d.ends_body() => Ok(()),
            Some((Line::Directive(d @ (Directive::BeginPatch | Directive::MoveTo(_))), text)) => {
                error(line, d.misplaced(text))
            }
            Some((_, text)) => error(
                line,
                format!(
                    "{after}; expected the next file section or '{END_PATCH}', found {}",
                    describe(text)
                ),
            ),
        }
    }

    /// The body of `*** Add File:`.
    fn add_body(&mut self, path: &'a str) -> Result<SectionKind<'a>, ParseError> {
        let mut lines = Vec::new();
        let mut no_newline_at_end = false;
        loop {
            let line = self.cursor.next_line();
            let Some((kind, text)) = self.cursor.peek()? else {
                break;
            };
            match kind {
                Line::Text => match text.strip_prefix('+') {
                    Some(content) => {
                        self.cursor.bump();
                        lines.push(content);
                    }
                    None => {
                        return error(
                            line,
                            format!(
                                "expected a '+' line or the next section, found {}",
                                describe(text)
                            ),
                        )
                    }
                },
                Line::NoNewline => {
                    if lines.is_empty() {
                        return error(line, format!("'{NO_NEWLINE}' must follow a '+' line"));
                    }
                    self.cursor.bump();
                    no_newline_at_end = true;
                    self.expect_section_end(&format!("'{NO_NEWLINE}' ends an added file"))?;
                    break;
                }
                Line::Directive(d) if d.ends_body() => break,
                Line::Directive(d) => return error(line, d.misplaced(text)),
            }
        }
        Ok(SectionKind::Add {
            path,
            lines,
            no_newline_at_end,
        })
    }

    /// The hunks of an update of `path`: at least one unless `optional` (a move).
    fn hunks(&mut self, path: &str, optional: bool) -> Result<Vec<Hunk<'a>>, ParseError> {
        let mut hunks: Vec<Hunk<'a>> = Vec::new();
        loop {
            let line = self.cursor.next_line();
            let Some((kind, text)) = self.cursor.peek()? else {
                break;
            };
            match kind {
                Line::Text if text.starts_with("@@") => {
                    self.cursor.bump();
                    hunks.push(self.hunk(line, header_text(text))?);
                }
                Line::Directive(d) if d.ends_body() && (optional || !hunks.is_empty()) => break,
                Line::Directive(d @ (Directive::BeginPatch | Directive::MoveTo(_))) => {
                    return error(line, d.misplaced(text))
                }
                _ => {
                    let message = match hunks.last() {
                        None if optional => format!(
                            "expected '@@' to start a hunk, the next file section or '{END_PATCH}', found {}",
                            describe(text)
                        ),
                        None => format!(
                            "expected '@@' to start the first hunk of {} (an update needs at least one hunk), found {}",
                            quote(path),
                            describe(text)
                        ),
                        Some(h) if h.end_of_file => format!(
                            "expected '@@', the next file section or '{END_PATCH}' after '{END_OF_FILE}', found {}",
                            describe(text)
                        ),
                        // A hunk without `*** End of File` consumes every
                        // line it can and reports the others itself.
                        Some(_) => format!("unexpected {}", describe(text)),
                    };
                    return error(line, message);
                }
            }
        }
        Ok(hunks)
    }

    /// The rest of one hunk, its first `@@` line (at `at`) already consumed:
    /// more `@@` lines (a stacked header), then the body.
    fn hunk(&mut self, at: usize, header: &'a str) -> Result<Hunk<'a>, ParseError> {
        let mut headers = vec![header];
        let mut lines: Vec<HunkLine<'a>> = Vec::new();
        let mut end_of_file = false;
        let mut after_marker = false;
        loop {
            let line = self.cursor.next_line();
            let Some((kind, text)) = self.cursor.peek()? else {
                break;
            };
            match kind {
                Line::Text => {
                    let kind = match text.as_bytes().first() {
                        Some(b' ') => LineKind::Context,
                        Some(b'-') => LineKind::Remove,
                        Some(b'+') => LineKind::Add,
                        Some(b'@') if text.starts_with("@@") => {
                            if lines.is_empty() {
                                // Another header line of the same hunk.
                                self.cursor.bump();
                                headers.push(header_text(text));
                                continue;
                            }
                            break;
                        }
                        None => {
                            return error(
                                line,
                                "expected a hunk line starting with ' ', '-', '+' or '@@', \
                                 found an empty line (a blank context line needs its leading space)",
                            )
                        }
                        Some(_) => {
                            return error(
                                line,
                                format!(
                                    "expected a hunk line starting with ' ', '-', '+' or '@@', found {}",
                                    quote(text)
                                ),
                            )
                        }
                    };
                    self.cursor.bump();
                    // The prefix is one ASCII byte, so index 1 is a char boundary.
                    lines.push(HunkLine {
                        span: Span { line },
                        kind,
                        text: &text[1..],
                        no_newline: false,
                    });
                    after_marker = false;
                }
                Line::NoNewline => {
                    let Some(last) = lines.last_mut() else {
                        return error(
                            line,
                            format!("'{NO_NEWLINE}' must follow a hunk line, not '@@'"),
                        );
                    };
                    if after_marker {
                        return error(
                            line,
                            format!("'{NO_NEWLINE}' must follow a hunk line, not another marker"),
                        );
                    }
                    self.cursor.bump();
                    last.no_newline = true;
                    after_marker = true;
                }
                Line::Directive(Directive::EndOfFile) => {
                    if lines.is_empty() {
                        return error(line, empty_hunk(text));
                    }
                    self.cursor.bump();
                    end_of_file = true;
                    break;
                }
                Line::Directive(d) if d.ends_body() => {
                    if lines.is_empty() {
                        return error(line, empty_hunk(text));
                    }
                    break;
                }
                Line::Directive(d) => return error(line, d.misplaced(text)),
            }
        }
        let hunk = Hunk {
            span: Span { line: at },
            headers,
            lines,
            end_of_file,
        };
        if let Some(marked) = hunk.misplaced_no_newline_marker() {
            return error(
                marked.span.line + 1,
                format!(
                    "'{NO_NEWLINE}' may only follow the last line of the side it speaks for \
                     (the last '-' or ' ' line for the old side, the last '+' or ' ' line for the new)"
                ),
            );
        }
        Ok(hunk)
    }
}

/// The header text of a `@@` line: what follows `@@`, one separating space
/// removed.
fn header_text(line: &str) -> &str {
    let header = &line[2..];
    header.strip_prefix(' ').unwrap_or(header)
}

/// The error for a hunk whose `@@` line(s) are directly followed by `found`.
fn empty_hunk(found: &str) -> String {
    format!(
        "empty hunk: expected at least one line starting with ' ', '-' or '+' after '@@', found {}",
        describe(found)
    )
}

#[cfg(test)]
mod tests {
    //! Every accepted form and every error, through [`check`]; then
    //! properties over arbitrary bytes and grammar-ish line sequences.

    use std::fmt::Write as _;

    use proptest::prelude::*;

    use super::{parse, parse_bytes};
    use crate::envelope::{LineKind, Patch, SectionKind};

    /// A compact dump of a patch, with the envelope line of every section,
    /// hunk and hunk line.
    fn dump(patch: &Patch<'_>) -> String {
        let mut out = String::new();
        for section in &patch.sections {
            let line = section.span.line;
            match &section.kind {
                SectionKind::Add {
                    path,
                    lines,
                    no_newline_at_end,
                } => {
                    writeln!(out, "{line}: add {path:?}").unwrap();
                    for l in lines {
                        writeln!(out, "  +{l:?}").unwrap();
                    }
                    if *no_newline_at_end {
                        writeln!(out, "  no newline at end").unwrap();
                    }
                }
                SectionKind::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    match move_to {
                        None => writeln!(out, "{line}: update {path:?}").unwrap(),
                        Some(to) => writeln!(out, "{line}: update {path:?} -> {to:?}").unwrap(),
                    }
                    for hunk in hunks {
                        write!(out, "  {}:", hunk.span.line).unwrap();
                        for header in &hunk.headers {
                            write!(out, " @@ {header:?}").unwrap();
                        }
                        out.push('\n');
                        for l in &hunk.lines {
                            let kind = match l.kind {
                                LineKind::Context => "ctx",
                                LineKind::Remove => "del",
                                LineKind::Add => "add",
                            };
                            let nl = if l.no_newline { " no newline" } else { "" };
                            writeln!(out, "    {}: {kind} {:?}{nl}", l.span.line, l.text).unwrap();
                        }
                        if hunk.end_of_file {
                            writeln!(out, "    end of file").unwrap();
                        }
                    }
                }
                SectionKind::Delete { path } => writeln!(out, "{line}: delete {path:?}").unwrap(),
            }
        }
        out
    }

    /// Drop the first line if blank and the common indentation.
    fn trim_indent(text: &str) -> String {
        let text = text.strip_prefix('\n').unwrap_or(text).trim_end();
        let indent = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        text.lines()
            .map(|l| l.get(indent..).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The envelope made of these lines, each ended by `\n`.
    fn env(lines: &[&str]) -> String {
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// Parse `input`; compare the dump (or the error's display) to
    /// `expected`. A patch that parses must also survive render → parse.
    #[track_caller]
    fn check(input: &str, expected: &str) {
        let actual = match parse(input) {
            Ok(patch) => {
                assert_round_trip(&patch);
                dump(&patch)
            }
            Err(e) => e.to_string(),
        };
        assert_eq!(actual.trim_end(), trim_indent(expected), "input: {input:?}");
    }

    /// `parse(render(p)) == p`, also through a CRLF copy of the rendering.
    #[track_caller]
    fn assert_round_trip(patch: &Patch<'_>) {
        let rendered = patch.render();
        assert_eq!(
            parse(&rendered).as_ref(),
            Ok(patch),
            "rendered: {rendered:?}"
        );
        let crlf = rendered.replace('\n', "\r\n");
        assert_eq!(
            parse(&crlf).as_ref(),
            Ok(patch),
            "rendered as CRLF: {crlf:?}"
        );
    }

    // ---- accepted forms -------------------------------------------------

    #[test]
    fn the_spec_full_example() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Add File: src/utils/clamp.ts",
                "+export const clamp = (n: number, lo: number, hi: number): number =>",
                "+ Math.min(Math.max(n, lo), hi);",
                "*** Update File: src/index.ts",
                "@@",
                " import { foo } from \"./foo\";",
                "+import { clamp } from \"./utils/clamp\";",
                " export { foo };",
                "+export { clamp };",
                "*** Delete File: src/legacy.ts",
                "*** End Patch",
            ]),
            r#"
            2: add "src/utils/clamp.ts"
              +"export const clamp = (n: number, lo: number, hi: number): number =>"
              +" Math.min(Math.max(n, lo), hi);"
            5: update "src/index.ts"
              6: @@ ""
                7: ctx "import { foo } from \"./foo\";"
                8: add "import { clamp } from \"./utils/clamp\";"
                9: ctx "export { foo };"
                10: add "export { clamp };"
            11: delete "src/legacy.ts"
            "#,
        );
    }

    #[test]
    fn add_forms() {
        // An empty body is an empty file; `+` alone is an empty line;
        // directive-looking text after `+` is content.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Add File: empty",
                "*** Add File: a",
                "+",
                "+*** End Patch",
                "+@@ x",
                "+   ",
                "*** Add File: b",
                "+no newline",
                "\\ No newline at end of file",
                "*** End Patch",
            ]),
            r#"
            2: add "empty"
            3: add "a"
              +""
              +"*** End Patch"
              +"@@ x"
              +"   "
            8: add "b"
              +"no newline"
              no newline at end
            "#,
        );
    }

    #[test]
    fn hunk_headers() {
        // One separating space is removed; `@@x` needs none.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " 1",
                "@@ ",
                " 2",
                "@@ fn main() {",
                " 3",
                "@@fn main() {",
                " 4",
                "@@   indented",
                " 5",
                "@@ @@ -1,3 +1,4 @@",
                " 6",
                "*** End Patch",
            ]),
            r#"
            2: update "a"
              3: @@ ""
                4: ctx "1"
              5: @@ ""
                6: ctx "2"
              7: @@ "fn main() {"
                8: ctx "3"
              9: @@ "fn main() {"
                10: ctx "4"
              11: @@ "  indented"
                12: ctx "5"
              13: @@ "@@ -1,3 +1,4 @@"
                14: ctx "6"
            "#,
        );
    }

    #[test]
    fn stacked_hunk_headers() {
        // Consecutive `@@` lines form one hunk's header (C-env-stacked-headers);
        // an `@@` line after body lines still starts the next hunk.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@ class Foo",
                "@@     def bar(self):",
                " 1",
                "-2",
                "@@",
                "@@",
                "@@x",
                "+3",
                "*** End of File",
                "@@ again",
                " 4",
                "*** End Patch",
            ]),
            r#"
            2: update "a"
              3: @@ "class Foo" @@ "    def bar(self):"
                5: ctx "1"
                6: del "2"
              7: @@ "" @@ "" @@ "x"
                10: add "3"
                end of file
              12: @@ "again"
                13: ctx "4"
            "#,
        );
        // A no-newline marker after a stacked header still needs a body line.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@ a",
                "@@ b",
                "\\ No newline at end of file",
                "*** End Patch",
            ]),
            "line 5: '\\ No newline at end of file' must follow a hunk line, not '@@'",
        );
    }

    #[test]
    fn hunk_body_lines() {
        // Context-only hunks are allowed; a line of spaces is context.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " keep",
                "-drop",
                "+add",
                " ",
                "   ",
                "--",
                "++",
                "@@ context only",
                " x",
                "*** End Patch",
            ]),
            r#"
            2: update "a"
              3: @@ ""
                4: ctx "keep"
                5: del "drop"
                6: add "add"
                7: ctx ""
                8: ctx "  "
                9: del "-"
                10: add "+"
              11: @@ "context only"
                12: ctx "x"
            "#,
        );
    }

    #[test]
    fn move_spellings() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Move File: old/a.ts -> new/a.ts",
                "*** Move File: b -> c",
                "@@",
                "-x",
                "+y",
                "*** Update File: d",
                "*** Move to: e",
                "*** Update File: f",
                "*** Move to: g",
                "@@",
                " z",
                "*** Move File: h -> i -> j",
                "*** Update File: k -> l",
                "*** Move to: m -> n",
                "*** Update File: o -> p",
                "@@",
                " q",
                "*** End Patch",
            ]),
            r#"
            2: update "old/a.ts" -> "new/a.ts"
            3: update "b" -> "c"
              4: @@ ""
                5: del "x"
                6: add "y"
            7: update "d" -> "e"
            9: update "f" -> "g"
              11: @@ ""
                12: ctx "z"
            13: update "h" -> "i -> j"
            14: update "k -> l" -> "m -> n"
            16: update "o -> p"
              17: @@ ""
                18: ctx "q"
            "#,
        );
    }

    #[test]
    fn a_move_onto_itself_is_left_to_the_planner() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Move File: a -> a",
                "*** Update File: b",
                "*** Move to: b",
                "*** End Patch",
            ]),
            r#"
            2: update "a" -> "a"
            3: update "b" -> "b"
            "#,
        );
    }

    #[test]
    fn end_of_file_marker() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " x",
                "+y",
                "*** End of File",
                "@@",
                "-z",
                "*** End of File",
                "*** Update File: b",
                "@@",
                " w",
                "\\ No newline at end of file",
                "*** End of File",
                "*** End Patch",
            ]),
            r#"
            2: update "a"
              3: @@ ""
                4: ctx "x"
                5: add "y"
                end of file
              7: @@ ""
                8: del "z"
                end of file
            10: update "b"
              11: @@ ""
                12: ctx "w" no newline
                end of file
            "#,
        );
    }

    #[test]
    fn no_newline_markers_in_every_position() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                "-old",
                "\\ No newline at end of file",
                "+new",
                "\\ No newline at end of file",
                "@@",
                " ctx",
                "\\ No newline at end of file",
                "@@",
                "-x",
                "+y",
                "\\ No newline at end of file",
                "*** End Patch",
            ]),
            r#"
            2: update "a"
              3: @@ ""
                4: del "old" no newline
                6: add "new" no newline
              8: @@ ""
                9: ctx "ctx" no newline
              11: @@ ""
                12: del "x"
                13: add "y" no newline
            "#,
        );
        // A marker must follow the last line of its side: ` z` continues
        // the new side after `+y`, so the marker on `+y` is misplaced.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                "-x",
                "+y",
                "\\ No newline at end of file",
                " z",
                "*** End Patch",
            ]),
            "line 6: '\\ No newline at end of file' may only follow the last line of the side it speaks for \
             (the last '-' or ' ' line for the old side, the last '+' or ' ' line for the new)",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                "-a",
                "\\ No newline at end of file",
                "-b",
                "*** End Patch",
            ]),
            "line 5: '\\ No newline at end of file' may only follow the last line of the side it speaks for \
             (the last '-' or ' ' line for the old side, the last '+' or ' ' line for the new)",
        );
    }

    #[test]
    fn envelope_terminators() {
        let expected = r#"2: delete "a""#;
        check(
            "*** Begin Patch\n*** Delete File: a\n*** End Patch",
            expected,
        );
        check(
            "*** Begin Patch\n*** Delete File: a\n*** End Patch\n",
            expected,
        );
        check(
            "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n",
            expected,
        );
        check(
            "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch",
            expected,
        );
    }

    #[test]
    fn crlf_envelope_strips_one_cr_per_line() {
        check(
            "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n+y\r\r\n+z\n\\ No newline at end of file\r\n*** End Patch\r\n",
            r#"
            2: add "a"
              +"x"
              +"y\r"
              +"z"
              no newline at end
            "#,
        );
        check(
            "*** Begin Patch\r\n*** Update File: a\r\n@@ h\r\n x\r\n-\r\r\n*** End of File\r\n*** End Patch\r\n",
            r#"
            2: update "a"
              3: @@ "h"
                4: ctx "x"
                5: del "\r"
                end of file
            "#,
        );
    }

    #[test]
    fn lf_envelope_keeps_cr_as_content() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a\rb",
                "@@ h\r",
                " x\r",
                "+\r",
                "*** End Patch",
            ]),
            r#"
            2: update "a\rb"
              3: @@ "h\r"
                4: ctx "x\r"
                5: add "\r"
            "#,
        );
    }

    #[test]
    fn unicode() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: 日本/ファイル.txt",
                "@@ ünïcödé",
                "-héllo",
                "+héllo 🌍",
                "*** End Patch",
            ]),
            r#"
            2: update "日本/ファイル.txt"
              3: @@ "ünïcödé"
                4: del "héllo"
                5: add "héllo 🌍"
            "#,
        );
    }

    // ---- errors around the envelope -------------------------------------

    #[test]
    fn text_before_begin_patch() {
        let tail = "\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        check(
            "",
            "line 1: expected '*** Begin Patch', found an empty envelope",
        );
        check(
            "\n",
            "line 1: expected '*** Begin Patch', found an empty line",
        );
        check(
            tail,
            "line 1: expected '*** Begin Patch', found an empty line",
        );
        check(
            &format!("```{tail}```\n"),
            r#"line 1: expected '*** Begin Patch', found "```""#,
        );
        check(
            &format!("```diff{tail}"),
            r#"line 1: expected '*** Begin Patch', found "```diff""#,
        );
        check(
            &format!("apply_patch <<'EOF'{tail}EOF\n"),
            r#"line 1: expected '*** Begin Patch', found "apply_patch <<'EOF'""#,
        );
        check(
            &format!("Here is the patch:{tail}"),
            r#"line 1: expected '*** Begin Patch', found "Here is the patch:""#,
        );
        check(
            "\u{feff}*** Begin Patch\n*** Delete File: a\n*** End Patch\n",
            r#"line 1: expected '*** Begin Patch', found "\u{feff}*** Begin Patch" (a UTF-8 byte order mark)"#,
        );
        check(
            "*** Begin Patch \n*** End Patch\n",
            "line 1: trailing whitespace after '*** Begin Patch'",
        );
        check(
            "*** Begin Patch\t\r\n*** End Patch\n",
            "line 1: trailing whitespace after '*** Begin Patch'",
        );
        check(
            "*** Begin Patch\r\r\n*** End Patch\n",
            "line 1: trailing whitespace after '*** Begin Patch'",
        );
        check(
            "*** begin patch\n",
            r#"line 1: expected '*** Begin Patch', found "*** begin patch""#,
        );
    }

    #[test]
    fn text_after_end_patch() {
        let head = "*** Begin Patch\n*** Delete File: a\n*** End Patch";
        check(
            &format!("{head}\n\n"),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\n\n\n"),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\nEOF\n"),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\n```"),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\n*** End Patch\n"),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\n "),
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            &format!("{head}\r\n"),
            "line 3: trailing whitespace after '*** End Patch'",
        );
        check(
            &format!("{head}  \n"),
            "line 3: trailing whitespace after '*** End Patch'",
        );
        check(
            "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n\r\n",
            "line 4: unexpected text after '*** End Patch'",
        );
        check(
            "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n\r",
            "line 4: unexpected text after '*** End Patch'",
        );
    }

    #[test]
    fn missing_end_patch() {
        let message = "expected '*** End Patch' before the end of the envelope";
        check("*** Begin Patch", &format!("line 2: {message}"));
        check("*** Begin Patch\n", &format!("line 2: {message}"));
        check(
            "*** Begin Patch\n*** Add File: a\n+x\n",
            &format!("line 4: {message}"),
        );
        check(
            "*** Begin Patch\n*** Add File: a\n+x",
            &format!("line 4: {message}"),
        );
        check(
            "*** Begin Patch\n*** Update File: a\n",
            &format!("line 3: {message}"),
        );
        check(
            "*** Begin Patch\n*** Update File: a\n@@\n",
            &format!("line 4: {message}"),
        );
        check(
            "*** Begin Patch\n*** Update File: a\n@@\n x\n*** End of File\n",
            &format!("line 6: {message}"),
        );
        check(
            "*** Begin Patch\n*** Delete File: a\n",
            &format!("line 3: {message}"),
        );
        check(
            "*** Begin Patch\n*** Add File: a\n+x\n\\ No newline at end of file\n",
            &format!("line 5: {message}"),
        );
    }

    #[test]
    fn no_sections() {
        check(
            "*** Begin Patch\n*** End Patch\n",
            "line 2: the envelope has no file sections",
        );
        check(
            "*** Begin Patch\n*** End Patch\n\n",
            "line 2: the envelope has no file sections",
        );
    }

    // ---- errors in directives --------------------------------------------

    #[test]
    fn unknown_and_malformed_directives() {
        let directives = "the directives are '*** Add File: <path>', '*** Update File: <path>', \
             '*** Move to: <path>', '*** Delete File: <path>', '*** Move File: <from> -> <to>', \
             '*** End of File' and '*** End Patch'";
        let at3 = |line: &str| {
            env(&[
                "*** Begin Patch",
                "*** Delete File: z",
                line,
                "*** End Patch",
            ])
        };
        check(
            &at3("*** Rename File: a"),
            &format!(r#"line 3: unknown directive "*** Rename File: a"; {directives}"#),
        );
        check(
            &at3("*** add file: a"),
            &format!(r#"line 3: unknown directive "*** add file: a"; {directives}"#),
        );
        check(
            &at3("***"),
            &format!(r#"line 3: unknown directive "***"; {directives}"#),
        );
        check(
            &at3("*** End Patch!"),
            &format!(r#"line 3: unknown directive "*** End Patch!"; {directives}"#),
        );
        check(
            &at3("*** End of File  "),
            "line 3: trailing whitespace after '*** End of File'",
        );
        check(
            &at3("*** Add File:"),
            "line 3: missing path after '*** Add File:'",
        );
        check(
            &at3("*** Add File: "),
            "line 3: missing path after '*** Add File:'",
        );
        check(
            &at3("*** Update File:  "),
            "line 3: missing path after '*** Update File:'",
        );
        check(
            &at3("*** Delete File:a"),
            r#"line 3: expected a space after '*** Delete File:', found "a""#,
        );
        check(
            &at3("*** Add File:  a"),
            r#"line 3: path " a" has leading or trailing whitespace"#,
        );
        check(
            &at3("*** Add File: a "),
            r#"line 3: path "a " has leading or trailing whitespace"#,
        );
        check(
            &at3("*** Add File: a\t"),
            r#"line 3: path "a\t" has leading or trailing whitespace"#,
        );
        check(
            &at3("*** Move to: a "),
            r#"line 3: path "a " has leading or trailing whitespace"#,
        );
        check(
            &at3("*** Move File: a"),
            r#"line 3: expected '*** Move File: <from> -> <to>', found "*** Move File: a""#,
        );
        check(
            &at3("*** Move File: a->b"),
            r#"line 3: expected '*** Move File: <from> -> <to>', found "*** Move File: a->b""#,
        );
        check(
            &at3("*** Move File:  -> b"),
            "line 3: move source: the path is empty",
        );
        check(
            &at3("*** Move File: a -> "),
            "line 3: move destination: the path is empty",
        );
        check(
            &at3("*** Move File: a ->  b"),
            r#"line 3: move destination: path " b" has leading or trailing whitespace"#,
        );
        check(
            &at3("*** Move File:  a -> b"),
            r#"line 3: move source: path " a" has leading or trailing whitespace"#,
        );
    }

    #[test]
    fn misplaced_directives() {
        check(
            &env(&[
                "*** Begin Patch",
                "*** Begin Patch",
                "*** Delete File: a",
                "*** End Patch",
            ]),
            "line 2: '*** Begin Patch' may only stand on line 1",
        );
        check(
            &env(&["*** Begin Patch", "*** Move to: b", "*** End Patch"]),
            "line 2: '*** Move to:' must directly follow an '*** Update File:' line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Move File: a -> b",
                "*** Move to: c",
                "*** End Patch",
            ]),
            "line 3: '*** Move to:' must directly follow an '*** Update File:' line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " x",
                "*** Move to: c",
                "*** End Patch",
            ]),
            "line 5: '*** Move to:' must directly follow an '*** Update File:' line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "*** Move to: b",
                "*** Move to: c",
                "*** End Patch",
            ]),
            "line 4: '*** Move to:' must directly follow an '*** Update File:' line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: a",
                "*** Move to: b",
                "*** End Patch",
            ]),
            "line 3: '*** Move to:' must directly follow an '*** Update File:' line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Add File: a",
                "+x",
                "*** End of File",
                "*** End Patch",
            ]),
            "line 4: '*** End of File' may only close a hunk, after at least one hunk line",
        );
        check(
            &env(&["*** Begin Patch", "*** End of File", "*** End Patch"]),
            "line 2: '*** End of File' may only close a hunk, after at least one hunk line",
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " x",
                "*** Begin Patch",
                "*** End Patch",
            ]),
            "line 5: '*** Begin Patch' may only stand on line 1",
        );
    }

    #[test]
    fn top_level_junk() {
        let expected = "expected a file section ('*** Add File:', '*** Update File:', \
             '*** Delete File:' or '*** Move File:') or '*** End Patch'";
        check(
            &env(&["*** Begin Patch", "@@", " x", "*** End Patch"]),
            &format!(r#"line 2: {expected}, found "@@""#),
        );
        check(
            &env(&["*** Begin Patch", "", "*** End Patch"]),
            &format!("line 2: {expected}, found an empty line"),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "\\ No newline at end of file",
                "*** End Patch",
            ]),
            &format!(r#"line 2: {expected}, found "\\ No newline at end of file""#),
        );
    }

    // ---- errors in bodies -------------------------------------------------

    #[test]
    fn add_body_errors() {
        let add = |lines: &[&str]| {
            let mut all = vec!["*** Begin Patch", "*** Add File: a"];
            all.extend_from_slice(lines);
            all.push("*** End Patch");
            env(&all)
        };
        check(
            &add(&["+x", " y"]),
            r#"line 4: expected a '+' line or the next section, found " y""#,
        );
        check(
            &add(&["-y"]),
            r#"line 3: expected a '+' line or the next section, found "-y""#,
        );
        check(
            &add(&["+x", ""]),
            "line 4: expected a '+' line or the next section, found an empty line",
        );
        check(
            &add(&["@@"]),
            r#"line 3: expected a '+' line or the next section, found "@@""#,
        );
        check(
            &add(&["\\ No newline at end of file"]),
            "line 3: '\\ No newline at end of file' must follow a '+' line",
        );
        check(
            &add(&["+x", "\\ No newline at end of file", "+y"]),
            "line 5: '\\ No newline at end of file' ends an added file; \
             expected the next file section or '*** End Patch', found \"+y\"",
        );
        check(
            &add(&["+x", "\\ No newline at end of file", "\\ No newline at end of file"]),
            "line 5: '\\ No newline at end of file' ends an added file; \
             expected the next file section or '*** End Patch', found \"\\\\ No newline at end of file\"",
        );
        check(
            &add(&["+x", "\\ No newline at end of file "]),
            "line 4: trailing whitespace after '\\ No newline at end of file'",
        );
    }

    #[test]
    fn update_needs_a_hunk() {
        let expected =
            "expected '@@' to start the first hunk of \"a\" (an update needs at least one hunk)";
        check(
            &env(&["*** Begin Patch", "*** Update File: a", "*** End Patch"]),
            &format!(r#"line 3: {expected}, found "*** End Patch""#),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "*** Delete File: b",
                "*** End Patch",
            ]),
            &format!(r#"line 3: {expected}, found "*** Delete File: b""#),
        );
        // The first hunk needs its `@@` too.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "-x",
                "+y",
                "*** End Patch",
            ]),
            &format!(r#"line 3: {expected}, found "-x""#),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Move File: a -> b",
                "-x",
                "*** End Patch",
            ]),
            r#"line 3: expected '@@' to start a hunk, the next file section or '*** End Patch', found "-x""#,
        );
    }

    #[test]
    fn empty_hunks() {
        let expected =
            "empty hunk: expected at least one line starting with ' ', '-' or '+' after '@@'";
        let update = |lines: &[&str]| {
            let mut all = vec!["*** Begin Patch", "*** Update File: a"];
            all.extend_from_slice(lines);
            all.push("*** End Patch");
            env(&all)
        };
        check(
            &update(&["@@"]),
            &format!(r#"line 4: {expected}, found "*** End Patch""#),
        );
        // Stacked headers are one header: with no body after them, the
        // error stands where the body should have started.
        check(
            &update(&["@@ one", "@@ two"]),
            &format!(r#"line 5: {expected}, found "*** End Patch""#),
        );
        check(
            &update(&["@@", " x", "@@ one", "@@ two", "*** End of File"]),
            &format!(r#"line 7: {expected}, found "*** End of File""#),
        );
        check(
            &update(&["@@", " x", "@@"]),
            &format!(r#"line 6: {expected}, found "*** End Patch""#),
        );
        check(
            &update(&["@@", "*** End of File"]),
            &format!(r#"line 4: {expected}, found "*** End of File""#),
        );
        check(
            &update(&["@@", "*** Add File: b"]),
            &format!(r#"line 4: {expected}, found "*** Add File: b""#),
        );
    }

    #[test]
    fn hunk_line_errors() {
        let update = |lines: &[&str]| {
            let mut all = vec!["*** Begin Patch", "*** Update File: a", "@@"];
            all.extend_from_slice(lines);
            all.push("*** End Patch");
            env(&all)
        };
        check(
            &update(&[" x", "", " y"]),
            "line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found an empty line \
             (a blank context line needs its leading space)",
        );
        check(
            &update(&[" a", " b", " c", "foo"]),
            r#"line 7: expected a hunk line starting with ' ', '-', '+' or '@@', found "foo""#,
        );
        check(
            &update(&["\tx"]),
            r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "\tx""#,
        );
        check(
            &update(&[" x", "@ y"]),
            r#"line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found "@ y""#,
        );
        check(
            &update(&[" x", "\\ no newline at end of file"]),
            r#"line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found "\\ no newline at end of file""#,
        );
        let long = "x".repeat(100);
        check(
            &update(&[&long]),
            &format!(
                r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "{}"..."#,
                "x".repeat(60)
            ),
        );
        let long_unicode = "é".repeat(100);
        check(
            &update(&[&long_unicode]),
            &format!(
                r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "{}"..."#,
                "é".repeat(60)
            ),
        );
    }

    #[test]
    fn no_newline_marker_errors() {
        let update = |lines: &[&str]| {
            let mut all = vec!["*** Begin Patch", "*** Update File: a"];
            all.extend_from_slice(lines);
            all.push("*** End Patch");
            env(&all)
        };
        check(
            &update(&["@@", "\\ No newline at end of file", " x"]),
            "line 4: '\\ No newline at end of file' must follow a hunk line, not '@@'",
        );
        check(
            &update(&[
                "@@",
                " x",
                "\\ No newline at end of file",
                "\\ No newline at end of file",
            ]),
            "line 6: '\\ No newline at end of file' must follow a hunk line, not another marker",
        );
        check(
            &update(&["\\ No newline at end of file", "@@", " x"]),
            "line 3: expected '@@' to start the first hunk of \"a\" (an update needs at least one hunk), \
             found \"\\\\ No newline at end of file\"",
        );
        check(
            &update(&["@@", " x", "*** End of File", "\\ No newline at end of file"]),
            "line 6: expected '@@', the next file section or '*** End Patch' after '*** End of File', \
             found \"\\\\ No newline at end of file\"",
        );
        check(
            &update(&["@@", " x", "\\ No newline at end of file\t"]),
            "line 5: trailing whitespace after '\\ No newline at end of file'",
        );
    }

    #[test]
    fn end_of_file_errors() {
        let update = |lines: &[&str]| {
            let mut all = vec![
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " x",
                "*** End of File",
            ];
            all.extend_from_slice(lines);
            all.push("*** End Patch");
            env(&all)
        };
        let expected =
            "expected '@@', the next file section or '*** End Patch' after '*** End of File'";
        check(
            &update(&[" y"]),
            &format!(r#"line 6: {expected}, found " y""#),
        );
        check(
            &update(&[""]),
            &format!("line 6: {expected}, found an empty line"),
        );
        check(
            &update(&["*** End of File"]),
            &format!(r#"line 6: {expected}, found "*** End of File""#),
        );
    }

    #[test]
    fn delete_has_no_body() {
        let expected =
            "'*** Delete File:' takes no body; expected the next file section or '*** End Patch'";
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: a",
                "-x",
                "*** End Patch",
            ]),
            &format!(r#"line 3: {expected}, found "-x""#),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: a",
                "@@",
                "-x",
                "*** End Patch",
            ]),
            &format!(r#"line 3: {expected}, found "@@""#),
        );
        check(
            &env(&["*** Begin Patch", "*** Delete File: a", "", "*** End Patch"]),
            &format!("line 3: {expected}, found an empty line"),
        );
    }

    #[test]
    fn a_path_appears_in_one_section() {
        let used = |path: &str, line: usize| {
            format!("path \"{path}\" is already used by the section at line {line}; each path may appear in one section")
        };
        check(
            &env(&[
                "*** Begin Patch",
                "*** Add File: a",
                "*** Add File: a",
                "*** End Patch",
            ]),
            &format!("line 3: {}", used("a", 2)),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@",
                " x",
                "*** Delete File: a",
                "*** End Patch",
            ]),
            &format!("line 5: {}", used("a", 2)),
        );
        // A move's destination and source count, in both spellings.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Move File: a -> b",
                "*** Add File: b",
                "*** End Patch",
            ]),
            &format!("line 3: {}", used("b", 2)),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: b",
                "*** Move File: a -> b",
                "*** End Patch",
            ]),
            &format!("line 3: {}", used("b", 2)),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: a",
                "*** Move File: a -> b",
                "*** End Patch",
            ]),
            &format!("line 3: {}", used("a", 2)),
        );
        // Reported on the `*** Move to:` line, naming the earlier section.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Add File: c",
                "*** Update File: a",
                "*** Move to: c",
                "*** End Patch",
            ]),
            &format!("line 4: {}", used("c", 2)),
        );
        check(
            &env(&[
                "*** Begin Patch",
                "*** Update File: a",
                "*** Move to: c",
                "*** Update File: c",
                "@@",
                " x",
                "*** End Patch",
            ]),
            &format!("line 4: {}", used("c", 2)),
        );
        // Exact strings: the planner compares normalised paths later.
        check(
            &env(&[
                "*** Begin Patch",
                "*** Delete File: a",
                "*** Delete File: ./a",
                "*** End Patch",
            ]),
            "2: delete \"a\"\n3: delete \"./a\"",
        );
    }

    #[test]
    fn parse_bytes_reports_invalid_utf8_at_its_line() {
        assert_eq!(
            parse_bytes(b"*** Begin Patch\n*** Add File: a\n+\xff\n*** End Patch\n")
                .map_err(|e| e.to_string()),
            Err("line 3: the envelope is not valid UTF-8".to_string()),
        );
        assert_eq!(
            parse_bytes(b"*** Begin Patch\n*** Delete File: a\n*** End Patch\n")
                .map(|p| p.sections.len()),
            Ok(1),
        );
    }

    #[test]
    fn large_envelopes_parse_in_linear_time() {
        // 50 MB: one Add of 2.5 M short lines, an Update with as many hunk
        // lines, a 10 MB single line, and 100 000 sections (duplicate check).
        let mut text = String::with_capacity(60 << 20);
        text.push_str("*** Begin Patch\n*** Add File: big\n");
        for i in 0..2_500_000 {
            writeln!(text, "+line {i}").unwrap();
        }
        text.push_str("*** Update File: big2\n@@\n");
        for i in 0..2_500_000 {
            writeln!(text, "{}line {i}", [' ', '-', '+'][i % 3]).unwrap();
        }
        text.push_str("*** Add File: wide\n+");
        text.push_str(&"w".repeat(10 << 20));
        text.push('\n');
        for i in 0..100_000 {
            writeln!(text, "*** Delete File: d/{i}").unwrap();
        }
        text.push_str("*** End Patch\n");
        // Its time is measured by the `parse` benchmark (benches/), not
        // asserted here; a quadratic step would make this test take hours.
        let patch = parse(&text).expect("parses");
        assert_eq!(patch.sections.len(), 100_003);
        assert_eq!(patch.render(), text);

        // An error at the end of a long envelope is found and short.
        let err = parse(&text.replace("*** End Patch\n", "*** End Patch\n\n")).unwrap_err();
        assert_eq!(err.message, "unexpected text after '*** End Patch'");
        let huge_junk = format!("*** Begin Patch\n{}\n", "j".repeat(10 << 20));
        assert!(parse(&huge_junk).unwrap_err().message.len() < 300);
    }

    // ---- properties ---------------------------------------------------------

    /// The number of lines of `text` (a final `\n` ends the last line).
    fn line_count(text: &[u8]) -> usize {
        let newlines = text.iter().filter(|&&b| b == b'\n').count();
        if text.is_empty() || text.ends_with(b"\n") {
            newlines
        } else {
            newlines + 1
        }
    }

    /// A line that is, or nearly is, a line of the grammar.
    fn grammarish_line() -> impl Strategy<Value = String> {
        const FIXED: &[&str] = &[
            "*** Begin Patch",
            "*** End Patch",
            "*** End Patch ",
            "*** End of File",
            "*** Add File: a",
            "*** Add File: b",
            "*** Update File: a",
            "*** Update File: c",
            "*** Update File: a -> b",
            "*** Delete File: b",
            "*** Delete File: d",
            "*** Move File: a -> e",
            "*** Move File: c -> d -> f",
            "*** Move File: a->b",
            "*** Move to: g",
            "*** Move to: a",
            "*** Add File:",
            "*** Frob",
            "\\ No newline at end of file",
            "\\ No newline at end of file ",
            "@@",
            "@@ ",
            "@@  h",
            "@@h",
            "",
            " ",
            "+",
            "-",
            "\r",
            "```",
        ];
        prop_oneof![
            3 => proptest::sample::select(FIXED).prop_map(str::to_owned),
            1 => "[ +\\-@\\\\*]{0,3}[a-z\r\t é]{0,4}",
            1 => "\\*\\*\\* (Add|Update|Delete|Move) (File|to): [a-g ]{0,3}",
        ]
    }

    /// Parse `text`; it must not panic, an error's line must stand within
    /// the text (or one past its end), and a patch must round-trip.
    fn check_any(text: &[u8]) -> Result<(), TestCaseError> {
        match parse_bytes(text) {
            Ok(patch) => {
                let rendered = patch.render();
                let reparsed = parse(&rendered);
                prop_assert_eq!(reparsed.as_ref(), Ok(&patch));
                let crlf = rendered.replace('\n', "\r\n");
                let reparsed = parse(&crlf);
                prop_assert_eq!(reparsed.as_ref(), Ok(&patch));
            }
            Err(e) => {
                let lines = line_count(text);
                prop_assert!(
                    (1..=lines + 1).contains(&e.line),
                    "error {} outside 1..={} for {:?}",
                    e,
                    lines + 1,
                    String::from_utf8_lossy(text)
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            check_any(&bytes)?;
        }

        #[test]
        fn arbitrary_text_after_begin_never_panics(
            tail in proptest::collection::vec(any::<u8>(), 0..300),
            crlf in any::<bool>(),
        ) {
            let mut text = if crlf { b"*** Begin Patch\r\n".to_vec() } else { b"*** Begin Patch\n".to_vec() };
            text.extend_from_slice(&tail);
            check_any(&text)?;
        }

        #[test]
        fn grammarish_lines_never_panic(
            lines in proptest::collection::vec(grammarish_line(), 0..14),
            begin in proptest::bool::weighted(0.9),
            end in proptest::bool::weighted(0.8),
            crlf in proptest::bool::weighted(0.2),
            final_newline in any::<bool>(),
        ) {
            let mut all = Vec::new();
            if begin {
                all.push("*** Begin Patch".to_string());
            }
            all.extend(lines);
            if end {
                all.push("*** End Patch".to_string());
            }
            let mut text = all.join(if crlf { "\r\n" } else { "\n" });
            if final_newline {
                text.push_str(if crlf { "\r\n" } else { "\n" });
            }
            check_any(text.as_bytes())?;
        }
    }
}
