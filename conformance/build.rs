//! Compiles the repository's `corpus/` into the `patchspec` binary, so an
//! installed binary needs no clone (see `src/corpus_source.rs`).
//!
//! Every file of the corpus (cases, `VERSION`, `CHANGELOG.md`, `schema/`),
//! in the order of the same walk the loader uses (`src/corpus_walk.rs`), is
//! concatenated and deflated (miniz_oxide) into one blob,
//! `$OUT_DIR/embedded_corpus.deflate`: the JSON shrinks about tenfold, and
//! the binary with it. `$OUT_DIR/embedded_corpus.rs` pulls the blob in with
//! `include_bytes!` and lists each file as (relative path, offset, length)
//! into the inflated bytes, with their total length, which bounds the
//! inflation at run time. The bytes are the files' own, so the embedded
//! corpus hashes exactly as the directory does.

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/corpus_walk.rs"]
#[allow(dead_code)] // is_case_file is for the loader
mod corpus_walk;

/// Deflate's best ratio: paid once per build of the corpus, saved in every
/// installed binary.
const DEFLATE_LEVEL: u8 = 9;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("../corpus");
    // A directory: cargo rescans every file under it for changes.
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=src/corpus_walk.rs");
    let root = root
        .canonicalize()
        .unwrap_or_else(|e| panic!("the corpus {} is part of the build: {e}", root.display()));
    let files = corpus_walk::files(&root)
        .unwrap_or_else(|e| panic!("cannot walk the corpus {}: {e}", root.display()));
    let mut all = Vec::new();
    let mut table = String::from("&[\n");
    for rel in &files {
        let rel_text = rel
            .to_str()
            .unwrap_or_else(|| panic!("corpus file names are UTF-8: {}", rel.display()));
        let abs = root.join(rel);
        let bytes =
            std::fs::read(&abs).unwrap_or_else(|e| panic!("cannot read {}: {e}", abs.display()));
        writeln!(table, "    ({rel_text:?}, {}, {}),", all.len(), bytes.len())
            .expect("writing to a String cannot fail");
        all.extend_from_slice(&bytes);
    }
    table.push(']');
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let blob = Path::new(&out_dir).join("embedded_corpus.deflate");
    let deflated = miniz_oxide::deflate::compress_to_vec(&all, DEFLATE_LEVEL);
    write(&blob, &deflated);
    let blob_text = blob
        .to_str()
        .unwrap_or_else(|| panic!("OUT_DIR is UTF-8: {}", blob.display()));
    let source = format!(
        "/// The corpus files, concatenated and deflated.\n\
         pub(super) static DEFLATED: &[u8] = include_bytes!({blob_text:?});\n\
         /// The length of the inflated bytes.\n\
         pub(super) const INFLATED_LEN: usize = {};\n\
         /// Each file: (path relative to the corpus root, offset, length).\n\
         pub(super) static FILES: &[(&str, usize, usize)] = {table};\n",
        all.len()
    );
    write(
        &Path::new(&out_dir).join("embedded_corpus.rs"),
        source.as_bytes(),
    );
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
