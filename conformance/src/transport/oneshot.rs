//! The `oneshot` transport: one process per call.
//!
//! The executor's argv is run with no shell, in a new process group, with
//! cwd = the workspace and TMPDIR/HOME inside the case directory. The runner
//! writes one `TOOL_CALL` (one line) on stdin and closes it; the executor
//! writes one `TOOL_RESULT` on stdout and exits. On timeout the whole group
//! is killed; after a normal exit the group is killed too, so leftover
//! children cannot hold stdout open. A valid message is accepted whatever the
//! exit code, unless the process was killed by a signal (a crash).
//!
//! Declaration: before the first case, [`Oneshot::start`] runs the executor
//! once more, exactly as for a call, with a `HELLO` on stdin. An executor
//! that answers with its own valid `HELLO` and exits 0 declares its
//! implementation, tools, unsupported tags and private paths, as in the
//! session transport; any other outcome (no output, garbage, a non-zero
//! exit, a timeout) means it declares nothing, and only the command line
//! (`--skip-tool`, `--skip-tag`, `--ignore-path`) does.

use std::io::Write;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::Duration;

use super::process::{describe_status, kill_group, read_bounded, read_tail, spawn, STDOUT_LIMIT};
use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, TransportError};
use crate::case::Given;
use crate::protocol::{check_hello, parse_tool_result, single_value, HelloMsg, ProtocolError};
use crate::protocol::{runner_hello, ToolCallMsg};
use crate::workspace::{ExecEnv, RunRoot};

/// One process per call.
#[derive(Clone, Debug)]
pub struct Oneshot {
    info: ExecutorInfo,
}

/// How one process run ended.
enum Ran {
    /// It could not be started.
    Spawn(String),
    /// Killed at the timeout.
    Timeout,
    /// Its stdout stayed open after it exited.
    HeldOpen,
    /// It exited: status, stdout (bounded), whether stdout exceeded the bound.
    Exited(std::io::Result<ExitStatus>, Vec<u8>, bool),
}

/// Run `argv` once in `cwd` with `input` on stdin; returns how it ended and
/// its stderr tail.
fn run_once(
    argv: &[String],
    cwd: &Path,
    env: &ExecEnv,
    input: Vec<u8>,
    timeout: Duration,
) -> (Ran, String) {
    let mut child = match spawn(argv, cwd, env) {
        Ok(c) => c,
        Err(e) => {
            let program = argv.first().map(String::as_str).unwrap_or("");
            return (Ran::Spawn(format!("{program:?}: {e}")), String::new());
        }
    };
    let pid = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let tail = stderr_pipe.map(read_tail).unwrap_or_default();
        let _ = err_tx.send(String::from_utf8_lossy(&tail).into_owned());
    });
    let stderr = || {
        err_rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or_default()
    };
    std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // An executor that does not read its stdin is its own problem.
            let _ = stdin.write_all(&input);
        }
    });
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let read = stdout
            .map(|s| read_bounded(s, STDOUT_LIMIT))
            .unwrap_or_default();
        let _ = out_tx.send(read);
    });
    let (status_tx, status_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });
    let status = match status_rx.recv_timeout(timeout) {
        Ok(status) => {
            kill_group(pid);
            status
        }
        Err(_) => {
            kill_group(pid);
            let _ = status_rx.recv_timeout(Duration::from_secs(5));
            return (Ran::Timeout, stderr());
        }
    };
    match out_rx.recv_timeout(Duration::from_secs(5)) {
        Ok((output, over)) => (Ran::Exited(status, output, over), stderr()),
        Err(_) => (Ran::HeldOpen, stderr()),
    }
}

