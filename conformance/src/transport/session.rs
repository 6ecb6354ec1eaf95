//! The `session` transport: long-lived executor processes, one JSON message
//! per line each way.
//!
//! Main type: [`Session`]. At start the runner spawns one process and does
//! the handshake: it writes its `HELLO`, the executor answers with its own
//! (protocol version, implementation, tools, unsupported tags, private
//! paths). A handshake that fails makes the executor unusable (exit code 3).
//! Each worker thread then borrows a process from a pool (spawning one, with
//! a handshake, when the pool is empty), writes one `TOOL_CALL` line and reads
//! one `TOOL_RESULT` line. A process that times out, crashes or sends an
//! invalid message is killed (whole group) and dropped; the next call starts
//! a fresh one. The number of processes over the run is bounded by
//! `jobs + max_restarts`; past that, calls fail with a `session` error. At
//! the end every live process gets `BYE` and is reaped. The executor's cwd is
//! the runner's; it must use `workspaceRoot`. Its TMPDIR and HOME are the
//! per-run root's `exec/` directories.
//!
//! Attribution of extra output: a reader thread per process hands over, in
//! one batch, every complete line one read of its stdout produced. Lines in
//! the same batch as an answer were sent with it: that call gets a
//! `protocol` error. Anything the process writes later — a line before the
//! next call, the previous call's `toolCallId` while the next call waits,
//! output after `BYE`, or exiting between calls — is blamed on the call it
//! last answered, as a [`LateBlame`] (that call's outcome becomes `error`
//! even if it had passed); the next call then runs on a fresh process, or,
//! for a late duplicate answer, keeps waiting for its own.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::process::{describe_status, kill_group, spawn, Tail, STDOUT_LIMIT};
use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, LateBlame, TransportError};
use crate::protocol::{
    check_hello, check_tool_result, runner_hello, single_value, ByeMsg, HelloMsg, ProtocolError,
    ToolCallMsg,
};
use crate::workspace::ExecEnv;

/// One line from the executor's stdout.
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// The first 200 characters of a line, for messages.
fn preview(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .trim_end()
        .chars()
        .take(200)
        .collect()
}

