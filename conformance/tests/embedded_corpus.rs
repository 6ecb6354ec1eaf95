//! The corpus compiled into `patchspec`, through the real binary: which
//! corpus a command picks (a patchspec `corpus/` above the cwd, else the
//! embedded one, with a note for an unrelated `corpus/` folder), that the
//! report header says which, and `patchspec corpus export`.

use std::path::Path;
use std::process::{Command, Output};

const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");
const ONE_CASE: &str = "apply_patch/add/already-exists";

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(PATCHSPEC)
        .args(args)
        // The temp dirs are outside the clone: walking up from them finds
        // no corpus/ of the repository.
        .current_dir(cwd)
        .output()
        .expect("run patchspec")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The header line `corpus VERSION sha256:HASH (WHERE)` of a one-case check.
fn corpus_line(out: &Output) -> String {
    let stdout = text(&out.stdout);
    stdout
        .lines()
        .find(|l| l.starts_with("corpus "))
        .unwrap_or_else(|| panic!("no corpus line in:\n{stdout}\n{}", text(&out.stderr)))
        .to_owned()
}

fn hash_of(line: &str) -> &str {
    line.split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .expect("a sha256: word")
}

#[test]
fn outside_a_clone_the_embedded_corpus_is_used_and_the_header_says_so() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = run(&["check", "--run", ONE_CASE], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = corpus_line(&out);
    assert!(
        line.ends_with(&format!(
            "(embedded in patchspec {})",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
    assert!(
        !text(&out.stderr).contains("note:"),
        "no note without a corpus/ folder"
    );
}

#[test]
fn the_embedded_corpus_hashes_as_the_repository_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo_corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let embedded = run(&["check", "--run", ONE_CASE], tmp.path());
    let dir = run(
        &[
            "check",
            "--run",
            ONE_CASE,
            "--corpus",
            repo_corpus.to_str().expect("utf-8"),
        ],
        tmp.path(),
    );
    let (embedded, dir) = (corpus_line(&embedded), corpus_line(&dir));
    assert_eq!(hash_of(&embedded), hash_of(&dir), "{embedded}\n{dir}");
    assert!(dir.contains("corpus)"), "the directory is named: {dir}");
}

#[test]
fn an_unrelated_corpus_folder_is_left_alone_with_a_note() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("corpus/texts")).expect("mkdir");
    std::fs::write(tmp.path().join("corpus/texts/a.json"), "{}").expect("write");
    std::fs::create_dir_all(tmp.path().join("src")).expect("mkdir");
    let out = run(&["check", "--run", ONE_CASE], &tmp.path().join("src"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("is not a patchspec corpus") && stderr.contains("corpus embedded"),
        "{stderr}"
    );
    assert!(corpus_line(&out).contains("(embedded in patchspec"));
}

#[test]
fn export_writes_a_corpus_directory_that_is_found_and_hashes_the_same() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = run(&["corpus", "export", "exported/corpus"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.starts_with("exported the corpus "), "{said}");
    let root = tmp.path().join("exported/corpus");
    for file in ["VERSION", "CHANGELOG.md", "schema/case.schema.json"] {
        assert!(root.join(file).is_file(), "{file} exported");
    }
    assert!(root.join(format!("{ONE_CASE}.json")).is_file());
    // A patchspec corpus now: walking up from inside the export finds it.
    let from_dir = run(&["check", "--run", ONE_CASE], &root.join("apply_patch"));
    let line = corpus_line(&from_dir);
    assert!(line.contains("exported/corpus)"), "{line}");
    let embedded = corpus_line(&run(&["check", "--run", ONE_CASE], tmp.path()));
    assert_eq!(hash_of(&line), hash_of(&embedded));
    assert!(
        said.contains(hash_of(&line).trim_start_matches("sha256:")),
        "{said}"
    );
}

#[test]
fn export_refuses_a_directory_that_is_not_empty() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("keep.txt"), "mine").expect("write");
    let out = run(
        &["corpus", "export", tmp.path().to_str().expect("utf-8")],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(2), "usage error");
    assert!(text(&out.stderr).contains("is not empty"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("keep.txt")).expect("kept"),
        "mine"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).expect("ls").count(), 1);
}
