//! The `inprocess` transport: the built-in reference engine, through the
//! same message path as an external executor.
//!
//! A call is serialised to its `TOOL_CALL` bytes, parsed back, given to
//! `patchspec_engine::dispatch::call`, and the outcome is serialised as a
//! `TOOL_RESULT` and parsed by the same strict parser as external answers, so
//! the wire format is exercised on every case. A panic in the engine is
//! caught and reported as a crash of that case. [`answer`] is shared with
//! `patchspec exec`, so the reference executor and the in-process path cannot
//! drift apart.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use patchspec_engine::dispatch::SUPPORTED_TOOLS;

use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, TransportError};
use crate::engine_call::{run_engine, PRIVATE_PATHS};
use crate::protocol::{
    parse_tool_result, HelloMsg, Implementation, ProtocolError, ToolCallMsg, ToolResultData,
    ToolResultMsg, PROTOCOL_VERSION,
};

/// The reference engine's identity.
pub fn implementation() -> Implementation {
    Implementation {
        name: "patchspec-engine".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        language: Some("Rust".into()),
        homepage: Some("https://example.invalid/patchspec".into()),
    }
}

/// The reference engine's `HELLO` (the answer of `patchspec exec` in every
/// transport): its identity, its tools, and its private path.
pub fn hello() -> HelloMsg {
    HelloMsg {
        kind: "HELLO".into(),
        protocol_version: PROTOCOL_VERSION,
        runner: None,
        implementation: Some(implementation()),
        tools: SUPPORTED_TOOLS.iter().map(|s| s.to_string()).collect(),
        unsupported_tags: Vec::new(),
        private_paths: PRIVATE_PATHS.iter().map(|s| s.to_string()).collect(),
    }
}

/// Answer one `TOOL_CALL` with the engine; panics become `Err`.
pub fn answer(msg: &ToolCallMsg) -> Result<ToolResultMsg, String> {
    let started = Instant::now();
    let root = PathBuf::from(&msg.workspace_root);
    let outcome = run_engine(
        &msg.tool_name,
        &msg.params,
        &root,
        &msg.session,
        Some(&msg.tool_call_id),
    )?;
    Ok(ToolResultMsg {
        kind: "TOOL_RESULT".into(),
        data: ToolResultData {
            tool_call_id: msg.tool_call_id.clone(),
            success: outcome.success,
            result: serde_json::to_string(&outcome.result).expect("a JSON value always serialises"),
            error: outcome.error,
            execution_time: Some(started.elapsed().as_millis() as u64),
        },
    })
}

/// The reference engine, in this process.
#[derive(Clone, Debug, Default)]
pub struct InProcess {
    extra_private: Vec<String>,
}

impl InProcess {
    /// The engine, with extra private-path globs besides its own.
    pub fn new(extra_private: &[String]) -> InProcess {
        InProcess {
            extra_private: extra_private.to_vec(),
        }
    }
}

impl Executor for InProcess {
    fn info(&self) -> ExecutorInfo {
        ExecutorInfo {
            transport: "inprocess",
            command: Vec::new(),
            implementation: Some(implementation()),
            tools: Some(SUPPORTED_TOOLS.iter().map(|s| s.to_string()).collect()),
            unsupported_tags: Vec::new(),
            private_paths: PRIVATE_PATHS
                .iter()
                .map(|s| s.to_string())
                .chain(self.extra_private.iter().cloned())
                .collect(),
            declared_by: Declaration::BuiltIn,
        }
    }

    fn call(&self, msg: &ToolCallMsg, _dirs: &CallDirs<'_>, _timeout: Duration) -> Exchange {
        let wire = serde_json::to_vec(msg).expect("a ToolCallMsg always serialises");
        let parsed: ToolCallMsg = match serde_json::from_slice(&wire) {
            Ok(m) => m,
            Err(e) => {
                return Exchange {
                    answer: Err(TransportError::Protocol(ProtocolError::BadShape(format!(
                        "the runner's own TOOL_CALL does not parse: {e}"
                    )))),
                    stderr: String::new(),
                }
            }
        };
        let answer = match answer(&parsed) {
            Ok(result) => {
                let bytes = serde_json::to_vec(&result).expect("a ToolResultMsg always serialises");
                parse_tool_result(&bytes, &msg.tool_call_id).map_err(TransportError::Protocol)
            }
            Err(panic) => Err(TransportError::Crash(panic)),
        };
        Exchange {
            answer,
            stderr: String::new(),
        }
    }
}
