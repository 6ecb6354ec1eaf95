//! The `mcp` transport: the executor is a Model Context Protocol server
//! over stdio, and the runner its client (rmcp's client side).
//!
//! Main type: [`Mcp`]. Each case gets a server process of its own, started
//! from the executor's argv with every `{root}` in an argument replaced by
//! the case's workspace (absolute), and with that workspace as its working
//! directory; TMPDIR and HOME are the case's, as in the oneshot transport.
//! The runner does the `initialize` handshake (protocol revision
//! 2025-11-25, the newest one that has it; see docs/mcp.md), sends the case
//! as one `tools/call`, and closes the server's stdin; the whole process
//! group is then killed, so nothing it started outlives the case.
//!
//! Declaration (the `HELLO` of other transports): [`Mcp::start`] starts one
//! server in an empty directory before the first case, does the handshake
//! and `tools/list`: the listed names are the executor's tools, and the
//! initialize result's `_meta["dev.patchspec/executor"]` may declare
//! `privatePaths` and `unsupportedTags`. A server that fails this is
//! unusable (exit code 3).
//!
//! Judging: a `CallToolResult`'s `structuredContent` is the result document
//! (without it, the first text block that parses as a JSON object);
//! `isError` is `data.success` negated, and the first text block of an
//! error is its message. A JSON-RPC error answer, a result with no document,
//! a server that exits or hangs are `error` outcomes, never `fail`. Session
//! state (ActiveFiles, `session.limits`, `session.keepStore`) goes in the request's
//! `_meta["dev.patchspec/session"]` ([`crate::mcp::SESSION_META_KEY`]).
//!
//! Bounds: the per-case timeout covers the start, the handshake and the
//! call (the group is killed at it); the server's stdout is read through a
//! [`BoundedRead`] of [`STDOUT_LIMIT`] bytes per case, past which the case
//! is a `protocol` error; its stderr tail is kept as for other transports.

use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, MetaObject, ProtocolVersion, RequestMetaObject,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::process::{describe_status, keep_tail, kill_group, STDOUT_LIMIT};
use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, TransportError};
use crate::case::Given;
use crate::mcp::{EXECUTOR_META_KEY, SESSION_META_KEY};
use crate::protocol::{
    Implementation as ExecutorImplementation, ProtocolError, ToolAnswer, ToolCallMsg,
};
use crate::workspace::{ExecEnv, RunRoot};

/// The placeholder in the executor's argv for the case's workspace.
pub const ROOT_PLACEHOLDER: &str = "{root}";

/// The MCP revision the runner asks for in `initialize`.
pub const CLIENT_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// A reader that stops at `limit` bytes: past it, reads fail and `over` is set.
pub struct BoundedRead<R> {
    inner: R,
    left: usize,
    over: Arc<AtomicBool>,
}

