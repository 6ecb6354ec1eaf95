//! The `websocket` transport: the runner is the *backend* of
//! websocket-tool-protocol.md and the executor is the IDE plugin, over a real
//! WebSocket.
//!
//! Main type: [`WebSocket`], an [`Executor`] whose `call` is synchronous like
//! every other transport's. Inside, a tokio runtime owns the loopback
//! listener and the plugin's connection; the runner's worker threads hand it
//! `TOOL_CALL`s and wait on std channels, so every call of a `-j N` run is in
//! flight at once over the one connection. This module and
//! [`super::websocket_plugin`] are the only async code in the crate.
//!
//! What it checks, per message from the plugin (docs/protocol.md, "Transport
//! `websocket`"):
//! - a `TOOL_RESULT` keeps its fields inside `data`; fields at the root (the
//!   layering mistake the spec warns about twice) are a `protocol` error of
//!   the call whose id they carry;
//! - `data.toolCallId` names a pending call; anything else is logged the way
//!   the spec's backend logs it (`⚠️ 未找到对应的工具调用: toolCallId={id}`)
//!   and, like any message that names no call (not JSON, binary, no id), is
//!   blamed on the one call pending when it arrived if exactly one is, and
//!   otherwise on no case: it is a run-level protocol error that fails the
//!   run ([`Executor::run_errors`]), so innocent calls in flight never error;
//! - one answer per call: a second result sent with the first (received in
//!   the same burst: already there when the first is handled) makes the call
//!   a `protocol` error; a later one is blamed on the call it answers again
//!   ([`Executor::late_blames`]: that case becomes an error even if it had
//!   passed); a late answer to a call that timed out or was abandoned is only
//!   logged;
//! - the per-call timeout (`timeout`), and a disconnect with calls pending
//!   (`crash`). The plugin may reconnect: calls wait for a connection for at
//!   most `connect_timeout`, and a plugin the runner started that exits is
//!   restarted at most `max_restarts` times.
//!
//! Declaration: on every connection the runner first sends its `HELLO`. A
//! plugin may answer with its own `HELLO` (implementation, tools,
//! unsupported tags, private paths) before anything else; the runner waits
//! [`HELLO_WAIT`] for it after the first connection (not for the reference
//! plugin it starts itself, whose declaration it knows). A plugin of the
//! plain spec ignores a message type it does not know and declares nothing.
//!
//! What it leaves out: TLS (`ws://` on loopback only), several plugins at
//! once (a new connection replaces the old one), and attributing a plugin's
//! stderr to one call (calls overlap): errors carry the tail seen so far.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::{FutureExt, SinkExt, StreamExt};
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc as amsc;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};

use super::process::{describe_status, kill_group, Tail, STDOUT_LIMIT};
use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, LateBlame, TransportError};
use crate::protocol::{
    check_hello, check_tool_result, runner_hello, HelloMsg, Implementation, ProtocolError,
    ToolAnswer, ToolCallMsg,
};
use crate::workspace::ExecEnv;

/// The path a plugin connects to (websocket-tool-protocol.md, "Testing").
pub const PATH: &str = "/ws/agent/chat";
/// The environment variable that hands a started plugin the URL to connect to.
pub const URL_ENV: &str = "PATCHSPEC_WS_URL";
/// In a plugin's argv, this text is replaced by the URL to connect to.
pub const URL_PLACEHOLDER: &str = "{url}";
/// The tools of websocket-tool-protocol.md: their calls also carry
/// `projectKey` and `webSocketSessionId` inside `params`, as the spec's
/// backend sends them. Other tools' params are exactly the case's `call`.
pub const IDE_TOOLS: &[&str] = &["read_file", "grep_file", "apply_change", "call_chain"];
/// How long a connecting plugin has for the HTTP upgrade.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the runner waits, after the first connection, for a plugin's
/// optional `HELLO` (a plugin that answers does so at once; one that does
/// not costs this once per run).
pub const HELLO_WAIT: Duration = Duration::from_secs(2);

