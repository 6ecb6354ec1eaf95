//! Transports: how a `TOOL_CALL` reaches an executor and its `TOOL_RESULT` comes back.
//!
//! The main trait is [`Executor`]; the five implementations are
//! [`inprocess`] (the built-in reference engine, through the same
//! serialise/parse path as the wire), [`oneshot`] (one process per call),
//! [`session`] (one long-lived process per worker, line-framed, with a
//! `HELLO` handshake), [`websocket`] (the runner as the backend of the
//! websocket tool protocol, a plugin connected to it; [`websocket_plugin`]
//! is the reference plugin) and [`mcp`] (the runner as the client of an
//! MCP server, one per case). Only the websocket and MCP modules are async,
//! each with its own runtime.
//! Shared process handling (process groups, timeouts, bounded reads) is in
//! [`process`]; [`launch`] starts the executor a command line names, for
//! `check` and `matrix` alike. Transports only move messages; judging the answer is the
//! runner's job.

use std::path::Path;
use std::time::Duration;

use crate::protocol::{Implementation, ProtocolError, ToolAnswer, ToolCallMsg};
use crate::workspace::ExecEnv;

pub mod inprocess;
pub mod launch;
pub mod mcp;
pub mod oneshot;
pub mod process;
pub mod session;
pub mod websocket;
pub mod websocket_plugin;

/// Where an executor's declaration (implementation, tools, tags, private
/// paths) came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Declaration {
    /// Known to the runner: the built-in engine, or the reference plugin it starts.
    #[default]
    BuiltIn,
    /// The executor's `HELLO`.
    Hello,
    /// No `HELLO` was given (oneshot, websocket): only the command line declares.
    Missing(String),
}

impl Declaration {
    /// `builtin`, `hello` or `none` (the JSON header's `declaredBy`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Declaration::BuiltIn => "builtin",
            Declaration::Hello => "hello",
            Declaration::Missing(_) => "none",
        }
    }
}

/// What the runner knows about an executor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecutorInfo {
    /// `inprocess`, `oneshot`, `session`, `websocket` or `mcp`.
    pub transport: &'static str,
    /// The executor's argv (empty in-process).
    pub command: Vec<String>,
    /// From HELLO (or built in), when known.
    pub implementation: Option<Implementation>,
    /// Supported tools, when declared.
    pub tools: Option<Vec<String>>,
    /// Tags the executor does not support.
    pub unsupported_tags: Vec<String>,
    /// Globs of implementation-private paths.
    pub private_paths: Vec<String>,
    /// Where the above came from.
    pub declared_by: Declaration,
}

/// The directories of one call: the case's workspace, and the TMPDIR and
/// HOME a process started for this call alone (oneshot) gets.
#[derive(Clone, Copy, Debug)]
pub struct CallDirs<'a> {
    /// The case's workspace (also `workspaceRoot` in the message).
    pub workspace: &'a Path,
    /// TMPDIR and HOME for a process started for this call.
    pub env: &'a ExecEnv,
}

/// A violation found after its call had returned, blamed on that call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LateBlame {
    /// The call's `toolCallId`.
    pub tool_call_id: String,
    /// What it did.
    pub error: TransportError,
}

/// Why a call produced no valid answer: always an `error` outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// The executor could not be started.
    Spawn(String),
    /// No answer within the per-case timeout; the process group was killed.
    Timeout(Duration),
    /// The executor died without a valid answer (exit status or signal).
    Crash(String),
    /// The output is not one valid `TOOL_RESULT` for this call.
    Protocol(ProtocolError),
    /// A session executor failed its (re)start handshake, or the restart bound was reached.
    Session(String),
}

impl TransportError {
    /// Did the executor fail to speak the protocol at all (as opposed to a timeout)?
    pub fn is_unusable_sign(&self) -> bool {
        match self {
            TransportError::Spawn(_)
            | TransportError::Crash(_)
            | TransportError::Protocol(_)
            | TransportError::Session(_) => true,
            TransportError::Timeout(_) => false,
        }
    }

    /// A short stable name: `spawn`, `timeout`, `crash`, `protocol`, `session`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportError::Spawn(_) => "spawn",
            TransportError::Timeout(_) => "timeout",
            TransportError::Crash(_) => "crash",
            TransportError::Protocol(_) => "protocol",
            TransportError::Session(_) => "session",
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Spawn(e) => write!(f, "could not start the executor: {e}"),
            TransportError::Timeout(d) => write!(
                f,
                "timed out after {:.1}s (process group killed)",
                d.as_secs_f64()
            ),
            TransportError::Crash(e) => write!(f, "executor crashed: {e}"),
            TransportError::Protocol(e) => write!(f, "protocol violation: {e}"),
            TransportError::Session(e) => write!(f, "session: {e}"),
        }
    }
}

/// The result of one call.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The answer, or why there is none.
    pub answer: Result<ToolAnswer, TransportError>,
    /// The executor's stderr during the call (bounded), for the report only.
    pub stderr: String,
}

/// Something that answers tool calls.
pub trait Executor: Send + Sync {
    /// What is known about it (after any handshake).
    fn info(&self) -> ExecutorInfo;
    /// Make one call in the case's directories.
    fn call(&self, msg: &ToolCallMsg, dirs: &CallDirs<'_>, timeout: Duration) -> Exchange;
    /// The run is over (session: send `BYE` and reap). Called once, by
    /// [`crate::run::run`], before the last [`Executor::late_blames`].
    fn finish(&self) {}
    /// Violations pinned on a call after it had returned (session: a line
    /// after its answer; websocket: a later duplicate answer). Drained.
    fn late_blames(&self) -> Vec<LateBlame> {
        Vec::new()
    }
    /// Violations no call can be blamed for (websocket: an unknown
    /// `toolCallId` while several calls are in flight). Drained; each fails the run.
    fn run_errors(&self) -> Vec<String> {
        Vec::new()
    }
}