impl<R> BoundedRead<R> {
    /// `inner`, cut off after `limit` bytes; `over` is set when it is.
    pub fn new(inner: R, limit: usize, over: Arc<AtomicBool>) -> BoundedRead<R> {
        BoundedRead {
            inner,
            left: limit,
            over,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedRead<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.left == 0 {
            // At the bound: only the end of input is still welcome.
            let mut one = [0u8; 1];
            let mut probe = ReadBuf::new(&mut one);
            return match Pin::new(&mut self.inner).poll_read(cx, &mut probe) {
                Poll::Ready(Ok(())) if probe.filled().is_empty() => Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {
                    self.over.store(true, Ordering::SeqCst);
                    Poll::Ready(Err(std::io::Error::other("output bound exceeded")))
                }
                other => other,
            };
        }
        // Read at most what is left: a read can never cross the bound.
        let room = buf.remaining().min(self.left);
        let mut limited = ReadBuf::new(buf.initialize_unfilled_to(room));
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let n = limited.filled().len();
                this.left -= n;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// The executor's argv for one workspace: `{root}` replaced in every argument.
pub fn argv_for(argv: &[String], workspace: &Path) -> Vec<String> {
    let root = workspace.to_string_lossy();
    argv.iter()
        .map(|a| a.replace(ROOT_PLACEHOLDER, &root))
        .collect()
}

/// One server process and the client connected to it.
struct Connection {
    client: RunningService<RoleClient, ClientConfig>,
    pid: u32,
    child: tokio::process::Child,
    over: Arc<AtomicBool>,
    stderr: tokio::task::JoinHandle<Vec<u8>>,
}

impl Connection {
    /// Kill the group, reap, and return the stderr tail and how it exited.
    /// `grace`: how long to let it exit by itself first (when its exit
    /// status explains a missing answer).
    async fn close(self, grace: Duration) -> (String, String) {
        let Connection {
            client,
            pid,
            mut child,
            stderr,
            ..
        } = self;
        // The case is answered: close our end and kill the group at once,
        // as oneshot kills it after the exit (waiting for a clean exit
        // would cost every case the server's shutdown).
        let _ = tokio::time::timeout(Duration::from_millis(200), client.cancel()).await;
        let status = match tokio::time::timeout(grace, child.wait()).await {
            Ok(Ok(status)) => describe_status(status),
            _ => "killed after the case".into(),
        };
        kill_group(pid);
        let _ = child.wait().await;
        let tail = tokio::time::timeout(Duration::from_secs(1), stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        (String::from_utf8_lossy(&tail).into_owned(), status)
    }
}

/// Keep the last [`super::process::STDERR_LIMIT`] bytes of `stderr`.
async fn stderr_tail(mut stderr: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        keep_tail(&mut tail, &buf[..n]);
    }
    tail
}

/// The runner's `initialize` parameters.
fn client_config() -> ClientConfig {
    let mut config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("patchspec", env!("CARGO_PKG_VERSION")),
    );
    config.protocol_version = CLIENT_PROTOCOL;
    config
}

/// Start `argv` in `cwd` and do the `initialize` handshake.
/// The pid of the process group a case started, for the kill at its timeout.
type GroupSlot = std::sync::Mutex<Option<u32>>;

async fn connect(
    argv: &[String],
    cwd: &Path,
    env: &ExecEnv,
    group: &GroupSlot,
) -> Result<Connection, (TransportError, String)> {
    let (program, args) = argv.split_first().ok_or_else(|| {
        (
            TransportError::Spawn("empty executor command".into()),
            String::new(),
        )
    })?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    env.apply(&mut cmd);
    let mut child = tokio::process::Command::from(cmd)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            (
                TransportError::Spawn(format!("{program:?}: {e}")),
                String::new(),
            )
        })?;
    let pid = child.id().unwrap_or(0);
    if let Ok(mut slot) = group.lock() {
        *slot = Some(pid);
    }
    let over = Arc::new(AtomicBool::new(false));
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        kill_group(pid);
        return Err((
            TransportError::Spawn("the executor's pipes are missing".into()),
            String::new(),
        ));
    };
    let stderr = match child.stderr.take() {
        Some(pipe) => tokio::spawn(stderr_tail(pipe)),
        None => tokio::spawn(async { Vec::new() }),
    };
    let stdout = BoundedRead::new(stdout, STDOUT_LIMIT, over.clone());
    match client_config().serve((stdout, stdin)).await {
        Ok(client) => Ok(Connection {
            client,
            pid,
            child,
            over,
            stderr,
        }),
        Err(e) => {
            let what = e.to_string();
            let connection_over = over.load(Ordering::SeqCst);
            kill_group(pid);
            let status = match tokio::time::timeout(Duration::from_millis(500), child.wait()).await
            {
                Ok(Ok(status)) => Some(describe_status(status)),
                _ => None,
            };
            let tail = tokio::time::timeout(Duration::from_secs(1), stderr)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let tail = String::from_utf8_lossy(&tail).into_owned();
            let error = if connection_over {
                TransportError::Protocol(ProtocolError::TooLarge(STDOUT_LIMIT))
            } else {
                match status {
                    Some(status) => TransportError::Crash(format!(
                        "{status} during the MCP initialize handshake ({what})"
                    )),
                    None => TransportError::Protocol(ProtocolError::BadShape(format!(
                        "the MCP initialize handshake failed: {what}"
                    ))),
                }
            };
            Err((error, tail))
        }
    }
}

/// The `_meta` of a `tools/call` for `msg`: its session state, when it has any.
fn call_meta(msg: &ToolCallMsg) -> Option<RequestMetaObject> {
    if msg.session.active_files.is_empty()
        && msg.session.limits.is_empty()
        && !msg.session.keep_store
    {
        return None;
    }
    let session = serde_json::to_value(&msg.session).ok()?;
    let mut meta = MetaObject::new();
    meta.insert(SESSION_META_KEY.into(), session);
    Some(RequestMetaObject(meta))
}

/// The answer a `CallToolResult` carries.
pub fn answer_of(result: &CallToolResult) -> Result<ToolAnswer, ProtocolError> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let document = match &result.structured_content {
        Some(doc) => doc.clone(),
        None => texts
            .iter()
            .find_map(|t| serde_json::from_str::<Value>(t).ok().filter(Value::is_object))
            .ok_or_else(|| {
                ProtocolError::ResultNotJson(
                    "the tools/call result has no structuredContent and no text block that is a JSON object"
                        .into(),
                )
            })?,
    };
    if !document.is_object() {
        return Err(ProtocolError::ResultNotJson(
            "structuredContent is not a JSON object".into(),
        ));
    }
    let is_error = result.is_error.unwrap_or(false);
    Ok(ToolAnswer {
        success: !is_error,
        result: document,
        error: if is_error {
            texts.first().map(|t| t.to_string())
        } else {
            None
        },
        execution_time: None,
    })
}

