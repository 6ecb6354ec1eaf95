//! Envelope text → [`Patch`]. (Being written; see the parser task.)

use super::ast::Patch;

/// A parse error: where (1-based envelope line) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based envelope line.
    pub line: usize,
    /// What was expected and what was found.
    pub message: String,
}

/// Parse an envelope.
pub fn parse(text: &str) -> Result<Patch<'_>, ParseError> {
    let _ = text;
    Err(ParseError { line: 1, message: "parser not written yet".into() })
}

/// Parse an envelope given as bytes: invalid UTF-8 is a parse error at its line.
pub fn parse_bytes(bytes: &[u8]) -> Result<Patch<'_>, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(ParseError {
            line: 1 + bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count(),
            message: "the envelope is not valid UTF-8".into(),
        }),
    }
}