/// The frame and message bounds of both ends: the same 16 MiB as a line of
/// the session transport.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(STDOUT_LIMIT))
        .max_frame_size(Some(STDOUT_LIMIT))
}

/// The backend's log line for a result whose id matches no pending call.
pub fn unknown_id_log(id: &str) -> String {
    format!("⚠️ 未找到对应的工具调用: toolCallId={id}")
}

/// Which plugin the runner talks to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plugin {
    /// The reference plugin, `<this binary> exec --connect URL`, started by the runner.
    Reference,
    /// A plugin started by the runner: argv with [`URL_PLACEHOLDER`]s, and [`URL_ENV`] set.
    Command(Vec<String>),
    /// Nothing is started: wait for a plugin to connect (one inside an IDE).
    External,
}

/// How to set the transport up.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where to listen (`127.0.0.1:0`: any free loopback port).
    pub listen: SocketAddr,
    /// The plugin.
    pub plugin: Plugin,
    /// How long to wait for the plugin to connect, at the start and after a disconnect.
    pub connect_timeout: Duration,
    /// How many times a started plugin that exited is started again.
    pub max_restarts: usize,
    /// Extra implementation-private path globs (`--ignore-path`).
    pub private_paths: Vec<String>,
    /// The `projectKey` in the URL handed to a started plugin.
    pub project_key: String,
    /// TMPDIR and HOME of a plugin the runner starts.
    pub env: ExecEnv,
}

/// What a plugin connected with (the URL's query).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Routing {
    session_id: String,
    project_key: String,
}

/// The live connection, as the callers see it.
#[derive(Clone, Debug)]
struct Conn {
    id: u64,
    out: amsc::UnboundedSender<Message>,
    routing: Routing,
}

/// How a call ended, for classifying late messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Finished {
    Answered,
    TimedOut,
    Abandoned,
    Errored,
}

struct Pending {
    conn: u64,
    tx: mpsc::Sender<Result<ToolAnswer, TransportError>>,
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    next_conn: u64,
    live_conns: usize,
    pending: HashMap<String, Pending>,
    finished: HashMap<String, Finished>,
    /// Violations no call can be blamed for.
    run_errors: Vec<String>,
    /// Violations blamed on calls that had already returned.
    late: Vec<LateBlame>,
    /// The plugin's first `HELLO`.
    hello: Option<HelloMsg>,
    last_rejection: Option<String>,
    closing: bool,
    /// The plugin stayed away for a whole connect timeout: fail fast until it is back.
    gave_up: bool,
}

impl State {
    fn resolve(&mut self, id: &str, answer: Result<ToolAnswer, TransportError>) {
        if let Some(p) = self.pending.remove(id) {
            let how = match &answer {
                Ok(_) => Finished::Answered,
                Err(TransportError::Crash(_)) => Finished::Abandoned,
                Err(_) => Finished::Errored,
            };
            self.finished.insert(id.to_owned(), how);
            // The caller may have given up already; nothing to do then.
            let _ = p.tx.send(answer);
        }
    }

