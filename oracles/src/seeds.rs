//! Seed inputs: every envelope and every batch of the JSON corpus
//! (`corpus/**/*.json`), in the shape each target reads, plus a few
//! hand-written ones that reach grammar corners the corpus may not have yet.
//!
//! `extract-seeds` writes them to `fuzz/corpus/<target>/<hash>`; the replay
//! test also derives them live, so a corpus case added without re-running
//! the extractor is still replayed.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::case;
use super::memfs::MemFs;

/// `(target, input bytes)` pairs.
pub type Seeds = Vec<(&'static str, Vec<u8>)>;

/// Every `*.json` file below `dir`, sorted.
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// The seeds of one corpus case (none for tools the targets do not cover).
pub fn from_case(text: &str) -> Seeds {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let tool = v.get("tool").and_then(Value::as_str).unwrap_or_default();
    let Some(call) = v.get("call") else {
        return Vec::new();
    };
    let given = v.get("given");
    let files = given
        .and_then(|g| g.get("files"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let dirs = given
        .and_then(|g| g.get("dirs"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match tool {
        "apply_patch" => {
            let mut out = Vec::new();
            if let Some(patch) = call.get("patch").and_then(Value::as_str) {
                out.push(("envelope_parse", patch.as_bytes().to_vec()));
            }
            out.push(("envelope_apply", case::encode(&files, &dirs, call)));
            out
        }
        "workspace_write_patch" => vec![
            ("write_patch_validate", call.to_string().into_bytes()),
            ("write_patch_apply", case::encode(&files, &dirs, call)),
        ],
        _ => Vec::new(),
    }
}

/// Every seed of the corpus below `corpus_dir`, then the hand-written ones.
pub fn all(corpus_dir: &Path) -> Seeds {
    let mut out = Vec::new();
    for f in case_files(corpus_dir) {
        if let Ok(text) = std::fs::read_to_string(&f) {
            out.extend(from_case(&text));
        }
    }
    out.extend(hand_written());
    out
}

const ENVELOPES: &[&str] = &[
    "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n",
    "*** Begin Patch\r\n*** Add File: a.txt\r\n+x\r\n+\r\n\\ No newline at end of file\r\n*** End Patch\r\n",
    "*** Begin Patch\n*** Update File: a.txt\n@@ fn main\n a\n-b\n+B\n c\n@@\n-x\n+y\n*** End of File\n*** End Patch",
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/b.txt\n@@\n-a\n\\ No newline at end of file\n+a\n*** Delete File: b.txt\n*** End Patch\n",
    "*** Begin Patch\n*** Move File: a.txt -> d/new.txt\n*** Add File: b.txt\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: b.txt\n@@\n+tail\n*** End of File\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: a.txt\n@@ class A\n@@     def b\n@@\n a\n-b\n+B\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: a.txt\n@@ a\n a\n@@ x\n@@ y\n*** End of File\n*** End Patch\n",
    "*** Begin Patch \n*** End Patch\n",
    "*** Begin Patch\n*** Frobnicate\n*** End Patch\n\n",
];

fn hand_written() -> Seeds {
    let mut out: Seeds = Vec::new();
    let files = json!({
        "a.txt": "a\nb\nc\nx\n",
        "b.txt": "x\ny\nx",
        "d/c.txt": {"base64": "77u/b2xkDQpuZXcNCg=="},
    });
    let files = files.as_object().cloned().unwrap_or_default();
    for env in ENVELOPES {
        out.push(("envelope_parse", env.as_bytes().to_vec()));
        for atomic in [true, false] {
            let params = json!({"patch": env, "atomic": atomic});
            out.push(("envelope_apply", case::encode(&files, &[], &params)));
        }
    }
    let sha = |s: &[u8]| patchspec_engine::hash::sha256_hex(s);
    let batch = json!({
        "batchKey": "k",
        "files": [{
            "docPath": "a.txt",
            "originalSha256": sha(b"a\nb\nc\nx\n"),
            "changes": [
                {"operation": "insert", "afterLine": 0, "newLines": ["top"]},
                {"operation": "replace", "startLine": 2, "endLine": 2, "expectedOriginalLines": ["b"], "newLines": ["B", "B2"]},
                {"operation": "delete", "startLine": 3, "endLine": 4, "expectedOriginalLines": ["c", "x"], "changeKey": "d"}
            ]
        }, {
            "docPath": "b.txt",
            "originalSha256": sha(b"x\ny\nx"),
            "changes": [{"operation": "insert", "afterLine": 3, "newLines": ["end"]}]
        }]
    });
    let bad = json!({
        "files": [{"docPath": "A.txt", "originalSha256": "xyz", "fileKey": 3,
                   "changes": [{"operation": "Insert", "afterLine": 1.5},
                               {"operation": "delete", "startLine": 2, "endLine": 1, "newLines": []}]}],
        "extra": true
    });
    for b in [&batch, &bad] {
        out.push(("write_patch_validate", b.to_string().into_bytes()));
        out.push(("write_patch_apply", case::encode(&files, &[], b)));
    }
    out
}

/// The longest `envelope_parse` seed that `extract-seeds` writes to the
/// fuzzer's corpus: libFuzzer's own default input limit.
///
/// libFuzzer takes its input-length limit from the seeds (`-max_len` 0 means
/// the larger of 4096 and the longest seed) and starts mutating at the
/// longest seed's length. Four long envelopes of the JSON corpus (a
/// 30,000-character line, a 2,006-line hunk, a 20,000-character added line,
/// a 145-line move) made that 30 KB, so any mutation could be 30 KB long,
/// and the target ran at two thirds of its speed for it (docs/fuzzing.md,
/// "Throughput"). The parser does the same work for each
/// line whatever its length, and every corner of its grammar fits in a few
/// lines, so a long envelope gives it length, not structure. The other targets keep their
/// long seeds: there a file's size and its line lengths reach paths of the
/// engine (the diagnosis of long lines, the long-line table).
pub const ENVELOPE_PARSE_SEED_MAX_LEN: usize = 4096;

/// The most entries (files and folders, the implied parent folders
/// included) a workspace-shaped seed (`envelope_apply`,
/// `write_patch_apply`) may give its workspace to be written to the
/// fuzzer's corpus.
///
/// Every execution builds the seed's tree in memory and snapshots it before
/// and after the call, and a refused path makes the engine's similar-path
/// hint list up to 2,000 of its folders. The corpus case that pins that
/// walk's bound has 2,002 files in 2,001 folders (4,003 entries): about
/// 12 ms an execution under the fuzzer, a hundred average ones, and every
/// mutation of it costs the same. With it among the seeds `envelope_apply`
/// ran at 7,000-7,600 exec/s, without it at 9,800-11,100 (docs/fuzzing.md,
/// "Throughput"). What such a case pins is a cost bound,
/// which the fuzzer does not judge; the corpus case and the replay test
/// hold it. The next widest seed has 19 entries.
pub const WORKSPACE_SEED_MAX_ENTRIES: usize = 64;

/// Whether `extract-seeds` writes this seed into the fuzzer's corpus: not
/// an `envelope_parse` seed over [`ENVELOPE_PARSE_SEED_MAX_LEN`] bytes, nor
/// a workspace of more than [`WORKSPACE_SEED_MAX_ENTRIES`] entries. Inputs
/// of other shapes (the batches of `write_patch_validate`, inputs without
/// the case magic) are always written. The replay test runs every seed.
pub fn for_the_fuzzer(target: &str, bytes: &[u8]) -> bool {
    match target {
        "envelope_parse" => bytes.len() <= ENVELOPE_PARSE_SEED_MAX_LEN,
        "envelope_apply" | "write_patch_apply" => case::parse(bytes)
            .and_then(|c| MemFs::with(&c.files, &c.dirs))
            .is_none_or(|fs| fs.snapshot().len() <= WORKSPACE_SEED_MAX_ENTRIES),
        _ => true,
    }
}

/// The file name of a seed: the first 40 hex digits of its SHA-256.
pub fn name(bytes: &[u8]) -> String {
    patchspec_engine::hash::sha256_hex(bytes)[..40].to_string()
}
