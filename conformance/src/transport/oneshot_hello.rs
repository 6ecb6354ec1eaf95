//! Discovery for the `oneshot` transport: ask an executor who it is.
//!
//! Main function: [`probe`]. The executor is started once, in an empty
//! temporary directory (`<tmp>/patchspec-hello-XXXX/ws`), exactly as for a call (no shell, its own process
//! group), with the runner's `HELLO` on stdin instead of a `TOOL_CALL`. An
//! executor that answers with its own valid `HELLO` has declared its tools,
//! unsupported tags, private paths and identity, and [`Oneshot::declared`]
//! applies them; anything else (no answer, a `TOOL_RESULT`, garbage) is a
//! failed probe with the reason. What it leaves out: retries, and deciding
//! what a failed probe means (`check --hello` stops, `matrix` goes on with
//! nothing declared).

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use super::oneshot::Oneshot;
use super::process::{kill_group, read_bounded, read_tail, spawn, STDOUT_LIMIT};
use crate::protocol::{check_hello, HelloMsg, Implementation, PROTOCOL_VERSION};

/// The runner's `HELLO`.
pub fn runner_hello() -> HelloMsg {
    HelloMsg {
        kind: "HELLO".into(),
        protocol_version: PROTOCOL_VERSION,
        runner: Some(Implementation {
            name: "patchspec".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            language: Some("Rust".into()),
            homepage: None,
        }),
        ..HelloMsg::default()
    }
}

/// Send a `HELLO` to `argv` (oneshot) and return its `HELLO`, or why not.
pub fn probe(argv: &[String], timeout: Duration) -> Result<HelloMsg, String> {
    let dir = tempfile::Builder::new()
        .prefix("patchspec-hello-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    // A workspace-like `ws/` inside the temporary directory, so that even an
    // executor writing to `../` stays inside it.
    let cwd: PathBuf = dir.path().join("ws");
    std::fs::create_dir(&cwd).map_err(|e| format!("cannot create {}: {e}", cwd.display()))?;
    let mut child = spawn(argv, &cwd).map_err(|e| {
        format!(
            "could not start {:?}: {e}",
            argv.first().map(String::as_str).unwrap_or("")
        )
    })?;
    let pid = child.id();
    let mut line =
        serde_json::to_vec(&runner_hello()).map_err(|e| format!("cannot serialise HELLO: {e}"))?;
    line.push(b'\n');
    if let Some(mut stdin) = child.stdin.take() {
        // An executor that does not read its stdin answers (or not) anyway.
        let _ = stdin.write_all(&line);
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = out_tx.send(
            stdout
                .map(|s| read_bounded(s, STDOUT_LIMIT))
                .unwrap_or_default(),
        );
    });
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = err_tx.send(stderr.map(read_tail).unwrap_or_default());
    });
    let (status_tx, status_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });
    let finished = status_rx.recv_timeout(timeout);
    kill_group(pid);
    let stderr_text = || {
        let tail = err_rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&tail).trim().to_owned();
        if text.is_empty() {
            String::new()
        } else {
            format!(" (stderr: {})", text.lines().last().unwrap_or_default())
        }
    };
    if finished.is_err() {
        return Err(format!(
            "no answer to HELLO within {:.1}s{}",
            timeout.as_secs_f64(),
            stderr_text()
        ));
    }
    let (bytes, over) = out_rx
        .recv_timeout(Duration::from_secs(5))
        .map_err(|_| "stdout was held open after exit".to_owned())?;
    if over {
        return Err(format!("the answer to HELLO is over {STDOUT_LIMIT} bytes"));
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.trim().is_empty() {
        return Err(format!("no answer to HELLO{}", stderr_text()));
    }
    let value: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "the answer to HELLO is not one JSON message: {e}{}",
            stderr_text()
        )
    })?;
    check_hello(&value)
}

impl Oneshot {
    /// A oneshot executor with what its `HELLO` declared; `extra_private`
    /// (from `--ignore-path`) is added to its private paths.
    pub fn declared(argv: Vec<String>, hello: &HelloMsg, extra_private: &[String]) -> Oneshot {
        let mut private = hello.private_paths.clone();
        private.extend(extra_private.iter().cloned());
        Oneshot::new(
            argv,
            Some(hello.tools.clone()),
            hello.unsupported_tags.clone(),
            private,
        )
        .with_implementation(hello.implementation.clone())
    }
}