/// One case: start, handshake, `tools/call`, close.
async fn call_once(
    argv: &[String],
    msg: &ToolCallMsg,
    dirs: &CallDirs<'_>,
    group: &GroupSlot,
) -> (Result<ToolAnswer, TransportError>, String) {
    let Value::Object(arguments) = &msg.params else {
        return (
            Err(TransportError::Protocol(ProtocolError::BadShape(
                "the case's params are not a JSON object, which MCP's tools/call arguments must be"
                    .into(),
            ))),
            String::new(),
        );
    };
    let argv = argv_for(argv, dirs.workspace);
    let connection = match connect(&argv, dirs.workspace, dirs.env, group).await {
        Ok(c) => c,
        Err((e, tail)) => return (Err(e), tail),
    };
    let mut params = CallToolRequestParams::new(msg.tool_name.clone())
        .with_arguments(JsonObject::clone(arguments));
    params.meta = call_meta(msg);
    let reply = connection.client.peer().call_tool(params).await;
    let over = connection.over.load(Ordering::SeqCst);
    let grace = if reply.is_ok() {
        Duration::ZERO
    } else {
        Duration::from_millis(500)
    };
    let (tail, status) = connection.close(grace).await;
    let answer = match reply {
        _ if over => Err(TransportError::Protocol(ProtocolError::TooLarge(
            STDOUT_LIMIT,
        ))),
        Ok(result) => answer_of(&result).map_err(TransportError::Protocol),
        Err(rmcp::ServiceError::McpError(e)) => {
            Err(TransportError::Protocol(ProtocolError::BadShape(format!(
                "tools/call answered with JSON-RPC error {}: {}",
                e.code.0, e.message
            ))))
        }
        Err(rmcp::ServiceError::TransportClosed) => Err(TransportError::Crash(format!(
            "the server closed the connection before answering ({status})"
        ))),
        Err(e) => Err(TransportError::Protocol(ProtocolError::BadShape(format!(
            "tools/call failed: {e}"
        )))),
    };
    (answer, tail)
}

/// What the handshake server declared: tools, private paths, unsupported tags, identity.
struct Declared {
    tools: Vec<String>,
    private_paths: Vec<String>,
    unsupported_tags: Vec<String>,
    implementation: Option<ExecutorImplementation>,
}

/// The declaration: a server in `dir`, initialize, tools/list.
async fn declare(
    argv: &[String],
    dir: &Path,
    env: &ExecEnv,
    group: &GroupSlot,
) -> Result<Declared, TransportError> {
    let argv = argv_for(argv, dir);
    let connection = connect(&argv, dir, env, group).await.map_err(|(e, _)| e)?;
    let listed = connection.client.peer().list_all_tools().await;
    let info = connection.client.peer().peer_info();
    connection.close(Duration::ZERO).await;
    let tools = listed.map_err(|e| TransportError::Session(format!("tools/list failed: {e}")))?;
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let executor_meta = info
        .as_ref()
        .and_then(|i| i.meta.as_ref())
        .and_then(|m| m.get(EXECUTOR_META_KEY))
        .cloned();
    Ok(Declared {
        tools: tools.iter().map(|t| t.name.to_string()).collect(),
        private_paths: strings(executor_meta.as_ref().and_then(|m| m.get("privatePaths"))),
        unsupported_tags: strings(
            executor_meta
                .as_ref()
                .and_then(|m| m.get("unsupportedTags")),
        ),
        implementation: info.as_ref().and_then(|i| i.server_info.as_ref()).map(|s| {
            ExecutorImplementation {
                name: s.name.clone(),
                version: s.version.clone(),
                language: None,
                homepage: s.website_url.clone(),
            }
        }),
    })
}

/// Kill the process group of a case whose future was dropped at its
/// timeout (dropping it killed the leader, not what the leader started).
fn kill_timed_out(group: &GroupSlot) {
    if let Some(pid) = group.lock().ok().and_then(|slot| *slot) {
        kill_group(pid);
    }
}

/// MCP servers over stdio, one per case.
pub struct Mcp {
    argv: Vec<String>,
    info: ExecutorInfo,
    runtime: tokio::runtime::Runtime,
}

