//! Pointing the oracles at another implementation: with
//! `PATCHSPEC_FUZZ_EXECUTOR` set to an executor's command line (split on
//! whitespace, no shell), the workspace targets also run every generated
//! call through that executor — one process per call, the `oneshot`
//! transport of docs/protocol.md, in a real temporary workspace — and
//! compare its answer and the tree it leaves with the same models the
//! engine is compared with.
//!
//! Compared: `success`; for `apply_patch` the error `kind`; for
//! `workspace_write_patch` each failing file's `code` (by `fileIndex`); the
//! visible tree (paths in `PATCHSPEC_FUZZ_PRIVATE`, comma-separated,
//! default `.patchspec`, left out); and that no `*.apply-patch.tmp` remains.
//! Not compared: messages and details (implementation-specific).
//!
//! It costs a process per execution: expect tens of executions per second.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use patchspec_engine::fs::RealFs;
use serde_json::{json, Value};

use super::memfs::{snapshot, temp_files, Node};
use super::{real_workspace, show_tree};

/// The executor's argv, when one is configured.
pub fn executor() -> Option<&'static [String]> {
    static ARGV: std::sync::OnceLock<Option<Vec<String>>> = std::sync::OnceLock::new();
    ARGV.get_or_init(|| {
        let cmd = std::env::var("PATCHSPEC_FUZZ_EXECUTOR").ok()?;
        let argv: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        (!argv.is_empty()).then_some(argv)
    })
    .as_deref()
}

fn private(path: &str) -> bool {
    let list = std::env::var("PATCHSPEC_FUZZ_PRIVATE").unwrap_or_else(|_| ".patchspec".into());
    list.split(',')
        .filter(|p| !p.is_empty())
        .any(|p| path == p || path.starts_with(&format!("{p}/")))
}

/// The tree without private paths.
pub fn visible(tree: &BTreeMap<String, Node>) -> BTreeMap<String, Node> {
    tree.iter()
        .filter(|(p, _)| !private(p))
        .map(|(p, n)| (p.clone(), n.clone()))
        .collect()
}

/// What the executor answered and left behind.
pub struct Answer {
    /// `data.success`.
    pub success: bool,
    /// `data.result`, decoded.
    pub result: Value,
    /// The tree after the call (modes are not compared: zeroed).
    pub tree: BTreeMap<String, Node>,
}

/// Run one call through the executor in a fresh workspace holding `files`
/// and `dirs`. Panics (an oracle failure) when the executor breaks the
/// protocol or leaves a temp file.
pub fn call(
    argv: &[String],
    files: &[(String, Vec<u8>, u32)],
    dirs: &[String],
    tool: &str,
    params: &Value,
) -> Answer {
    let ws = real_workspace(files, dirs);
    let root = ws.path().canonicalize().expect("canonical workspace path");
    let message = json!({
        "type": "TOOL_CALL",
        "toolCallId": "fuzz#1",
        "toolName": tool,
        "params": params,
        "webSocketSessionId": "fuzz",
        "workspaceRoot": root.to_string_lossy(),
        "session": {"activeFiles": {}},
    });
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the executor {argv:?}: {e}"));
    {
        let mut stdin = child.stdin.take().expect("piped stdin");
        // An executor may exit without reading; that is judged by its answer.
        let _ = writeln!(stdin, "{message}");
    }
    let out = child.wait_with_output().expect("wait for the executor");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "executor answer is not one JSON value ({e}): {stdout:?}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let data = &answer["data"];
    assert_eq!(answer["type"], "TOOL_RESULT", "not a TOOL_RESULT: {answer}");
    assert_eq!(
        data["toolCallId"], "fuzz#1",
        "toolCallId not echoed: {answer}"
    );
    let success = data["success"]
        .as_bool()
        .unwrap_or_else(|| panic!("data.success is not a boolean: {answer}"));
    let result: Value = data["result"]
        .as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_else(|| panic!("data.result is not a JSON document in a string: {answer}"));
    let fs = RealFs::open(&root).expect("open the workspace again");
    let tree = snapshot(&fs);
    let temps = temp_files(&BTreeMap::new(), &tree)
        .into_iter()
        .filter(|p| !files.iter().any(|(f, _, _)| f == p))
        .collect::<Vec<_>>();
    assert!(temps.is_empty(), "the executor left temp files: {temps:?}");
    let tree = tree
        .into_iter()
        .map(|(p, n)| match n {
            Node::File(b, _) => (p, Node::File(b, 0)),
            Node::Dir => (p, Node::Dir),
        })
        .collect();
    Answer {
        success,
        result,
        tree,
    }
}

/// Modes zeroed, private paths left out: what an executor's tree is
/// compared on.
pub fn comparable(tree: &BTreeMap<String, Node>) -> BTreeMap<String, Node> {
    visible(tree)
        .into_iter()
        .map(|(p, n)| match n {
            Node::File(b, _) => (p, Node::File(b, 0)),
            Node::Dir => (p, Node::Dir),
        })
        .collect()
}

/// Compare an executor's tree with the model's.
pub fn assert_tree(got: &BTreeMap<String, Node>, want: &BTreeMap<String, Node>, what: &str) {
    let (got, want) = (comparable(got), comparable(want));
    assert!(
        got == want,
        "executor tree differs from the model's ({what})\nexecutor: {}\nmodel:    {}",
        show_tree(&got),
        show_tree(&want)
    );
}