    /// A violation that names no call: the one pending call's when exactly
    /// one is pending, else a run-level error (blamed on no case).
    fn blame(&mut self, why: &str) {
        if self.pending.len() == 1 {
            let id = self.pending.keys().next().cloned().unwrap_or_default();
            let e =
                ProtocolError::BadShape(format!("{why} (the only call pending when it arrived)"));
            self.resolve(&id, Err(TransportError::Protocol(e)));
            return;
        }
        let when = if self.pending.is_empty() {
            "while no call was pending".to_owned()
        } else {
            format!("while {} calls were pending", self.pending.len())
        };
        log(&format!("{why} ({when}: blamed on no case, fails the run)"));
        self.run_errors.push(format!("{why} ({when})"));
    }
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn log(line: &str) {
    crate::output::eprintln_quietly(format_args!("patchspec websocket: {line}"));
}

/// A plugin process the runner started.
struct PluginProc {
    child: Child,
    _stdin: Option<ChildStdin>,
}

/// The runner as the backend of the websocket tool protocol.
pub struct WebSocket {
    info: ExecutorInfo,
    env: ExecEnv,
    url: String,
    shared: Arc<Shared>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    argv: Option<Vec<String>>,
    child: Mutex<Option<PluginProc>>,
    spawned: Mutex<usize>,
    max_processes: usize,
    connect_timeout: Duration,
    stderr: Mutex<Tail>,
}

impl WebSocket {
    /// Listen, start the plugin (unless [`Plugin::External`]) and wait for it
    /// to connect. Errors make the executor unusable (exit code 3).
    pub fn start(opts: Options) -> Result<WebSocket, TransportError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("patchspec-websocket")
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| TransportError::Spawn(format!("cannot start the async runtime: {e}")))?;
        let listener = runtime
            .block_on(TcpListener::bind(opts.listen))
            .map_err(|e| TransportError::Spawn(format!("cannot listen on {}: {e}", opts.listen)))?;
        let addr = listener.local_addr().map_err(|e| {
            TransportError::Spawn(format!("cannot read the listening address: {e}"))
        })?;
        let session_id = format!(
            "patchspec-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0)
        );
        let url = format!(
            "ws://{addr}{PATH}?sessionId={session_id}&projectKey={}",
            encode(&opts.project_key)
        );
        let reference = opts.plugin == Plugin::Reference;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        runtime.spawn(accept_loop(listener, shared.clone()));

