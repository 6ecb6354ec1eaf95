//! The `session` transport: long-lived executor processes, one JSON message
//! per line each way.
//!
//! Main type: [`Session`]. At start the runner spawns one process and does
//! the handshake: it writes its `HELLO`, the executor answers with its own
//! (protocol version, implementation, tools, unsupported tags, private
//! paths). A handshake that fails makes the executor unusable (exit code 3).
//! Each worker thread then borrows a process from a pool (spawning one, with
//! a handshake, when the pool is empty), writes one `TOOL_CALL` line and reads
//! one `TOOL_RESULT` line. A process that times out, crashes, sends an
//! invalid or unsolicited message is killed (whole group) and dropped; the
//! next call starts a fresh one. The number of processes over the run is
//! bounded by `jobs + max_restarts`; past that, calls fail with a `session`
//! error. At the end every live process gets `BYE` and is reaped. The
//! executor's cwd is the runner's; it must use `workspaceRoot`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Mutex;
use std::time::Duration;

use super::process::{describe_status, kill_group, spawn, Tail, STDOUT_LIMIT};
use super::{Exchange, Executor, ExecutorInfo, TransportError};
use crate::protocol::{
    check_hello, check_tool_result, single_value, ByeMsg, HelloMsg, Implementation, ProtocolError,
    ToolCallMsg, PROTOCOL_VERSION,
};

/// One line from the executor's stdout.
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    stderr: Tail,
}

impl Proc {
    fn kill(mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }

    fn send(&mut self, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.stdin.write_all(&line)?;
        self.stdin.flush()
    }

    fn recv(&mut self, timeout: Duration) -> Result<Line, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Why the process ended (after EOF on stdout).
    fn exit_status(&mut self) -> String {
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return describe_status(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "closed its stdout".into()
    }
}

/// Long-lived executor processes behind the session protocol.
pub struct Session {
    argv: Vec<String>,
    cwd: PathBuf,
    info: ExecutorInfo,
    pool: Mutex<Vec<Proc>>,
    spawned: AtomicUsize,
    max_processes: usize,
    handshake_timeout: Duration,
}

impl Session {
    /// Start the first process and do the handshake.
    pub fn start(
        argv: Vec<String>,
        cwd: &Path,
        jobs: usize,
        max_restarts: usize,
        handshake_timeout: Duration,
    ) -> Result<Session, TransportError> {
        let mut session = Session {
            argv: argv.clone(),
            cwd: cwd.to_path_buf(),
            info: ExecutorInfo {
                transport: "session",
                command: argv,
                ..ExecutorInfo::default()
            },
            pool: Mutex::new(Vec::new()),
            spawned: AtomicUsize::new(0),
            max_processes: jobs.max(1) + max_restarts,
            handshake_timeout,
        };
        let (proc, hello) = session.open()?;
        session.info.implementation = hello.implementation;
        session.info.tools = Some(hello.tools);
        session.info.unsupported_tags = hello.unsupported_tags;
        session.info.private_paths = hello.private_paths;
        session
            .pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(proc);
        Ok(session)
    }

    /// Add command-line declarations to what HELLO said.
    pub fn extend_info(&mut self, unsupported_tags: &[String], private_paths: &[String]) {
        self.info
            .unsupported_tags
            .extend_from_slice(unsupported_tags);
        self.info.private_paths.extend_from_slice(private_paths);
    }

    /// Spawn a process and shake hands.
    fn open(&self) -> Result<(Proc, HelloMsg), TransportError> {
        let n = self.spawned.fetch_add(1, Ordering::SeqCst);
        if n >= self.max_processes {
            return Err(TransportError::Session(format!(
                "the executor was started {n} times; restart bound reached, not restarted"
            )));
        }
        let mut child = spawn(&self.argv, &self.cwd).map_err(|e| {
            TransportError::Spawn(format!(
                "{:?}: {e}",
                self.argv.first().map(String::as_str).unwrap_or("")
            ))
        })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().map(Tail::drain).unwrap_or_default();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let read = (&mut reader)
                    .take(STDOUT_LIMIT as u64 + 1)
                    .read_until(b'\n', &mut buf);
                let line = match read {
                    Ok(0) | Err(_) => Line::Eof,
                    Ok(_) if buf.len() > STDOUT_LIMIT => Line::TooLong,
                    Ok(_) => Line::Text(buf),
                };
                let stop = !matches!(line, Line::Text(_));
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let mut proc = Proc {
            child,
            stdin,
            lines,
            stderr,
        };
        let hello = HelloMsg {
            kind: "HELLO".into(),
            protocol_version: PROTOCOL_VERSION,
            runner: Some(Implementation {
                name: "patchspec".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                language: Some("Rust".into()),
                homepage: None,
            }),
            ..HelloMsg::default()
        };
        let fail = |proc: Proc, why: String| {
            let stderr = proc.stderr.take();
            proc.kill();
            let tail = if stderr.trim().is_empty() {
                String::new()
            } else {
                format!("\nstderr:\n{}", stderr.trim_end())
            };
            Err(TransportError::Session(format!(
                "handshake failed: {why}{tail}"
            )))
        };
        if let Err(e) = proc.send(&hello) {
            return fail(proc, format!("could not write HELLO: {e}"));
        }
        let answer = match proc.recv(self.handshake_timeout) {
            Ok(Line::Text(text)) => text,
            Ok(Line::TooLong) => return fail(proc, "HELLO line too long".into()),
            Ok(Line::Eof) => {
                let status = proc.exit_status();
                return fail(
                    proc,
                    format!("the executor exited before answering HELLO ({status})"),
                );
            }
            Err(_) => {
                return fail(
                    proc,
                    format!(
                        "no HELLO within {:.1}s",
                        self.handshake_timeout.as_secs_f64()
                    ),
                )
            }
        };
        let value = match single_value(&answer) {
            Ok(v) => v,
            Err(e) => return fail(proc, e.to_string()),
        };
        match check_hello(&value) {
            Ok(h) => Ok((proc, h)),
            Err(e) => fail(proc, e),
        }
    }

