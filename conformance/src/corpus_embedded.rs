//! The corpus compiled into the binary: the files of the repository's
//! `corpus/` at build time, deflated by `build.rs` and inflated once, on
//! first use. Which corpus a command uses, and loading it, is
//! [`crate::corpus_source`]; this module only holds the bytes, so the case
//! loader ([`crate::case`]) can read a file of the embedded corpus without
//! depending on the command line's choices.

use std::sync::OnceLock;

/// What `build.rs` generated: `DEFLATED` (the corpus files concatenated and
/// deflated), `INFLATED_LEN` (their total length) and `FILES` (each file's
/// relative path, offset and length in the inflated bytes).
mod generated {
    include!(concat!(env!("OUT_DIR"), "/embedded_corpus.rs"));
}

/// The inflated corpus: inflated on first use only, so commands that never
/// read the embedded corpus (`exec`, `mcp`, a check of `--corpus DIR`) do
/// not pay for it.
static INFLATED: OnceLock<Vec<u8>> = OnceLock::new();

fn inflated() -> &'static [u8] {
    INFLATED.get_or_init(|| {
        // Bounded by the length the build recorded. The build deflated these
        // very bytes, so inflating them cannot fail.
        let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(
            generated::DEFLATED,
            generated::INFLATED_LEN,
        )
        .expect("build.rs deflated the embedded corpus from INFLATED_LEN bytes");
        assert_eq!(
            bytes.len(),
            generated::INFLATED_LEN,
            "build.rs recorded the inflated length of the embedded corpus"
        );
        bytes
    })
}

/// Every file of the repository's `corpus/` at build time: (path relative to
/// the corpus root with `/` separators, bytes), in [`std::path::Path`] order.
pub fn embedded_files() -> impl ExactSizeIterator<Item = (&'static str, &'static [u8])> {
    let all = inflated();
    // FILES tiles 0..INFLATED_LEN (build.rs wrote it so), so each range is in bounds.
    generated::FILES
        .iter()
        .map(move |&(path, offset, len)| (path, &all[offset..offset + len]))
}

/// One file of the embedded corpus, by its relative path.
pub fn file(rel: &str) -> Option<&'static [u8]> {
    embedded_files()
        .find(|(path, _)| *path == rel)
        .map(|(_, bytes)| bytes)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn repo_corpus() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
    }

    #[test]
    fn the_file_table_tiles_the_inflated_bytes() {
        let mut end = 0;
        for &(path, offset, len) in generated::FILES {
            assert_eq!(offset, end, "{path} starts where the previous file ends");
            end += len;
        }
        assert_eq!(end, generated::INFLATED_LEN);
        assert_eq!(inflated().len(), generated::INFLATED_LEN);
    }

    #[test]
    fn every_embedded_file_is_the_directory_s_byte_for_byte() {
        let root = repo_corpus();
        let on_disk = crate::corpus_walk::files(&root).expect("the corpus directory walks");
        let embedded: Vec<_> = embedded_files().collect();
        assert_eq!(embedded.len(), on_disk.len());
        for ((rel, bytes), disk_rel) in embedded.into_iter().zip(on_disk) {
            assert_eq!(Path::new(rel), disk_rel);
            let disk = std::fs::read(root.join(&disk_rel)).expect("a corpus file reads");
            assert!(
                bytes == disk.as_slice(),
                "{rel} differs from the directory's"
            );
        }
    }

    #[test]
    fn the_embedded_corpus_carries_its_schema_and_changelog() {
        assert!(file("schema/case.schema.json").is_some());
        assert!(file("CHANGELOG.md").is_some());
        assert!(file("VERSION").is_some());
        assert!(file("no/such.json").is_none());
    }
}