/// Read `stdout` on a thread; every read's complete lines go over the
/// channel as one batch (never empty). Whitespace-only lines are dropped.
fn read_lines(mut stdout: impl Read + Send + 'static) -> Receiver<Vec<Line>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut pending: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = stdout.read(&mut buf).unwrap_or(0);
            let mut batch = Vec::new();
            if n == 0 {
                if !pending.iter().all(u8::is_ascii_whitespace) {
                    batch.push(Line::Text(std::mem::take(&mut pending)));
                }
                batch.push(Line::Eof);
                let _ = tx.send(batch);
                return;
            }
            pending.extend_from_slice(&buf[..n]);
            let mut start = 0;
            while let Some(i) = pending[start..].iter().position(|&b| b == b'\n') {
                let line = &pending[start..start + i];
                if !line.iter().all(u8::is_ascii_whitespace) {
                    batch.push(Line::Text(line.to_vec()));
                }
                start += i + 1;
            }
            pending.drain(..start);
            let over = pending.len() > STDOUT_LIMIT;
            if over {
                batch.push(Line::TooLong);
            }
            if (!batch.is_empty() && tx.send(batch).is_err()) || over {
                return;
            }
        }
    });
    rx
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    batches: Receiver<Vec<Line>>,
    /// Lines received and not yet consumed, in order.
    queue: VecDeque<Line>,
    stderr: Tail,
    /// The call this process last answered: later output is that call's.
    last: Option<String>,
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

    /// The next line, waiting at most `timeout` for one.
    fn next(&mut self, timeout: Duration) -> Result<Line, RecvTimeoutError> {
        if let Some(line) = self.queue.pop_front() {
            return Ok(line);
        }
        let batch = self.batches.recv_timeout(timeout)?;
        self.queue.extend(batch);
        self.queue.pop_front().ok_or(RecvTimeoutError::Timeout)
    }

    /// Queue every batch already received, without waiting.
    fn drain(&mut self) {
        while let Ok(batch) = self.batches.try_recv() {
            self.queue.extend(batch);
        }
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

/// `data.toolCallId` of a message, if it has one.
fn result_id(value: &Value) -> Option<&str> {
    value.get("data")?.get("toolCallId")?.as_str()
}

/// Long-lived executor processes behind the session protocol.
pub struct Session {
    argv: Vec<String>,
    cwd: PathBuf,
    env: ExecEnv,
    info: ExecutorInfo,
    pool: Mutex<Vec<Proc>>,
    spawned: AtomicUsize,
    max_processes: usize,
    handshake_timeout: Duration,
    late: Mutex<Vec<LateBlame>>,
}

impl Session {
    /// Start the first process and do the handshake.
    pub fn start(
        argv: Vec<String>,
        cwd: &Path,
        env: ExecEnv,
        jobs: usize,
        max_restarts: usize,
        handshake_timeout: Duration,
    ) -> Result<Session, TransportError> {
        let mut session = Session {
            argv: argv.clone(),
            cwd: cwd.to_path_buf(),
            env,
            info: ExecutorInfo {
                transport: "session",
                command: argv,
                declared_by: Declaration::Hello,
                ..ExecutorInfo::default()
            },
            pool: Mutex::new(Vec::new()),
            spawned: AtomicUsize::new(0),
            max_processes: jobs.max(1) + max_restarts,
            handshake_timeout,
            late: Mutex::new(Vec::new()),
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
        let mut child = spawn(&self.argv, &self.cwd, &self.env).map_err(|e| {
            TransportError::Spawn(format!(
                "{:?}: {e}",
                self.argv.first().map(String::as_str).unwrap_or("")
            ))
        })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().map(Tail::drain).unwrap_or_default();
        let mut proc = Proc {
            child,
            stdin,
            batches: read_lines(stdout),
            queue: VecDeque::new(),
            stderr,
            last: None,
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
        if let Err(e) = proc.send(&runner_hello()) {
            return fail(proc, format!("could not write HELLO: {e}"));
        }
        let answer = match proc.next(self.handshake_timeout) {
            Ok(Line::Text(text)) => text,
            Ok(Line::TooLong) => return fail(proc, "HELLO line too long".into()),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                let status = proc.exit_status();
                return fail(
                    proc,
                    format!("the executor exited before answering HELLO ({status})"),
                );
            }
            Err(RecvTimeoutError::Timeout) => {
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

    fn blame_late(&self, tool_call_id: String, error: TransportError) {
        self.late
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(LateBlame {
                tool_call_id,
                error,
            });
    }

    /// A pooled (or new) process with nothing pending. Output a pooled
    /// process wrote since its last answer is blamed on that answer's call,
    /// and the process is replaced.
    fn take(&self) -> Result<Proc, Box<Exchange>> {
        loop {
            let pooled = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let mut proc = match pooled {
                Some(p) => p,
                None => {
                    return self.open().map(|(p, _)| p).map_err(|e| {
                        Box::new(Exchange {
                            answer: Err(e),
                            stderr: String::new(),
                        })
                    })
                }
            };
            proc.drain();
            // A process that exited since its last answer: collect its last
            // output up to EOF (bounded), so it is judged in order below.
            if matches!(proc.child.try_wait(), Ok(Some(_))) {
                let ended = |q: &VecDeque<Line>| q.iter().any(|l| matches!(l, Line::Eof));
                let deadline = Instant::now() + Duration::from_secs(1);
                while !ended(&proc.queue) {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match proc.batches.recv_timeout(left) {
                        Ok(batch) => proc.queue.extend(batch),
                        Err(_) => break,
                    }
                }
                if !ended(&proc.queue) {
                    proc.queue.push_back(Line::Eof);
                }
            }
            let Some(line) = proc.queue.pop_front() else {
                return Ok(proc);
            };
            let answered = proc.last.is_some();
            let error = match line {
                Line::Text(text) if answered => {
                    TransportError::Protocol(ProtocolError::AfterAnswer(preview(&text)))
                }
                Line::Text(text) => TransportError::Protocol(ProtocolError::BadShape(format!(
                    "unsolicited message before the first call: {}",
                    preview(&text)
                ))),
                Line::TooLong => TransportError::Protocol(ProtocolError::TooLarge(STDOUT_LIMIT)),
                Line::Eof => {
                    let status = proc.exit_status();
                    let when = if answered {
                        "after answering, before BYE"
                    } else {
                        "before the call"
                    };
                    TransportError::Crash(format!("the executor exited {when} ({status})"))
                }
            };
            match proc.last.take() {
                Some(id) => {
                    self.blame_late(id, error);
                    proc.kill();
                }
                None => {
                    // A fresh process speaking (or dying) before any call: this call's.
                    let stderr = proc.stderr.take();
                    proc.kill();
                    return Err(Box::new(Exchange {
                        answer: Err(error),
                        stderr,
                    }));
                }
            }
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

    fn call(&self, msg: &ToolCallMsg, _dirs: &CallDirs<'_>, timeout: Duration) -> Exchange {
        let mut proc = match self.take() {
            Ok(p) => p,
            Err(exchange) => return *exchange,
        };
        // Whatever the executor wrote before this call belongs to no call.
        let _ = proc.stderr.take();
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
        let deadline = Instant::now() + timeout;
        let answer = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match proc.next(left) {
                Ok(Line::Text(text)) => {
                    let value = match single_value(&text) {
                        Ok(v) => v,
                        Err(e) => break Err(TransportError::Protocol(e)),
                    };
                    // The previous call's id again: a late duplicate, that
                    // call's; this call's own answer may still come.
                    let previous = proc.last.as_deref();
                    if previous.is_some() && result_id(&value) == previous {
                        let id = proc.last.clone().unwrap_or_default();
                        self.blame_late(
                            id,
                            TransportError::Protocol(ProtocolError::AfterAnswer(preview(&text))),
                        );
                        continue;
                    }
                    break check_tool_result(&value, &msg.tool_call_id)
                        .map_err(TransportError::Protocol);
                }
                Ok(Line::TooLong) => {
                    break Err(TransportError::Protocol(ProtocolError::TooLarge(
                        STDOUT_LIMIT,
                    )))
                }
                Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    break Err(TransportError::Crash(proc.exit_status()))
                }
                Err(RecvTimeoutError::Timeout) => break Err(TransportError::Timeout(timeout)),
            }
        };
        // Lines that came in the same read as the answer were sent with it.
        let sent_with = proc
            .queue
            .iter()
            .any(|l| matches!(l, Line::Text(_) | Line::TooLong));
        let answer = match answer {
            Ok(_) if sent_with => Err(TransportError::Protocol(ProtocolError::TwoMessages)),
            other => other,
        };
        let stderr = proc.stderr.take();
        match answer {
            Ok(a) => {
                proc.last = Some(msg.tool_call_id.clone());
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
            // Read to the end (bounded): anything before EOF came after the
            // last answer, so it is that call's.
            let deadline = Instant::now() + Duration::from_secs(2);
            let mut extra = None;
            let ended = loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match proc.next(left) {
                    Ok(Line::Text(text)) => {
                        extra.get_or_insert_with(|| preview(&text));
                    }
                    Ok(Line::TooLong) => {
                        extra.get_or_insert_with(|| {
                            format!("a line over the {STDOUT_LIMIT}-byte bound")
                        });
                    }
                    Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => break true,
                    Err(RecvTimeoutError::Timeout) => break false,
                }
            };
            if let (Some(why), Some(id)) = (extra, proc.last.take()) {
                self.blame_late(
                    id,
                    TransportError::Protocol(ProtocolError::AfterAnswer(why)),
                );
            }
            let reaped = ended
                && (0..100).any(|_| {
                    if matches!(proc.child.try_wait(), Ok(Some(_))) {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                    false
                });
            if reaped {
                kill_group(proc.child.id());
            } else {
                proc.kill();
            }
        }
    }

    fn late_blames(&self) -> Vec<LateBlame> {
        std::mem::take(&mut *self.late.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