        let mut private_paths = Vec::new();
        let mut implementation: Option<Implementation> = None;
        let mut tools = None;
        let argv = match &opts.plugin {
            Plugin::Reference => {
                let exe = std::env::current_exe().map_err(|e| {
                    TransportError::Spawn(format!(
                        "cannot find this binary to start the reference plugin: {e}"
                    ))
                })?;
                implementation = Some(super::inprocess::implementation());
                tools = Some(
                    patchspec_engine::dispatch::SUPPORTED_TOOLS
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                );
                private_paths.extend(
                    crate::engine_call::PRIVATE_PATHS
                        .iter()
                        .map(|s| s.to_string()),
                );
                Some(vec![
                    exe.to_string_lossy().into_owned(),
                    "exec".into(),
                    "--connect".into(),
                    URL_PLACEHOLDER.into(),
                ])
            }
            Plugin::Command(argv) => Some(argv.clone()),
            Plugin::External => None,
        };
        let argv = argv.map(|a| {
            a.iter()
                .map(|s| s.replace(URL_PLACEHOLDER, &url))
                .collect::<Vec<_>>()
        });
        let mut ws = WebSocket {
            info: ExecutorInfo {
                transport: "websocket",
                command: argv.clone().unwrap_or_default(),
                implementation,
                tools,
                unsupported_tags: Vec::new(),
                private_paths,
                declared_by: Declaration::BuiltIn,
            },
            env: opts.env.clone(),
            url,
            shared,
            runtime: Mutex::new(Some(runtime)),
            argv,
            child: Mutex::new(None),
            spawned: Mutex::new(0),
            max_processes: 1 + opts.max_restarts,
            connect_timeout: opts.connect_timeout,
            stderr: Mutex::new(Tail::default()),
        };
        if ws.argv.is_none() {
            log(&format!(
                "waiting up to {:.1}s for a plugin to connect to {}",
                opts.connect_timeout.as_secs_f64(),
                ws.url
            ));
        }
        ws.connection(false).map_err(|e| match e {
            TransportError::Session(m) => {
                TransportError::Session(format!("{m}{}", ws.stderr_note()))
            }
            other => other,
        })?;
        if !reference {
            match ws.await_hello() {
                Some(h) => {
                    ws.info.implementation = h.implementation;
                    ws.info.tools = Some(h.tools);
                    ws.info.unsupported_tags = h.unsupported_tags;
                    ws.info.private_paths = h.private_paths;
                    ws.info.declared_by = Declaration::Hello;
                }
                None => {
                    ws.info.declared_by = Declaration::Missing(format!(
                        "the plugin did not answer the runner's HELLO within {:.1}s",
                        HELLO_WAIT.as_secs_f64()
                    ))
                }
            }
        }
        ws.info.private_paths.extend(opts.private_paths);
        Ok(ws)
    }

    /// The plugin's `HELLO`, waiting at most [`HELLO_WAIT`] for it.
    fn await_hello(&self) -> Option<HelloMsg> {
        let deadline = Instant::now() + HELLO_WAIT;
        let mut st = self.shared.lock();
        loop {
            if st.hello.is_some() {
                return st.hello.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            st = match self.shared.changed.wait_timeout(st, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// The URL plugins connect to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn take_stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn stderr_note(&self) -> String {
        let tail = self.take_stderr();
        if tail.trim().is_empty() {
            String::new()
        } else {
            format!("\nplugin stderr:\n{}", tail.trim_end())
        }
    }

    fn spawn_plugin(&self, argv: &[String]) -> Result<(), TransportError> {
        let mut spawned = self.spawned.lock().unwrap_or_else(|p| p.into_inner());
        if *spawned >= self.max_processes {
            return Err(TransportError::Session(format!(
                "the plugin was started {} time(s); restart bound reached, not restarted",
                *spawned
            )));
        }
        *spawned += 1;
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| TransportError::Spawn("empty plugin command".into()))?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env(URL_ENV, &self.url)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        self.env.apply(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| TransportError::Spawn(format!("{program:?}: {e}")))?;
        // stdout is not part of this transport: drained and dropped.
        if let Some(mut out) = child.stdout.take() {
            std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        }
        if let Some(err) = child.stderr.take() {
            *self.stderr.lock().unwrap_or_else(|p| p.into_inner()) = Tail::drain(err);
        }
        let stdin = child.stdin.take();
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(PluginProc {
            child,
            _stdin: stdin,
        });
        Ok(())
    }

    /// Has the started plugin exited? Then its status.
    fn plugin_exited(&self) -> Option<String> {
        let mut guard = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let proc = guard.as_mut()?;
        match proc.child.try_wait() {
            Ok(Some(status)) => {
                kill_group(proc.child.id());
                *guard = None;
                Some(describe_status(status))
            }
            Ok(None) => None,
            Err(e) => Some(format!("could not be waited for: {e}")),
        }
    }

    /// The live connection, waiting (bounded) for the plugin to (re)connect
    /// and (re)starting a plugin the runner manages.
    fn connection(&self, restart: bool) -> Result<Conn, TransportError> {
        let mut deadline = Instant::now() + self.connect_timeout;
        let mut exited: Option<String> = None;
        loop {
            {
                let st = self.shared.lock();
                if let Some(c) = &st.conn {
                    return Ok(c.clone());
                }
                if st.closing {
                    return Err(TransportError::Session("the run is over".into()));
                }
                if st.gave_up {
                    return Err(TransportError::Session(format!(
                        "no plugin connected to {} within {:.1}s; not waiting again until one does",
                        self.url,
                        self.connect_timeout.as_secs_f64()
                    )));
                }
            }
            if let Some(argv) = &self.argv {
                if let Some(status) = self.plugin_exited() {
                    if !restart {
                        return Err(TransportError::Session(format!(
                            "the plugin exited before connecting ({status})"
                        )));
                    }
                    exited = Some(status);
                }
                let running = self
                    .child
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_some();
                if !running {
                    self.spawn_plugin(argv).map_err(|e| match (e, &exited) {
                        (TransportError::Session(m), Some(s)) => {
                            TransportError::Session(format!("the plugin exited ({s}); {m}"))
                        }
                        (e, _) => e,
                    })?;
                    deadline = Instant::now() + self.connect_timeout;
                }
            }
            let now = Instant::now();
            if now >= deadline {
                let mut st = self.shared.lock();
                if st.conn.is_some() {
                    continue;
                }
                st.gave_up = true;
                let rejected = st
                    .last_rejection
                    .as_ref()
                    .map(|r| format!("; the last connection was rejected: {r}"))
                    .unwrap_or_default();
                let exited = exited
                    .as_ref()
                    .map(|s| format!("; the plugin exited ({s})"))
                    .unwrap_or_default();
                return Err(TransportError::Session(format!(
                    "no plugin connected to {} within {:.1}s{exited}{rejected}",
                    self.url,
                    self.connect_timeout.as_secs_f64()
                )));
            }
            let st = self.shared.lock();
            if st.conn.is_none() && !st.closing {
                // Short slices: a started plugin that exits is noticed quickly.
                let slice = (deadline - now).min(Duration::from_millis(50));
                let _ = self.shared.changed.wait_timeout(st, slice);
            }
        }
    }

    /// The call as it goes on the wire to this connection.
    fn wire(&self, msg: &ToolCallMsg, routing: &Routing) -> ToolCallMsg {
        let mut wire = msg.clone();
        wire.web_socket_session_id = routing.session_id.clone();
        if IDE_TOOLS.contains(&msg.tool_name.as_str()) {
            if let Value::Object(params) = &mut wire.params {
                params
                    .entry("projectKey")
                    .or_insert_with(|| Value::String(routing.project_key.clone()));
                params
                    .entry("webSocketSessionId")
                    .or_insert_with(|| Value::String(routing.session_id.clone()));
            }
        }
        wire
    }

    fn exchange(&self, msg: &ToolCallMsg, timeout: Duration) -> Result<ToolAnswer, TransportError> {
        let (tx, rx) = mpsc::channel();
        let id = msg.tool_call_id.clone();
        loop {
            let conn = self.connection(true)?;
            let text = serde_json::to_string(&self.wire(msg, &conn.routing))
                .expect("a ToolCallMsg always serialises");
            let mut st = self.shared.lock();
            if st.conn.as_ref().map(|c| c.id) != Some(conn.id) {
                // It went away between the two locks: wait for the next one.
                continue;
            }
            st.pending.insert(
                id.clone(),
                Pending {
                    conn: conn.id,
                    tx: tx.clone(),
                },
            );
            if conn.out.send(Message::text(text)).is_err() {
                st.pending.remove(&id);
                return Err(TransportError::Crash(
                    "the plugin disconnected before the call could be sent".into(),
                ));
            }
            break;
        }
        match rx.recv_timeout(timeout) {
            Ok(answer) => answer,
            Err(_) => {
                let mut st = self.shared.lock();
                if st.pending.remove(&id).is_some() {
                    st.finished.insert(id, Finished::TimedOut);
                    Err(TransportError::Timeout(timeout))
                } else {
                    // Resolved between the timeout and the lock.
                    rx.try_recv()
                        .unwrap_or(Err(TransportError::Timeout(timeout)))
                }
            }
        }
    }
}

impl Executor for WebSocket {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, msg: &ToolCallMsg, _dirs: &CallDirs<'_>, timeout: Duration) -> Exchange {
        let answer = self.exchange(msg, timeout);
        // Calls overlap, so the plugin's stderr belongs to no single call:
        // errors carry what was written since the last error.
        let stderr = if answer.is_err() {
            self.take_stderr()
        } else {
            String::new()
        };
        Exchange { answer, stderr }
    }

    fn late_blames(&self) -> Vec<LateBlame> {
        self.drain_late()
    }

    fn run_errors(&self) -> Vec<String> {
        self.drain_run_errors()
    }

    fn finish(&self) {
        let conn = {
            let mut st = self.shared.lock();
            st.closing = true;
            self.shared.changed.notify_all();
            st.conn.take()
        };
        if let Some(conn) = conn {
            let _ = conn.out.send(Message::Close(Some(CloseFrame {
                code: CloseCode::Normal,
                reason: "the run is over".into(),
            })));
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        {
            let mut st = self.shared.lock();
            while st.live_conns > 0 && Instant::now() < deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                st = match self.shared.changed.wait_timeout(st, left) {
                    Ok((g, _)) => g,
                    Err(p) => p.into_inner().0,
                };
            }
        }
        if let Some(mut proc) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let reaped = (0..200).any(|_| {
                if matches!(proc.child.try_wait(), Ok(Some(_))) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(10));
                false
            });
            kill_group(proc.child.id());
            if !reaped {
                let _ = proc.child.wait();
            }
        }
        if let Some(rt) = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            rt.shutdown_timeout(Duration::from_millis(500));
        }
    }
}