    fn take(&self) -> Result<Proc, TransportError> {
        let pooled = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(p) => Ok(p),
            None => self.open().map(|(p, _)| p),
        }
    }

    fn give_back(&self, proc: Proc) {
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(proc);
    }
}

impl Executor for Session {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, msg: &ToolCallMsg, _workspace: &Path, timeout: Duration) -> Exchange {
        let mut proc = match self.take() {
            Ok(p) => p,
            Err(e) => {
                return Exchange {
                    answer: Err(e),
                    stderr: String::new(),
                }
            }
        };
        // Whatever the executor wrote before this call belongs to no call.
        let _ = proc.stderr.take();
        match proc.lines.try_recv() {
            Err(TryRecvError::Empty) => {}
            Ok(Line::Text(text)) => {
                let stderr = proc.stderr.take();
                proc.kill();
                let what = String::from_utf8_lossy(&text)
                    .trim_end()
                    .chars()
                    .take(200)
                    .collect::<String>();
                return Exchange { answer: Err(TransportError::Protocol(ProtocolError::BadShape(format!("unsolicited message before the call (an extra answer to the previous call?): {what}")))), stderr };
            }
            Ok(Line::Eof | Line::TooLong) | Err(TryRecvError::Disconnected) => {
                let status = proc.exit_status();
                let stderr = proc.stderr.take();
                proc.kill();
                return Exchange {
                    answer: Err(TransportError::Crash(format!(
                        "the executor had exited before the call ({status})"
                    ))),
                    stderr,
                };
            }
        }
        if let Err(e) = proc.send(msg) {
            let status = proc.exit_status();
            let stderr = proc.stderr.take();
            proc.kill();
            return Exchange {
                answer: Err(TransportError::Crash(format!(
                    "could not write the call ({e}); {status}"
                ))),
                stderr,
            };
        }
        let answer = match proc.recv(timeout) {
            Ok(Line::Text(text)) => single_value(&text)
                .and_then(|v| check_tool_result(&v, &msg.tool_call_id))
                .map_err(TransportError::Protocol),
            Ok(Line::TooLong) => Err(TransportError::Protocol(ProtocolError::TooLarge(
                STDOUT_LIMIT,
            ))),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                Err(TransportError::Crash(proc.exit_status()))
            }
            Err(RecvTimeoutError::Timeout) => Err(TransportError::Timeout(timeout)),
        };
        let answer = match answer {
            Ok(a) => {
                // Let stderr written with the answer arrive, and catch a
                // second message written together with the first.
                std::thread::sleep(Duration::from_millis(1));
                match proc.lines.try_recv() {
                    Ok(Line::Text(_) | Line::TooLong) => {
                        Err(TransportError::Protocol(ProtocolError::TwoMessages))
                    }
                    Ok(Line::Eof) | Err(TryRecvError::Empty | TryRecvError::Disconnected) => Ok(a),
                }
            }
            Err(e) => Err(e),
        };
        let stderr = proc.stderr.take();
        match answer {
            Ok(a) => {
                self.give_back(proc);
                Exchange {
                    answer: Ok(a),
                    stderr,
                }
            }
            Err(e) => {
                proc.kill();
                Exchange {
                    answer: Err(e),
                    stderr,
                }
            }
        }
    }

    fn finish(&self) {
        let procs = std::mem::take(&mut *self.pool.lock().unwrap_or_else(|p| p.into_inner()));
        for mut proc in procs {
            let _ = proc.send(&ByeMsg::new());
            let reaped = (0..200).any(|_| {
                if matches!(proc.child.try_wait(), Ok(Some(_))) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(10));
                false
            });
            if !reaped {
                proc.kill();
            } else {
                kill_group(proc.child.id());
            }
        }
    }
}
