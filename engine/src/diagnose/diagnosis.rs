//! What a diagnosis says: the [`Diagnosis`] of one failed edit, its
//! [`Cause`]s, comparison [`Row`]s and [`MatchSite`]s, the values its wire
//! form (`json.rs`) is written from.

/// Why an edit does not apply. The wire name is [`Cause::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The edit's result is in the file and its old lines are not: it was applied already.
    AlreadyApplied,
    /// The old lines are in the original file, where an earlier hunk of the section changed them.
    ChangedByEarlierHunk,
    /// The file's hash is not the one given: it changed since it was read.
    FileChanged,
    /// The lines sit elsewhere than the stated line numbers (write_patch).
    LinesShifted,
    /// The lines carry line-number prefixes copied from a read output (`  12\t`, `12: `).
    LineNumberPrefix,
    /// A hunk line holds a literal `\n` where the file has a line break.
    LiteralNewlineEscape,
    /// A carriage return differs (CRLF content vs LF).
    LineEndings,
    /// Curly quotes, dashes, non-breaking or zero-width spaces, NFC vs NFD, compatibility forms.
    UnicodeLookalike,
    /// Leading whitespace differs (tabs vs spaces, or width).
    Indentation,
    /// Trailing whitespace differs.
    TrailingWhitespace,
    /// Whitespace inside the line differs.
    InnerWhitespace,
    /// The file has a blank line the edit leaves out.
    BlankLineMissing,
    /// The edit has a blank line the file does not.
    BlankLineExtra,
    /// The lines match, but the hunk is anchored at the end of the file and they are not last.
    NotAtEndOfFile,
    /// The hunk says the old last line has no final newline; the file has one.
    FinalNewline,
    /// The nearest region differs in content (not only in invisible characters).
    ContentDiffers,
    /// Nothing in the file resembles the edit.
    NoSimilarRegion,
    /// The old lines occur more than once.
    AmbiguousContext,
    /// A hunk with no context or removed lines, not anchored at the end of the file.
    NoContext,
}

impl Cause {
    /// The wire name (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::AlreadyApplied => "already_applied",
            Cause::ChangedByEarlierHunk => "changed_by_earlier_hunk",
            Cause::FileChanged => "file_changed",
            Cause::LinesShifted => "lines_shifted",
            Cause::LineNumberPrefix => "line_number_prefix",
            Cause::LiteralNewlineEscape => "literal_newline_escape",
            Cause::LineEndings => "line_endings",
            Cause::UnicodeLookalike => "unicode_lookalike",
            Cause::Indentation => "indentation",
            Cause::TrailingWhitespace => "trailing_whitespace",
            Cause::InnerWhitespace => "inner_whitespace",
            Cause::BlankLineMissing => "blank_line_missing",
            Cause::BlankLineExtra => "blank_line_extra",
            Cause::NotAtEndOfFile => "not_at_end_of_file",
            Cause::FinalNewline => "final_newline",
            Cause::ContentDiffers => "content_differs",
            Cause::NoSimilarRegion => "no_similar_region",
            Cause::AmbiguousContext => "ambiguous_context",
            Cause::NoContext => "no_context",
        }
    }

    /// Every cause, in the order ties between line counts are broken.
    pub const ALL: [Cause; 19] = [
        Cause::AlreadyApplied,
        Cause::ChangedByEarlierHunk,
        Cause::FileChanged,
        Cause::LinesShifted,
        Cause::LineNumberPrefix,
        Cause::LiteralNewlineEscape,
        Cause::LineEndings,
        Cause::UnicodeLookalike,
        Cause::Indentation,
        Cause::TrailingWhitespace,
        Cause::InnerWhitespace,
        Cause::BlankLineMissing,
        Cause::BlankLineExtra,
        Cause::NotAtEndOfFile,
        Cause::FinalNewline,
        Cause::ContentDiffers,
        Cause::NoSimilarRegion,
        Cause::AmbiguousContext,
        Cause::NoContext,
    ];
}

/// How one comparison row relates the edit to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStatus {
    /// The lines are equal.
    Same,
    /// The lines differ (see the row's causes).
    Differs,
    /// A file line the edit leaves out (`expected` is absent).
    Missing,
    /// An edit line the file does not have (`actual` is absent).
    Extra,
    /// A run of equal lines, not shown (`count` of them).
    Skipped,
}

impl RowStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Same => "same",
            RowStatus::Differs => "differs",
            RowStatus::Missing => "missing",
            RowStatus::Extra => "extra",
            RowStatus::Skipped => "skipped",
        }
    }
}