impl WebSocket {
    fn drain_late(&self) -> Vec<LateBlame> {
        std::mem::take(&mut self.shared.lock().late)
    }

    fn drain_run_errors(&self) -> Vec<String> {
        std::mem::take(&mut self.shared.lock().run_errors)
    }
}

impl Drop for WebSocket {
    fn drop(&mut self) {
        if let Some(mut proc) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            kill_group(proc.child.id());
            let _ = proc.child.wait();
        }
    }
}

/// Decode a query component as a form does: `+` is a space, `%XX` (two hex
/// digits) a byte; a `%` not followed by two hex digits stays as it is (so
/// `%+1` is the three characters it reads), and bytes that are not UTF-8
/// become U+FFFD.
fn decode(text: &str) -> String {
    percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

/// Every byte but the unreserved characters of RFC 3986 (`A-Z a-z 0-9 - . _ ~`).
const RESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `%XX`-encode everything but unreserved characters.
fn encode(text: &str) -> String {
    utf8_percent_encode(text, RESERVED).to_string()
}

/// Check the upgrade request: the path, and `sessionId` and `projectKey` in the query.
fn check_request(path: &str, query: Option<&str>) -> Result<Routing, String> {
    if path != PATH {
        return Err(format!("path {path:?} is not {PATH:?}"));
    }
    let mut session_id = None;
    let mut project_key = None;
    for pair in query.unwrap_or("").split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match decode(k).as_str() {
            "sessionId" => session_id = Some(decode(v)),
            "projectKey" => project_key = Some(decode(v)),
            _ => {}
        }
    }
    match (session_id, project_key) {
        (Some(s), Some(p)) if !s.is_empty() && !p.is_empty() => Ok(Routing {
            session_id: s,
            project_key: p,
        }),
        _ => Err("the query must carry non-empty sessionId and projectKey".into()),
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(connection(stream, peer, shared.clone()));
            }
            // Out of descriptors, say: try again shortly.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// A valid answer, handed over at the end of its burst.
struct Held {
    id: String,
    answer: ToolAnswer,
}

/// The most frames read in one burst before the answers in it are handed over.
const BURST_LIMIT: usize = 64;

async fn connection(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut routing: Result<Routing, String> = Err("no upgrade request".into());
    // The signature is tungstenite's `Callback`: its error type is not ours to box.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        routing = check_request(req.uri().path(), req.uri().query());
        match &routing {
            Ok(_) => Ok(resp),
            Err(why) => {
                let mut reject = ErrorResponse::new(Some(format!("{why}\n")));
                *reject.status_mut() = tungstenite::http::StatusCode::NOT_FOUND;
                Err(reject)
            }
        }
    };
    let accepted = tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(ws_config())),
    )
    .await;
    let ws = match accepted {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            let why = match &routing {
                Err(r) => r.clone(),
                Ok(_) => format!("WebSocket handshake failed: {e}"),
            };
            log(&format!("rejected a connection from {peer}: {why}"));
            shared.lock().last_rejection = Some(why);
            shared.changed.notify_all();
            return;
        }
        Err(_) => {
            shared.lock().last_rejection = Some("no upgrade request within 10s".into());
            return;
        }
    };
    let Ok(routing) = routing else { return };
    let (mut sink, mut stream) = ws.split();
    let (out, mut outbox) = amsc::unbounded_channel::<Message>();
    let conn_id = {
        let mut st = shared.lock();
        if st.closing {
            return;
        }
        st.next_conn += 1;
        let id = st.next_conn;
        if let Some(old) = st.conn.take() {
            let _ = old.out.send(Message::Close(Some(CloseFrame {
                code: CloseCode::Policy,
                reason: "replaced by a newer connection".into(),
            })));
            let ids: Vec<String> = st
                .pending
                .iter()
                .filter(|(_, p)| p.conn == old.id)
                .map(|(id, _)| id.clone())
                .collect();
            for pid in ids {
                st.resolve(
                    &pid,
                    Err(TransportError::Crash(
                        "the plugin connected again with the call pending (old connection dropped)"
                            .into(),
                    )),
                );
            }
        }
        // The optional handshake: a plugin that knows it answers HELLO first.
        let hello = serde_json::to_string(&runner_hello()).expect("a HelloMsg always serialises");
        let _ = out.send(Message::text(hello));
        st.conn = Some(Conn { id, out, routing });
        st.live_conns += 1;
        st.gave_up = false;
        shared.changed.notify_all();
        id
    };
    let writer = tokio::spawn(async move {
        while let Some(m) = outbox.recv().await {
            let close = matches!(m, Message::Close(_));
            if sink.send(m).await.is_err() || close {
                break;
            }
        }
    });
    let why = loop {
        // A burst: the frame awaited, then every frame already received.
        // Valid answers are handed over only after it, so a second result
        // sent together with the first makes that call a protocol error.
        let mut held: Vec<Held> = Vec::new();
        let mut ended = on_frame(&shared, stream.next().await, &mut held);
        for _ in 0..BURST_LIMIT {
            if ended.is_some() {
                break;
            }
            match stream.next().now_or_never() {
                Some(frame) => ended = on_frame(&shared, frame, &mut held),
                None => break,
            }
        }
        let mut st = shared.lock();
        for h in held {
            st.resolve(&h.id, Ok(h.answer));
        }
        drop(st);
        if let Some(why) = ended {
            break why;
        }
    };
    {
        let mut st = shared.lock();
        let ids: Vec<String> = st
            .pending
            .iter()
            .filter(|(_, p)| p.conn == conn_id)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            st.resolve(
                &id,
                Err(TransportError::Crash(format!(
                    "the plugin disconnected with the call pending: {why}"
                ))),
            );
        }
        if st.conn.as_ref().map(|c| c.id) == Some(conn_id) {
            st.conn = None;
        }
        st.live_conns -= 1;
        shared.changed.notify_all();
    }
    // Let a close reply go out, then stop writing.
    let _ = tokio::time::timeout(Duration::from_millis(200), writer).await;
}

