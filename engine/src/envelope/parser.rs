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
//! line), and an ordered map for the duplicate-path check: each section's
//! path is compared with O(log sections) others, so the whole parse is
//! linear in the envelope's lines plus O(sections · log sections) path
//! comparisons.
//! Held by the test `large_envelopes_parse_in_linear_time`, which counts the
//! parser's unit steps (a line classified, a path claimed) rather than time.

use std::collections::BTreeMap;

#[cfg(test)]
thread_local! {
    /// The parser's unit steps on this thread (tests only): each time a line
    /// is classified and each path claimed.
    pub(super) static WORK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Count one unit step of work (tests only; nothing in a release build).
#[inline(always)]
fn tick() {
    #[cfg(test)]
    WORK.with(|w| w.set(w.get() + 1));
}

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
    /// The text not yet looked at, from the start of the next line to the
    /// end (the final line terminator, if any, already cut off); `None`
    /// once the last line is taken. Lines are found with `memchr`, not
    /// `str::split`: the same lines, found a vector at a time.
    rest: Option<&'a str>,
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
        // An empty text has no line; `"\n"` has one, empty.
        let rest = (!text.is_empty()).then_some(body);
        let crlf = body
            .split('\n')
            .next()
            .is_some_and(|first| first.strip_suffix('\r') == Some(BEGIN_PATCH));
        Cursor {
            rest,
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
        let (rest, crlf) = (&mut self.rest, self.crlf);
        *self.peeked.get_or_insert_with(|| {
            let all = rest.take()?;
            let line = match memchr::memchr(b'\n', all.as_bytes()) {
                Some(end) => {
                    *rest = Some(&all[end + 1..]);
                    &all[..end]
                }
                None => all,
            };
            Some(match line.strip_suffix('\r') {
                Some(stripped) if crlf => stripped,
                _ => line,
            })
        })
    }

    /// The next line, classified, without consuming it.
    fn peek(&mut self) -> Result<Option<(Line<'a>, &'a str)>, ParseError> {
        let line = self.next_line();
        let text = self.peek_text();
        if text.is_some() {
            tick();
        }
        match text {
            None => Ok(None),
            Some(text) => match classify(text) {
                Ok(kind) => Ok(Some((kind, text))),
                Err(message) => Err(ParseError { line, message }),
            },
        }
    }

    /// Whether the empty lines from the one peeked at on are followed by a
    /// `@@` line, a section directive, `*** End Patch` or the end of the
    /// text: blank separator lines rather than blank context lines. Failure
    /// path only: it reads ahead past the cursor's one line of look-ahead,
    /// to the first non-empty line.
    fn blank_run_ends_body(&self) -> bool {
        let Some(rest) = self.rest else {
            return true;
        };
        let next = rest
            .split('\n')
            .map(|l| {
                if self.crlf {
                    l.strip_suffix('\r').unwrap_or(l)
                } else {
                    l
                }
            })
            .find(|l| !l.is_empty());
        match next {
            None => true,
            Some(text) => {
                text.starts_with("@@")
                    || matches!(classify(text), Ok(Line::Directive(d)) if d.ends_body() || matches!(d, Directive::EndOfFile))
            }
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
    /// Every path used so far (as written) → the line of its section. An
    /// ordered map: an envelope names few paths, and comparing a path with
    /// a handful of others costs less than hashing it (under the fuzzer,
    /// SipHash was about 8 % of the parser's time).
    claimed: BTreeMap<&'a str, usize>,
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
            claimed: BTreeMap::new(),
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

    /// What an error says it found ([`describe`]); an empty line that
    /// only separates (followed by a directive, `@@` or the end) says to
    /// remove it.
    fn found(&self, text: &str) -> String {
        if text.is_empty() && self.cursor.blank_run_ends_body() {
            "an empty line (remove it: the envelope has no blank separator lines)".into()
        } else {
            describe(text)
        }
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
            self.found(found)
        )
    }

    /// Record that the section at `section_line` uses `path` (written on
    /// `line`); a path may appear in one section only.
    fn claim(&mut self, path: &'a str, section_line: usize, line: usize) -> Result<(), ParseError> {
        tick();
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
                    self.found(text)
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
                                self.found(text)
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
                            self.found(text)
                        ),
                        None => format!(
                            "expected '@@' to start the first hunk of {} (an update needs at least one hunk), found {}",
                            quote(path),
                            self.found(text)
                        ),
                        Some(h) if h.end_of_file => format!(
                            "expected '@@', the next file section or '{END_PATCH}' after '{END_OF_FILE}', found {}",
                            self.found(text)
                        ),
                        // A hunk without `*** End of File` consumes every
                        // line it can and reports the others itself.
                        Some(_) => format!("unexpected {}", self.found(text)),
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
                            let message = if self.cursor.blank_run_ends_body() {
                                "expected a hunk line starting with ' ', '-', '+' or '@@', \
                                 found an empty line between hunks or before a directive \
                                 (remove it: the envelope has no blank separator lines)"
                            } else {
                                "expected a hunk line starting with ' ', '-', '+' or '@@', \
                                 found an empty line (a blank context line needs its leading space)"
                            };
                            return error(line, message);
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
mod tests;
