//! The refusal of a tool call as a type: [`ToolError`], its kind (the
//! spec's error kinds, one enum per tool vocabulary) and its [`Reason`]
//! (the machine-readable `details.reason` of the wire, one enum whose
//! strings are the wire's, byte for byte).

use serde::Serialize;
use serde_json::{Map, Value};

/// Why a call was refused, finer than its kind: the wire's
/// `details.reason` (docs/diagnostics.md) of `apply_patch` and the IDE
/// tools. [`Reason::as_str`] is the wire string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// An absolute path where a workspace-relative one is required.
    AbsolutePath,
    /// A `\` in a path of a tool that does not take it as a separator.
    BackslashInPath,
    /// A regex whose compiled form is over the limit.
    CompiledSize,
    /// Two parameters that exclude each other, both given.
    Conflict,
    /// Two `expectedSha256ByPath` keys name one path with different digests.
    ConflictingExpectedSha256,
    /// A hunk's context and removed lines do not occur in the file.
    ContextNotFound,
    /// Two sections of one envelope name the same path.
    DuplicatePath,
    /// A parameter that must not be empty, empty.
    Empty,
    /// An empty path.
    EmptyPath,
    /// A path that leads outside the workspace.
    EscapesWorkspace,
    /// The engine failed unexpectedly (a bug).
    InternalError,
    /// The call's params are not the tool's shape.
    InvalidParams,
    /// A path the engine cannot represent (a NUL byte).
    InvalidPath,
    /// A parameter whose value is not one the tool takes.
    InvalidValue,
    /// An I/O failure.
    IoError,
    /// An `expectedSha256ByPath` value that is neither 64 hex digits nor `""`.
    MalformedSha256,
    /// A `\ No newline at end of file` marker not after a side's last line.
    MisplacedNoNewlineMarker,
    /// A required parameter, absent.
    Missing,
    /// A file the edit needs does not exist.
    MissingFile,
    /// A parent folder of the path does not exist (or is a file).
    MissingParent,
    /// A hunk's context occurs more than once.
    MultipleMatches,
    /// No class of that name in the workspace.
    NoSuchClass,
    /// No method of that name in the class.
    NoSuchMethod,
    /// The path names a folder, not a file.
    NotAFile,
    /// The params are not a JSON object.
    NotObject,
    /// A number outside the range the parameter takes.
    OutOfRange,
    /// A hunk overlaps an earlier hunk of its section.
    OverlappingEdits,
    /// The envelope does not follow the grammar.
    PatchParseError,
    /// A regex pattern longer than the limit.
    PatternBytes,
    /// The path names the engine's private folder.
    PrivatePath,
    /// A move onto its own source.
    SamePath,
    /// A symlink on the path leads outside the workspace.
    SymlinkEscapesWorkspace,
    /// The path goes through more symlinks than the engine follows.
    TooManySymlinks,
    /// A parameter of the wrong JSON type.
    WrongType,
}