/// What a `HELLO` run declared, or why it declared nothing.
fn hello(argv: &[String], root: &RunRoot, timeout: Duration) -> Result<HelloMsg, String> {
    let dir = root
        .case_dir(&Given::default())
        .map_err(|e| format!("the runner could not prepare a directory for it: {e}"))?;
    let mut line = serde_json::to_vec(&runner_hello()).expect("a HelloMsg always serialises");
    line.push(b'\n');
    match run_once(argv, dir.root(), dir.env(), line, timeout).0 {
        Ran::Spawn(e) => Err(format!("it could not be started: {e}")),
        Ran::Timeout => Err(format!("no answer within {:.1}s", timeout.as_secs_f64())),
        Ran::HeldOpen => Err("its stdout was held open after it exited".into()),
        Ran::Exited(Err(e), _, _) => Err(format!("it could not be waited for: {e}")),
        Ran::Exited(Ok(status), _, _) if !status.success() => Err(format!(
            "it answered HELLO with {}",
            describe_status(status)
        )),
        Ran::Exited(Ok(_), _, true) => Err("its answer exceeds the output bound".into()),
        Ran::Exited(Ok(_), output, false) => {
            let value = single_value(&output).map_err(|e| format!("its answer: {e}"))?;
            match value.get("type").and_then(serde_json::Value::as_str) {
                Some("HELLO") => check_hello(&value).map_err(|e| format!("its answer: {e}")),
                Some(other) => Err(format!("it answered with a {other:?} message, not a HELLO")),
                None => Err("it answered with a message that is not a HELLO".into()),
            }
        }
    }
}

impl Oneshot {
    /// An executor run as `argv` (already resolved against the runner's cwd),
    /// declaring nothing: only `private_paths` from the command line.
    pub fn new(argv: Vec<String>, private_paths: Vec<String>, why: String) -> Oneshot {
        Oneshot {
            info: ExecutorInfo {
                transport: "oneshot",
                command: argv,
                implementation: None,
                tools: None,
                unsupported_tags: Vec::new(),
                private_paths,
                declared_by: Declaration::Missing(why),
            },
        }
    }

    /// Ask the executor for its `HELLO` (one process, as for a call, in a
    /// fresh directory of `root`, within `timeout`), and take its
    /// declaration; without one, declare nothing. `private_paths` from the
    /// command line are added either way.
    pub fn start(
        argv: Vec<String>,
        root: &RunRoot,
        timeout: Duration,
        private_paths: Vec<String>,
    ) -> Oneshot {
        match hello(&argv, root, timeout) {
            Ok(h) => Oneshot {
                info: ExecutorInfo {
                    transport: "oneshot",
                    command: argv,
                    implementation: h.implementation,
                    tools: Some(h.tools),
                    unsupported_tags: h.unsupported_tags,
                    private_paths: h.private_paths.into_iter().chain(private_paths).collect(),
                    declared_by: Declaration::Hello,
                },
            },
            Err(why) => Oneshot::new(argv, private_paths, why),
        }
    }
}

impl Executor for Oneshot {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, msg: &ToolCallMsg, dirs: &CallDirs<'_>, timeout: Duration) -> Exchange {
        let mut line = serde_json::to_vec(msg).expect("a ToolCallMsg always serialises");
        line.push(b'\n');
        let (ran, stderr) = run_once(&self.info.command, dirs.workspace, dirs.env, line, timeout);
        let answer = match ran {
            Ran::Spawn(e) => Err(TransportError::Spawn(e)),
            Ran::Timeout => Err(TransportError::Timeout(timeout)),
            Ran::HeldOpen => Err(TransportError::Crash(
                "stdout was held open after exit by a process outside the group".into(),
            )),
            Ran::Exited(_, _, true) => Err(TransportError::Protocol(ProtocolError::TooLarge(
                STDOUT_LIMIT,
            ))),
            Ran::Exited(status, output, false) => {
                let status_text = match &status {
                    Ok(s) => describe_status(*s),
                    Err(e) => format!("could not be waited for: {e}"),
                };
                let signalled = status.as_ref().is_ok_and(|s| s.code().is_none());
                if signalled {
                    Err(TransportError::Crash(status_text))
                } else {
                    match parse_tool_result(&output, &msg.tool_call_id) {
                        Ok(a) => Ok(a),
                        Err(e) if status.as_ref().is_ok_and(|s| !s.success()) => {
                            Err(TransportError::Crash(format!("{status_text}, and {e}")))
                        }
                        Err(e) => Err(TransportError::Protocol(e)),
                    }
                }
            }
        };
        Exchange { answer, stderr }
    }
}
