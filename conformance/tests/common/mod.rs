//! Scaffolding shared by the integration tests that run the real
//! `patchspec` binary: the binaries' paths, a generated corpus in a temp
//! dir, one run of `patchspec` and its JSON-lines report read back.
//!
//! Each test file declares `mod common;` and uses what it needs, so not
//! every test binary uses every item here.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// The `patchspec` binary under test.
pub const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");
/// The purpose-built (partly broken) executor of the runner's tests.
pub const EXECUTOR: &str = env!("CARGO_BIN_EXE_patchspec-test-executor");
/// The purpose-built (partly broken) WebSocket plugin.
pub const PLUGIN: &str = env!("CARGO_BIN_EXE_patchspec-test-plugin");

/// The repository's corpus.
pub fn repo_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

/// The representative subset of the repository's corpus that tests run
/// where the whole corpus runs elsewhere (`gate.rs` in process, `store.rs`
/// over the session transport, `.ci/run`'s gate stages over every
/// transport): a `--shard` of about 70 cases that holds cases of every tool
/// (the tests check it with [`corpus_tools`]).
pub const CORPUS_SHARD: &str = "2/16";

/// The tools of the repository's corpus: its folders.
pub fn corpus_tools() -> BTreeSet<String> {
    std::fs::read_dir(repo_corpus())
        .expect("the corpus")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir() && e.file_name() != "schema")
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// A generated corpus in a temp dir (the corpus in `corpus/`, room for
/// other files beside it).
pub struct Corpus {
    dir: tempfile::TempDir,
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Corpus {
        Corpus {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The corpus directory.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("corpus")
    }

    /// A path beside the corpus, in the same temp dir.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `test.write` case: write `new\n` to `a.txt`, with a misbehaviour
    /// (see the test executor's and the test plugin's docs).
    pub fn case(&self, id: &str, misbehave: &str, tags: &[&str]) -> &Corpus {
        let mut call = json!({"path": "a.txt", "content": "new\n"});
        if !misbehave.is_empty() {
            call["misbehave"] = json!(misbehave);
        }
        self.raw(
            id,
            json!({
                "id": id,
                "summary": format!("test.write with misbehave={misbehave:?}"),
                "spec": ["websocket-tool-protocol#tool-result"],
                "tool": "test.write",
                "tags": tags,
                "given": {"files": {"keep.txt": "k\n"}},
                "call": call,
                "expect": {"result": {"success": true, "path": "a.txt"}, "files": {"keep.txt": "k\n", "a.txt": "new\n"}}
            }),
        )
    }

    /// A case file as given.
    pub fn raw(&self, id: &str, value: Value) -> &Corpus {
        let path = self.root().join(format!("{id}.json"));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, serde_json::to_string_pretty(&value).expect("json"))
            .expect("write case");
        self
    }
}

/// What one `patchspec` run produced.
pub struct Run {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// The JSON-lines report, line by line.
    pub fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\nstderr:\n{}", self.stderr))
            })
            .collect()
    }

    /// id → (outcome, errorKind or "").
    pub fn outcomes(&self) -> BTreeMap<String, (String, String)> {
        self.lines()
            .into_iter()
            .filter(|v| v["type"] == "case")
            .map(|v| {
                (
                    v["id"].as_str().unwrap_or_default().to_owned(),
                    (
                        v["outcome"].as_str().unwrap_or_default().to_owned(),
                        v["errorKind"].as_str().unwrap_or_default().to_owned(),
                    ),
                )
            })
            .collect()
    }

    /// The tools of the cases run.
    pub fn tools(&self) -> BTreeSet<String> {
        self.lines()
            .iter()
            .filter(|v| v["type"] == "case")
            .filter_map(|v| v["tool"].as_str().map(str::to_owned))
            .collect()
    }

    /// The report's footer line.
    pub fn footer(&self) -> Value {
        self.lines()
            .into_iter()
            .find(|v| v["type"] == "footer")
            .unwrap_or_else(|| panic!("no footer in:\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    /// A case's final record.
    pub fn case(&self, id: &str) -> Value {
        self.lines()
            .into_iter()
            // The last line for an id is its final record (amendments follow).
            .rfind(|v| v["type"] == "case" && v["id"] == id)
            .unwrap_or_else(|| panic!("no case {id} in\n{}\n{}", self.stdout, self.stderr))
    }

    /// A case's message ("" when it has none).
    pub fn message(&self, id: &str) -> String {
        self.case(id)["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Run `patchspec ARGS` with `CI` set (no progress bar) and no stdin.
pub fn patchspec<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let out = Command::new(PATCHSPEC)
        .args(args)
        .env("CI", "true")
        .stdin(Stdio::null())
        .output()
        .expect("run patchspec");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `patchspec check --corpus CORPUS --report json <extra> [-- executor...]`,
/// asserting the exit code.
pub fn check_json(corpus: &Path, extra: &[&str], executor: &[&str], code: i32) -> Run {
    let mut args = vec![
        "check",
        "--corpus",
        corpus.to_str().expect("utf-8"),
        "--report",
        "json",
    ];
    args.extend_from_slice(extra);
    if !executor.is_empty() {
        args.push("--");
        args.extend_from_slice(executor);
    }
    let run = patchspec(&args);
    assert_eq!(
        run.code, code,
        "exit code of {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}