impl Reason {
    /// The wire string, e.g. `context_not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::AbsolutePath => "absolute_path",
            Reason::BackslashInPath => "backslash_in_path",
            Reason::CompiledSize => "compiled_size",
            Reason::Conflict => "conflict",
            Reason::ConflictingExpectedSha256 => "conflicting_expected_sha256",
            Reason::ContextNotFound => "context_not_found",
            Reason::DuplicatePath => "duplicate_path",
            Reason::Empty => "empty",
            Reason::EmptyPath => "empty_path",
            Reason::EscapesWorkspace => "escapes_workspace",
            Reason::InternalError => "internal_error",
            Reason::InvalidParams => "invalid_params",
            Reason::InvalidPath => "invalid_path",
            Reason::InvalidValue => "invalid_value",
            Reason::IoError => "io_error",
            Reason::MalformedSha256 => "malformed_sha256",
            Reason::MisplacedNoNewlineMarker => "misplaced_no_newline_marker",
            Reason::Missing => "missing",
            Reason::MissingFile => "missing_file",
            Reason::MissingParent => "missing_parent",
            Reason::MultipleMatches => "multiple_matches",
            Reason::NoSuchClass => "no_such_class",
            Reason::NoSuchMethod => "no_such_method",
            Reason::NotAFile => "not_a_file",
            Reason::NotObject => "not_object",
            Reason::OutOfRange => "out_of_range",
            Reason::OverlappingEdits => "overlapping_edits",
            Reason::PatchParseError => "patch_parse_error",
            Reason::PatternBytes => "pattern_bytes",
            Reason::PrivatePath => "private_path",
            Reason::SamePath => "same_path",
            Reason::SymlinkEscapesWorkspace => "symlink_escapes_workspace",
            Reason::TooManySymlinks => "too_many_symlinks",
            Reason::WrongType => "wrong_type",
        }
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error kinds of `apply_patch` (patch-envelope.md), as they appear
/// on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The envelope does not follow the grammar.
    PatchParseError,
    /// A hunk's context was not found.
    PatchApplyError,
    /// A hunk's context occurs more than once.
    MultipleMatches,
    /// A hunk overlaps an earlier hunk of the same section.
    OverlappingEdits,
    /// A file's hash is not the expected one.
    StaleFile,
    /// A path leads outside the workspace.
    OutsideWorkspace,
    /// The call itself is invalid (absolute path, bad params, move onto itself, I/O failure).
    CommandFailed,
    /// A file or parent directory does not exist.
    NotFound,
    /// The file to create already exists.
    AlreadyExists,
}

impl ErrorKind {
    /// The wire name, e.g. `stale_file`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::PatchParseError => "patch_parse_error",
            ErrorKind::PatchApplyError => "patch_apply_error",
            ErrorKind::MultipleMatches => "multiple_matches",
            ErrorKind::OverlappingEdits => "overlapping_edits",
            ErrorKind::StaleFile => "stale_file",
            ErrorKind::OutsideWorkspace => "outside_workspace",
            ErrorKind::CommandFailed => "command_failed",
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
        }
    }
}

/// The error kinds of the IDE-plugin tools (`read_file`, `grep_file`,
/// `apply_change`, `call_chain`; docs/ide-tools.md), as they appear on the
/// wire. [`IdeErrorKind::as_str`] is the wire string.
#[cfg(feature = "ide")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IdeErrorKind {
    /// The params are not the tool's shape (`details.field`, `details.reason`).
    InvalidParams,
    /// A path the tool cannot take: absolute, a drive, UNC, a backslash, NUL.
    InvalidPath,
    /// A path that leads outside the workspace.
    OutsideWorkspace,
    /// The file (or, for a created file, its folder) does not exist.
    NotFound,
    /// The path names a folder, not a file.
    NotAFile,
    /// `read_file`: the window starts past the file's last line.
    LineOutOfRange,
    /// `grep_file`: a regex the regex engine refuses.
    InvalidRegex,
    /// `grep_file`: a regex over the pattern or compiled-size limit.
    RegexTooLarge,
    /// `apply_change`: the search text does not occur in the file.
    NoMatch,
    /// `apply_change`: the search text occurs more than once.
    MultipleMatches,
    /// `apply_change`: the file to create exists.
    AlreadyExists,
    /// `call_chain`: no such class, or no such method in it.
    MethodNotFound,
    /// `call_chain`: a `.java` file nests types deeper than the limit.
    NestingTooDeep,
    /// `call_chain`: the method is declared in several classes.
    AmbiguousMethod,
    /// An I/O failure.
    IoError,
    /// The engine failed unexpectedly (a bug: it caught a panic).
    InternalError,
}

#[cfg(feature = "ide")]
impl IdeErrorKind {
    /// The wire name, e.g. `no_match`.
    pub fn as_str(self) -> &'static str {
        match self {
            IdeErrorKind::InvalidParams => "invalid_params",
            IdeErrorKind::InvalidPath => "invalid_path",
            IdeErrorKind::OutsideWorkspace => "outside_workspace",
            IdeErrorKind::NotFound => "not_found",
            IdeErrorKind::NotAFile => "not_a_file",
            IdeErrorKind::LineOutOfRange => "line_out_of_range",
            IdeErrorKind::InvalidRegex => "invalid_regex",
            IdeErrorKind::RegexTooLarge => "regex_too_large",
            IdeErrorKind::NoMatch => "no_match",
            IdeErrorKind::MultipleMatches => "multiple_matches",
            IdeErrorKind::AlreadyExists => "already_exists",
            IdeErrorKind::MethodNotFound => "method_not_found",
            IdeErrorKind::NestingTooDeep => "nesting_too_deep",
            IdeErrorKind::AmbiguousMethod => "ambiguous_method",
            IdeErrorKind::IoError => "io_error",
            IdeErrorKind::InternalError => "internal_error",
        }
    }
}