/// One row of the comparison of the edit's expected lines with the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// How the two relate.
    pub status: RowStatus,
    /// 1-based line of the file (before the patch) the row is about, when it has one.
    pub line: Option<usize>,
    /// The edit's line, made [`visible`](super::visible).
    pub expected: Option<String>,
    /// The file's line, made [`visible`](super::visible).
    pub actual: Option<String>,
    /// What differs, for a `differs`, `missing` or `extra` row.
    pub causes: Vec<Cause>,
    /// The first difference in words, with columns and code points.
    pub note: Option<String>,
    /// For a `skipped` row, how many equal lines it stands for.
    pub count: usize,
    /// When the file line was written by an earlier hunk of the section, its index.
    pub written_by: Option<usize>,
}

/// One location of an ambiguous hunk, and the nearest lines that tell it apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchSite {
    /// 1-based line where the match starts (file before the patch).
    pub line: usize,
    /// The nearest line above that differs from the line at the same distance above every other match.
    pub above: Option<(usize, String)>,
    /// The same below the match.
    pub below: Option<(usize, String)>,
}

/// The diagnosis of one failed edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    /// The causes, primary first; never empty.
    pub causes: Vec<Cause>,
    /// One or two sentences: what to change.
    pub hint: String,
    /// 1-based line of the file (before the patch) where the edit's first
    /// expected line is, or would be: the nearest candidate.
    pub line: Option<usize>,
    /// The last line of that region.
    pub end_line: Option<usize>,
    /// write_patch: where the expected lines occur exactly (nearest to the stated line).
    pub found_at_line: Option<usize>,
    /// How many of the edit's expected lines were found in the region, exactly
    /// or up to invisible characters.
    pub matched: usize,
    /// How many expected lines the edit has.
    pub expected_lines: usize,
    /// The comparison, compacted (runs of equal lines are `skipped` rows).
    pub rows: Vec<Row>,
    /// Rows left out after [`MAX_ROWS`](super::MAX_ROWS).
    pub omitted_rows: usize,
    /// Other candidate locations, best first.
    pub other_candidates: Vec<usize>,
    /// The earlier hunk that changed the region (`changed_by_earlier_hunk`).
    pub earlier_hunk: Option<usize>,
    /// The hunk the diagnosis is about, when the error itself does not say (`stale_file`).
    pub hunk_index: Option<usize>,
    /// `Some(true)` when a hash was given for the file and it matched: the
    /// file is the one the edit was written against.
    pub hash_verified: Option<bool>,
    /// The edit was longer than [`MAX_EXPECTED_LINES`](super::MAX_EXPECTED_LINES); only its start was compared.
    pub truncated: bool,
    /// `multiple_matches`: the matches and the lines that tell them apart.
    pub matches: Vec<MatchSite>,
    /// `multiple_matches`: how many matches there are in all (`matches`
    /// lists at most [`MAX_MATCHES`](super::MAX_MATCHES)).
    pub match_count: Option<usize>,
    /// `multiple_matches` of a hunk with `@@` header text: the file line
    /// that header text names, above the one match it tells apart.
    pub header_found: Option<HeaderFound>,
}

/// A hunk's `@@` header text found in the file: the header is not used for
/// matching (C-env-stacked-headers), but it says which match the model
/// meant, and that line, added as context, would make the hunk unique.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderFound {
    /// 1-based file line (before the patch) whose text the header names.
    pub line: usize,
    /// That line, in the visible form.
    pub text: String,
    /// The match it stands above (1-based, one of the listed matches).
    pub match_line: usize,
}

impl Diagnosis {
    /// Every diagnosis names a cause: when no class fits (input no parser
    /// produces, such as a line holding a line break), it is `content_differs`.
    pub(super) fn total(mut self) -> Diagnosis {
        if self.causes.is_empty() {
            self.causes.push(Cause::ContentDiffers);
        }
        self
    }

    pub(super) fn new(causes: Vec<Cause>, hint: String) -> Diagnosis {
        Diagnosis {
            causes,
            hint,
            line: None,
            end_line: None,
            found_at_line: None,
            matched: 0,
            expected_lines: 0,
            rows: Vec::new(),
            omitted_rows: 0,
            other_candidates: Vec::new(),
            earlier_hunk: None,
            hunk_index: None,
            hash_verified: None,
            truncated: false,
            matches: Vec::new(),
            match_count: None,
            header_found: None,
        }
    }

    /// The primary cause.
    pub fn cause(&self) -> Cause {
        self.causes
            .first()
            .copied()
            .unwrap_or(Cause::NoSimilarRegion)
    }
}