/// Handle one frame (`None`: the stream ended); `Some(why)` when the connection is over.
fn on_frame(
    shared: &Shared,
    frame: Option<Result<Message, tungstenite::Error>>,
    held: &mut Vec<Held>,
) -> Option<String> {
    match frame {
        None => Some("the connection ended".to_owned()),
        Some(Err(e)) => {
            if let tungstenite::Error::Capacity(c) = &e {
                shared.lock().blame(&format!(
                    "a message over the {STDOUT_LIMIT}-byte bound ({c})"
                ));
            }
            Some(format!("the connection failed: {e}"))
        }
        Some(Ok(Message::Text(text))) => {
            on_text(shared, text.as_str(), held);
            None
        }
        Some(Ok(Message::Binary(_))) => {
            shared
                .lock()
                .blame("a binary frame (messages are JSON text frames)");
            None
        }
        Some(Ok(Message::Close(frame))) => Some(match frame {
            Some(f) => format!(
                "the plugin closed the connection ({} {})",
                u16::from(f.code),
                f.reason
            ),
            None => "the plugin closed the connection".to_owned(),
        }),
        Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => None,
    }
}

/// The result fields a TOOL_RESULT must keep inside `data`.
const DATA_FIELDS: &[&str] = &["toolCallId", "success", "result", "error", "executionTime"];

