//! Compiles the repository's `corpus/` into the `patchspec` binary, so an
//! installed binary needs no clone (see `src/corpus_source.rs`).
//!
//! Writes `$OUT_DIR/embedded_corpus.rs`: one `(relative path, bytes)` entry
//! per file of the corpus (cases, `VERSION`, `CHANGELOG.md`, `schema/`), the
//! bytes by `include_bytes!`, in the order of the same walk the loader uses
//! (`src/corpus_walk.rs`), so the embedded corpus hashes exactly as the
//! directory does. No dependency: std and the compiler's `include_bytes!`.

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/corpus_walk.rs"]
#[allow(dead_code)] // is_case_file is for the loader
mod corpus_walk;

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
    let mut table = String::from("&[\n");
    for rel in &files {
        let rel_text = rel
            .to_str()
            .unwrap_or_else(|| panic!("corpus file names are UTF-8: {}", rel.display()));
        let abs = root.join(rel);
        let abs_text = abs
            .to_str()
            .unwrap_or_else(|| panic!("the corpus path is UTF-8: {}", abs.display()));
        writeln!(table, "    ({rel_text:?}, include_bytes!({abs_text:?})),")
            .expect("writing to a String cannot fail");
    }
    table.push_str("]\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_corpus.rs");
    std::fs::write(&out, table).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
