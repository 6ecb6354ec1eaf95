//! The `oneshot` transport: one process per call.
//!
//! The executor's argv is run with no shell, in a new process group, with
//! cwd = the workspace. The runner writes one `TOOL_CALL` (one line) on stdin
//! and closes it; the executor writes one `TOOL_RESULT` on stdout and exits.
//! On timeout the whole group is killed; after a normal exit the group is
//! killed too, so leftover children cannot hold stdout open. A valid message
//! is accepted whatever the exit code, unless the process was killed by a
//! signal (a crash). Nothing is declared by the executor unless it answers a
//! `HELLO` probe ([`super::oneshot_hello`], `check --hello`, `matrix`): skips and
//! private paths otherwise come from the command line (`--skip-tool`,
//! `--skip-tag`, `--ignore-path`).

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use super::process::{describe_status, kill_group, read_bounded, read_tail, spawn, STDOUT_LIMIT};
use super::{Exchange, Executor, ExecutorInfo, TransportError};
use crate::protocol::{parse_tool_result, Implementation, ProtocolError, ToolCallMsg};

/// One process per call.
#[derive(Clone, Debug)]
pub struct Oneshot {
    info: ExecutorInfo,
}

impl Oneshot {
    /// An executor run as `argv` (already resolved against the runner's cwd).
    pub fn new(
        argv: Vec<String>,
        tools: Option<Vec<String>>,
        unsupported_tags: Vec<String>,
        private_paths: Vec<String>,
    ) -> Oneshot {
        Oneshot {
            info: ExecutorInfo {
                transport: "oneshot",
                command: argv,
                implementation: None,
                tools,
                unsupported_tags,
                private_paths,
            },
        }
    }
}

impl Oneshot {
    /// The same executor, known as `implementation` (from a `HELLO` probe).
    pub fn with_implementation(mut self, implementation: Option<Implementation>) -> Oneshot {
        self.info.implementation = implementation;
        self
    }
}

impl Executor for Oneshot {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, msg: &ToolCallMsg, workspace: &Path, timeout: Duration) -> Exchange {
        let mut line = serde_json::to_vec(msg).expect("a ToolCallMsg always serialises");
        line.push(b'\n');
        let mut child = match spawn(&self.info.command, workspace) {
            Ok(c) => c,
            Err(e) => {
                return Exchange {
                    answer: Err(TransportError::Spawn(format!(
                        "{:?}: {e}",
                        self.info.command.first().map(String::as_str).unwrap_or("")
                    ))),
                    stderr: String::new(),
                }
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
                let _ = stdin.write_all(&line);
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
                return Exchange {
                    answer: Err(TransportError::Timeout(timeout)),
                    stderr: stderr(),
                };
            }
        };
        let (output, over) = match out_rx.recv_timeout(Duration::from_secs(5)) {
            Ok(read) => read,
            Err(_) => {
                return Exchange {
                    answer: Err(TransportError::Crash(
                        "stdout was held open after exit by a process outside the group".into(),
                    )),
                    stderr: stderr(),
                }
            }
        };
        let status_text = match &status {
            Ok(s) => describe_status(*s),
            Err(e) => format!("could not be waited for: {e}"),
        };
        let signalled = status.as_ref().is_ok_and(|s| s.code().is_none());
        let answer = if over {
            Err(TransportError::Protocol(ProtocolError::TooLarge(
                STDOUT_LIMIT,
            )))
        } else if signalled {
            Err(TransportError::Crash(status_text))
        } else {
            match parse_tool_result(&output, &msg.tool_call_id) {
                Ok(a) => Ok(a),
                Err(e) if status.as_ref().is_ok_and(|s| !s.success()) => {
                    Err(TransportError::Crash(format!("{status_text}, and {e}")))
                }
                Err(e) => Err(TransportError::Protocol(e)),
            }
        };
        Exchange {
            answer,
            stderr: stderr(),
        }
    }
}