/// One text message from the plugin.
fn on_text(shared: &Shared, text: &str, held: &mut Vec<Held>) {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            shared
                .lock()
                .blame(&format!("a text frame that is not one JSON message ({e})"));
            return;
        }
    };
    let Some(obj) = value.as_object() else {
        shared.lock().blame("a JSON message that is not an object");
        return;
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("TOOL_RESULT") => {}
        Some("HELLO") => {
            match check_hello(&value) {
                Ok(h) => {
                    let mut st = shared.lock();
                    if st.hello.is_none() {
                        st.hello = Some(h);
                        shared.changed.notify_all();
                    }
                }
                Err(e) => log(&format!("ignoring the plugin's HELLO: {e}")),
            }
            return;
        }
        Some(other) => {
            // The spec's backend routes other message types elsewhere.
            log(&format!("ignoring a {other:?} message from the plugin"));
            return;
        }
        None => {
            shared.lock().blame("a message without a string \"type\"");
            return;
        }
    }
    let data = obj.get("data").and_then(Value::as_object);
    let in_data = data
        .and_then(|d| d.get("toolCallId"))
        .and_then(Value::as_str);
    let at_root = obj.get("toolCallId").and_then(Value::as_str);
    let Some(id) = in_data.or(at_root) else {
        shared.lock().blame("a TOOL_RESULT without data.toolCallId");
        return;
    };
    let mut st = shared.lock();
    if let Some(i) = held.iter().position(|h| h.id == id) {
        held.remove(i);
        st.resolve(
            id,
            Err(TransportError::Protocol(ProtocolError::TwoMessages)),
        );
        return;
    }
    if st.pending.contains_key(id) {
        if in_data.is_none() {
            let misplaced: Vec<&str> = DATA_FIELDS
                .iter()
                .copied()
                .filter(|f| obj.contains_key(*f))
                .collect();
            let e = ProtocolError::BadShape(format!(
                "TOOL_RESULT fields at the root instead of inside \"data\" ({}); the backend reads data.toolCallId",
                misplaced.join(", ")
            ));
            st.resolve(id, Err(TransportError::Protocol(e)));
            return;
        }
        match check_tool_result(&value, id) {
            Ok(answer) => held.push(Held {
                id: id.to_owned(),
                answer,
            }),
            Err(e) => st.resolve(id, Err(TransportError::Protocol(e))),
        }
        return;
    }
    match st.finished.get(id).copied() {
        Some(Finished::Answered) => {
            log(&format!(
                "a second TOOL_RESULT for toolCallId={id}, which was already answered: blamed on that call"
            ));
            st.late.push(LateBlame {
                tool_call_id: id.to_owned(),
                error: TransportError::Protocol(ProtocolError::AfterAnswer(format!(
                    "a second TOOL_RESULT for toolCallId={id}"
                ))),
            });
        }
        Some(Finished::TimedOut | Finished::Abandoned | Finished::Errored) => {
            log(&format!(
                "ignoring a late TOOL_RESULT for toolCallId={id} (the call had already ended)"
            ));
        }
        None => {
            let line = unknown_id_log(id);
            crate::output::eprintln_quietly(format_args!("{line}"));
            st.blame(&format!(
                "{line}: a TOOL_RESULT for a toolCallId the runner never sent"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_path() {
        let ok = |q: &str| check_request(PATH, Some(q));
        assert_eq!(
            ok("sessionId=a%20b&projectKey=k+1"),
            Ok(Routing {
                session_id: "a b".into(),
                project_key: "k 1".into()
            })
        );
        assert!(ok("sessionId=a").is_err());
        assert!(ok("sessionId=&projectKey=k").is_err());
        assert!(check_request("/ws/other", Some("sessionId=a&projectKey=k")).is_err());
        assert_eq!(decode("%E2%9A%A0%"), "⚠%");
        assert_eq!(decode(&encode("a b/ü")), "a b/ü");
        assert_eq!(encode("a b/ü-._~"), "a%20b%2F%C3%BC-._~");
    }

    #[test]
    fn an_invalid_escape_stays_as_written() {
        // `%+1` once decoded to the byte 0x01 (a sign is no hex digit).
        assert_eq!(decode("%+1"), "% 1");
        assert_eq!(decode("%-1"), "%-1");
        assert_eq!(decode("%1"), "%1");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%41%4a%4A"), "AJJ");
        // Bytes that are not UTF-8 are replaced, not dropped.
        assert_eq!(decode("a%FFb"), "a\u{FFFD}b");
    }
}
