//! The `apply_patch` envelope: its typed form ([`Patch`]), the parser
//! ([`parse`]) and the canonical renderer (`Patch::render`).
//!
//! `parse(render(p)) == p` for every parsed `p` (envelope line numbers are
//! `Span`s, which locate but do not identify, so they compare equal).

mod ast;
mod parser;
// Rendering an envelope back to text: the fuzz oracles' round trip.
#[cfg(any(test, feature = "testing"))]
mod render;

pub use ast::{Hunk, HunkLine, LineKind, Patch, Section, SectionKind};
pub use parser::{parse, parse_bytes};
#[cfg(any(test, feature = "testing"))]
pub use ast::Span;