#[cfg(feature = "ide")]
impl Serialize for IdeErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A refused call: its kind (`K`: the tool's error vocabulary, an enum),
/// its reason when the spec gives one, a one-line message naming the file,
/// hunk or change and why, and the structured details of the wire
/// (`path`, `hunkIndex`, `reason`, `hint`, `diagnosis`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError<K = ErrorKind> {
    /// The kind.
    pub kind: K,
    /// The reason, also in `details.reason` where the wire carries it.
    pub reason: Option<Reason>,
    /// Human-readable, names where.
    pub message: String,
    /// The wire `details` object, in the wire's key order.
    pub details: Map<String, Value>,
}

impl<K> ToolError<K> {
    pub(crate) fn new(kind: K, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            reason: None,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// One more `details` member, after those already there.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// The reason, as [`ToolError::reason`] and as the next `details`
    /// member (`reason`: its wire string).
    pub(crate) fn because(mut self, reason: Reason) -> Self {
        self.reason = Some(reason);
        self.with("reason", reason.as_str())
    }

    /// The agent hint (`details.hint`, docs/diagnostics.md), if any.
    pub fn hint(&self) -> Option<&str> {
        self.details.get("hint").and_then(Value::as_str)
    }

    /// The message as the wire carries it: with the hint appended after
    /// `; hint: `, so a host that forwards only the message keeps it.
    pub fn message_with_hint(&self) -> String {
        match self.hint() {
            Some(hint) => format!("{}; hint: {hint}", self.message),
            None => self.message.clone(),
        }
    }
}

impl<K: std::fmt::Debug> std::fmt::Display for ToolError<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message_with_hint())
    }
}

impl<K: std::fmt::Debug> std::error::Error for ToolError<K> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_serializes_to_its_wire_string_and_lands_in_details() {
        assert_eq!(
            serde_json::to_value(Reason::ConflictingExpectedSha256).unwrap(),
            "conflicting_expected_sha256"
        );
        let e = ToolError::new(ErrorKind::NotFound, "a.txt: no such file")
            .with("path", "a.txt")
            .because(Reason::MissingFile);
        assert_eq!(e.reason, Some(Reason::MissingFile));
        assert_eq!(
            serde_json::to_string(&e.details).unwrap(),
            r#"{"path":"a.txt","reason":"missing_file"}"#
        );
        assert_eq!(e.to_string(), "a.txt: no such file");
    }

    /// Every IDE error kind with its wire string (docs/ide-tools.md's
    /// table), byte for byte.
    #[cfg(feature = "ide")]
    #[test]
    fn each_ide_error_kind_serializes_to_its_wire_string() {
        use IdeErrorKind::*;
        let wire = [
            (InvalidParams, "invalid_params"),
            (InvalidPath, "invalid_path"),
            (OutsideWorkspace, "outside_workspace"),
            (NotFound, "not_found"),
            (NotAFile, "not_a_file"),
            (LineOutOfRange, "line_out_of_range"),
            (InvalidRegex, "invalid_regex"),
            (RegexTooLarge, "regex_too_large"),
            (NoMatch, "no_match"),
            (MultipleMatches, "multiple_matches"),
            (AlreadyExists, "already_exists"),
            (MethodNotFound, "method_not_found"),
            (NestingTooDeep, "nesting_too_deep"),
            (AmbiguousMethod, "ambiguous_method"),
            (IoError, "io_error"),
            (InternalError, "internal_error"),
        ];
        for (kind, string) in wire {
            assert_eq!(kind.as_str(), string);
            assert_eq!(serde_json::to_value(kind).unwrap(), string);
        }
    }
}