impl Mcp {
    /// Declare `argv` (already resolved against the runner's cwd): one
    /// server in a fresh directory of `root`, handshake and `tools/list`
    /// within `timeout`. `private_paths` from the command line are added.
    pub fn start(
        argv: Vec<String>,
        root: &RunRoot,
        timeout: Duration,
        private_paths: &[String],
    ) -> Result<Mcp, TransportError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| TransportError::Spawn(format!("cannot start the async runtime: {e}")))?;
        let dir = root
            .case_dir(&Given::default())
            .map_err(|e| TransportError::Spawn(format!("cannot prepare a directory: {e}")))?;
        let group = GroupSlot::default();
        let declared = runtime
            .block_on(async {
                tokio::time::timeout(timeout, declare(&argv, dir.root(), dir.env(), &group)).await
            })
            .map_err(|_| {
                kill_timed_out(&group);
                TransportError::Session(format!(
                    "no answer to initialize and tools/list within {:.1}s",
                    timeout.as_secs_f64()
                ))
            })??;
        Ok(Mcp {
            info: ExecutorInfo {
                transport: "mcp",
                command: argv.clone(),
                implementation: declared.implementation,
                tools: Some(declared.tools),
                unsupported_tags: declared.unsupported_tags,
                private_paths: declared
                    .private_paths
                    .into_iter()
                    .chain(private_paths.iter().cloned())
                    .collect(),
                declared_by: Declaration::Hello,
            },
            argv,
            runtime,
        })
    }
}

impl Executor for Mcp {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, msg: &ToolCallMsg, dirs: &CallDirs<'_>, timeout: Duration) -> Exchange {
        let group = GroupSlot::default();
        let ran = self.runtime.block_on(async {
            tokio::time::timeout(timeout, call_once(&self.argv, msg, dirs, &group)).await
        });
        match ran {
            Ok((answer, stderr)) => Exchange { answer, stderr },
            Err(_) => {
                kill_timed_out(&group);
                Exchange {
                    answer: Err(TransportError::Timeout(timeout)),
                    stderr: String::new(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    #[test]
    fn root_is_replaced_in_every_argument() {
        let argv: Vec<String> = ["srv", "--root", "{root}", "--x={root}/a", "{url}"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            argv_for(&argv, Path::new("/w/ws")),
            ["srv", "--root", "/w/ws", "--x=/w/ws/a", "{url}"]
        );
    }

    #[test]
    fn structured_content_is_the_document_and_is_error_the_failure() {
        let doc = json!({"success": false, "error": {"kind": "x"}});
        let mut result = CallToolResult::error(vec![
            ContentBlock::text("why it failed"),
            ContentBlock::text(doc.to_string()),
        ]);
        result.structured_content = Some(doc.clone());
        let answer = answer_of(&result).unwrap();
        assert!(!answer.success);
        assert_eq!(answer.result, doc);
        assert_eq!(answer.error.as_deref(), Some("why it failed"));
    }

    #[test]
    fn without_structured_content_the_first_json_text_is_the_document() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("Done."),
            ContentBlock::text("[1, 2]"),
            ContentBlock::text(r#"{"success": true}"#),
        ]);
        let answer = answer_of(&result).unwrap();
        assert!(answer.success);
        assert_eq!(answer.result, json!({"success": true}));
        assert_eq!(answer.error, None);
        let none = CallToolResult::success(vec![ContentBlock::text("Done.")]);
        assert!(matches!(
            answer_of(&none),
            Err(ProtocolError::ResultNotJson(_))
        ));
        let mut scalar = CallToolResult::success(vec![]);
        scalar.structured_content = Some(json!(3));
        assert!(matches!(
            answer_of(&scalar),
            Err(ProtocolError::ResultNotJson(_))
        ));
    }

    #[test]
    fn the_bounded_reader_stops_at_its_limit() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let over = Arc::new(AtomicBool::new(false));
            let data: &[u8] = &[7u8; 100];
            let mut reader = BoundedRead::new(data, 64, over.clone());
            let mut got = Vec::new();
            let err = reader.read_to_end(&mut got).await.unwrap_err();
            assert_eq!(got.len(), 64);
            assert!(err.to_string().contains("bound"));
            assert!(over.load(Ordering::SeqCst));
            // Exactly the limit, then end of input: no error, not over.
            let over = Arc::new(AtomicBool::new(false));
            let mut reader = BoundedRead::new(&data[..64], 64, over.clone());
            let mut got = Vec::new();
            reader.read_to_end(&mut got).await.unwrap();
            assert_eq!(got.len(), 64);
            assert!(!over.load(Ordering::SeqCst));
        });
    }
}
