//! `patchspec matrix`: the corpus against several implementations, side by
//! side.
//!
//! [`model`] builds the [`Matrix`] (rows = cases, columns = implementations,
//! one classified cell each) from the runner's results; the outputs only
//! read it: [`json`] (`matrix.json`, stable), [`html`] (`matrix.html`, one
//! self-contained page), [`badge`] (shields.io endpoint JSON) and
//! [`markdown`] (for docs/compliance.md); [`rejudge`] judges an outcome
//! run's answers again in full; [`columns`] runs every implementation
//! through [`crate::run::run`], like `check`, and writes the outputs.

pub mod badge;
pub mod columns;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod rejudge;

pub use columns::{run_and_write, ExecutorSpec, MatrixRequest, REFERENCE};
pub use model::{Cell, CellOutcome, Column, Departure, Matrix, Row, Source, Tally};
