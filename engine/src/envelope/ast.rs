//! The typed envelope. It borrows every line from the envelope text, so a
//! 50 MB envelope parses without one allocation per line.

/// An envelope line number (1-based), kept to locate errors.
///
/// Spans compare equal whatever they hold: two patches with the same
/// sections, hunks and lines are the same patch, wherever their lines stood.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    /// 1-based line of the envelope.
    pub line: usize,
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

/// A parsed envelope: one or more file sections, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch<'a> {
    /// The file sections, in envelope order.
    pub sections: Vec<Section<'a>>,
}

/// One file section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    /// Where its directive line stands.
    pub span: Span,
    /// What it does.
    pub kind: SectionKind<'a>,
}

/// The four operations of the envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SectionKind<'a> {
    /// `*** Add File: path` followed by `+` lines.
    Add {
        /// The path as written.
        path: &'a str,
        /// The body lines, `+` stripped.
        lines: Vec<&'a str>,
        /// True when the body ends with `\ No newline at end of file`.
        no_newline_at_end: bool,
    },
    /// `*** Update File: path` with hunks; also a move, when `move_to` is set
    /// (spelled `*** Move File: a -> b` or `*** Update File: a` + `*** Move to: b`).
    Update {
        /// The path as written.
        path: &'a str,
        /// The destination of a move.
        move_to: Option<&'a str>,
        /// The hunks, in envelope order (at least one unless moving).
        hunks: Vec<Hunk<'a>>,
    },
    /// `*** Delete File: path`.
    Delete {
        /// The path as written.
        path: &'a str,
    },
}

impl<'a> SectionKind<'a> {
    #[cfg(any(test, feature = "testing"))]
    /// The path the section reads (the source of a move).
    pub fn path(&self) -> &'a str {
        match self {
            SectionKind::Add { path, .. }
            | SectionKind::Update { path, .. }
            | SectionKind::Delete { path } => path,
        }
    }
}

/// One `@@` hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// Where its (first) `@@` line stands.
    pub span: Span,
    /// The text after each `@@` line (one separating space removed), in
    /// order: one per line of the hunk's header. Several `@@` lines in a row
    /// (`@@ class Foo` then `@@ def bar`) form one header (clarification
    /// C-env-stacked-headers). Informational only: matching never reads it.
    /// Never empty in a parsed patch.
    pub headers: Vec<&'a str>,
    /// The body lines.
    pub lines: Vec<HunkLine<'a>>,
    /// True when followed by `*** End of File`: the hunk must match at the
    /// end of the file.
    pub end_of_file: bool,
}

/// What a hunk line does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` — kept.
    Context,
    /// `-` — removed.
    Remove,
    /// `+` — added.
    Add,
}

/// One hunk body line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkLine<'a> {
    /// Where it stands.
    pub span: Span,
    /// ` `, `-` or `+`.
    pub kind: LineKind,
    /// The line's text without its prefix character.
    pub text: &'a str,
    /// True when the next envelope line is `\ No newline at end of file`.
    pub no_newline: bool,
}

impl<'a> Hunk<'a> {
    /// The lines the file must contain (context and removals), in order.
    pub fn old_lines(&self) -> impl Iterator<Item = &HunkLine<'a>> {
        self.lines.iter().filter(|l| l.kind != LineKind::Add)
    }

    /// The first line whose `\ No newline at end of file` marker is
    /// misplaced: a marker may only follow the last line of the side(s) it
    /// speaks for (the old side for `-`, the new side for `+`, both for ` `).
    pub fn misplaced_no_newline_marker(&self) -> Option<&HunkLine<'a>> {
        let last_old = self.lines.iter().rposition(|l| l.kind != LineKind::Add);
        let last_new = self.lines.iter().rposition(|l| l.kind != LineKind::Remove);
        self.lines.iter().enumerate().find_map(|(i, line)| {
            let ok = match line.kind {
                LineKind::Context => Some(i) == last_old && Some(i) == last_new,
                LineKind::Remove => Some(i) == last_old,
                LineKind::Add => Some(i) == last_new,
            };
            (line.no_newline && !ok).then_some(line)
        })
    }

    /// The lines the file will contain (context and additions), in order.
    pub fn new_lines(&self) -> impl Iterator<Item = &HunkLine<'a>> {
        self.lines.iter().filter(|l| l.kind != LineKind::Remove)
    }
}
