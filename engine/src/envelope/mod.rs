//! The `apply_patch` envelope: its typed form ([`Patch`]), the parser
//! ([`parse`]) and the canonical renderer ([`Patch::render`]).
//!
//! `parse(render(p)) == p` for every parsed `p` (envelope line numbers are
//! [`Span`]s, which locate but do not identify, so they compare equal).

mod ast;
mod parser;
mod render;

pub use ast::{Hunk, HunkLine, LineKind, Patch, Section, SectionKind, Span};
pub use parser::{parse, parse_bytes, ParseError};
