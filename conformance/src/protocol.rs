//! The executor protocol's messages (docs/protocol.md), and their strict parsing.
//!
//! Main types: [`ToolCallMsg`] (runner → executor, the websocket protocol's
//! `TOOL_CALL` plus `workspaceRoot` and `session`), [`ToolResultMsg`]
//! (executor → runner, `TOOL_RESULT` with everything inside `data`),
//! [`HelloMsg`] (the session handshake) and [`ByeMsg`].
//!
//! [`parse_tool_result`] turns an executor's output into a [`ToolAnswer`] or a
//! [`ProtocolError`]: exactly one JSON value, of type `TOOL_RESULT`, echoing
//! the call's `toolCallId`, with `result` a JSON-encoded result document.
//! Every such violation is an `error` outcome, never a `fail`. These wire
//! types are stable: fields are only ever added.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version this runner speaks (HELLO `protocolVersion`).
pub const PROTOCOL_VERSION: u64 = 1;

/// `TOOL_CALL`: what the runner sends for one case.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallMsg {
    /// Always `TOOL_CALL`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Unique per call; the answer must echo it. The runner uses `<case id>#<attempt>`.
    pub tool_call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// The tool's own arguments.
    pub params: Value,
    /// The websocket protocol's session id (one per run).
    pub web_socket_session_id: String,
    /// Extension: absolute path of the case's workspace.
    pub workspace_root: String,
    /// Extension: session state.
    #[serde(default)]
    pub session: SessionMsg,
}

/// Session state on the wire.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionMsg {
    /// docPath → content already in the model's context.
    #[serde(default)]
    pub active_files: BTreeMap<String, String>,
    /// Limits the case sets for this call (sent only when one is set).
    #[serde(default, skip_serializing_if = "Limits::is_empty")]
    pub limits: Limits,
    /// Keep a patch store for this workspace across the calls that ask it,
    /// so that a later call can read what an earlier one stored
    /// (`get_patch_change`); sent only when true (docs/protocol.md, "The
    /// patch store").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_store: bool,
}

/// `session.limits`: per-call values of an executor's configurable limits
/// (the engine's own type: the reference engine takes it as sent). An
/// executor whose limits are fixed declares the corpus tag `limits`
/// unsupported.
pub use patchspec_engine::dispatch::Limits;

/// `TOOL_RESULT`: the executor's answer.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolResultMsg {
    /// Always `TOOL_RESULT`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Everything else.
    pub data: ToolResultData,
}

/// `TOOL_RESULT.data`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultData {
    /// The call's id, echoed.
    pub tool_call_id: String,
    /// Did the tool do what was asked?
    pub success: bool,
    /// The tool's result document, JSON-encoded, on success and failure alike.
    pub result: String,
    /// A message when `success` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Milliseconds, informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time: Option<u64>,
}

/// Who an executor is (HELLO `implementation`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Implementation {
    /// Name, e.g. `patchspec-engine`.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Implementation language, e.g. `Rust`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Where to learn more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
}

/// `HELLO`, both directions: the runner sends `runner`, the executor answers
/// with `implementation`, `tools`, `unsupportedTags` and `privatePaths`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HelloMsg {
    /// Always `HELLO`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The protocol version the sender speaks.
    pub protocol_version: u64,
    /// Runner → executor: who is asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<Implementation>,
    /// Executor → runner: who is answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// Executor → runner: the tool names it implements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Executor → runner: case tags it does not support (those cases are skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported_tags: Vec<String>,
    /// Executor → runner: globs of implementation-private paths in a workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_paths: Vec<String>,
}

/// The runner's own `HELLO` (every transport that asks for a declaration sends this).
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

/// `BYE`: the runner is done; the executor exits.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ByeMsg {
    /// Always `BYE`.
    #[serde(rename = "type")]
    pub kind: String,
}

impl ByeMsg {
    /// The message.
    pub fn new() -> ByeMsg {
        ByeMsg { kind: "BYE".into() }
    }
}

impl Default for ByeMsg {
    fn default() -> Self {
        Self::new()
    }
}

/// A parsed, checked answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolAnswer {
    /// `data.success`.
    pub success: bool,
    /// `data.result`, decoded.
    pub result: Value,
    /// `data.error`.
    pub error: Option<String>,
    /// `data.executionTime`.
    pub execution_time: Option<u64>,
}

/// Why an executor's output is not a valid answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// Nothing was written.
    NoOutput,
    /// The output is not JSON.
    InvalidJson(String),
    /// More than one JSON value.
    TwoMessages,
    /// Output after the call had been answered (a late duplicate, a stray
    /// line): what it was, shortened.
    AfterAnswer(String),
    /// A JSON value that is not a valid `TOOL_RESULT`.
    BadShape(String),
    /// `data.toolCallId` does not echo the call's.
    WrongToolCallId {
        /// Sent.
        expected: String,
        /// Received.
        got: String,
    },
    /// `data.result` is not a JSON-encoded document.
    ResultNotJson(String),
    /// The output exceeded the read bound.
    TooLarge(usize),
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::NoOutput => write!(f, "no message on stdout"),
            ProtocolError::InvalidJson(e) => write!(f, "output is not a JSON message: {e}"),
            ProtocolError::TwoMessages => write!(f, "more than one message for one call"),
            ProtocolError::AfterAnswer(what) => write!(
                f,
                "more than one message for one call: after its answer, it also sent {what}"
            ),
            ProtocolError::BadShape(e) => write!(f, "not a valid TOOL_RESULT: {e}"),
            ProtocolError::WrongToolCallId { expected, got } => write!(
                f,
                "toolCallId {got:?} does not match the call's {expected:?}"
            ),
            ProtocolError::ResultNotJson(e) => {
                write!(f, "data.result is not a JSON-encoded result document: {e}")
            }
            ProtocolError::TooLarge(n) => write!(f, "output exceeds the {n}-byte bound"),
        }
    }
}

/// Parse an executor's whole output for one call.
pub fn parse_tool_result(output: &[u8], tool_call_id: &str) -> Result<ToolAnswer, ProtocolError> {
    let value = single_value(output)?;
    check_tool_result(&value, tool_call_id)
}

/// Exactly one JSON value in `output` (surrounding whitespace allowed).
pub fn single_value(output: &[u8]) -> Result<Value, ProtocolError> {
    if output.iter().all(u8::is_ascii_whitespace) {
        return Err(ProtocolError::NoOutput);
    }
    let mut stream = serde_json::Deserializer::from_slice(output).into_iter::<Value>();
    let first = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(ProtocolError::InvalidJson(e.to_string())),
        None => return Err(ProtocolError::NoOutput),
    };
    match stream.next() {
        None => Ok(first),
        Some(Ok(_)) => Err(ProtocolError::TwoMessages),
        Some(Err(e)) => Err(ProtocolError::InvalidJson(format!(
            "trailing bytes after the message: {e}"
        ))),
    }
}

/// Check one JSON value is the `TOOL_RESULT` for `tool_call_id`.
pub fn check_tool_result(value: &Value, tool_call_id: &str) -> Result<ToolAnswer, ProtocolError> {
    let bad = |m: &str| Err(ProtocolError::BadShape(m.to_owned()));
    let Some(obj) = value.as_object() else {
        return bad("the message is not an object");
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("TOOL_RESULT") => {}
        Some(other) => return bad(&format!("type is {other:?}, expected \"TOOL_RESULT\"")),
        None => return bad("missing \"type\""),
    }
    let Some(data) = obj.get("data").and_then(Value::as_object) else {
        return bad("missing object \"data\"");
    };
    let Some(id) = data.get("toolCallId").and_then(Value::as_str) else {
        return bad("missing string data.toolCallId");
    };
    if id != tool_call_id {
        return Err(ProtocolError::WrongToolCallId {
            expected: tool_call_id.to_owned(),
            got: id.to_owned(),
        });
    }
    let Some(success) = data.get("success").and_then(Value::as_bool) else {
        return bad("missing boolean data.success");
    };
    let Some(encoded) = data.get("result").and_then(Value::as_str) else {
        return bad("missing string data.result (the JSON-encoded result document)");
    };
    let result: Value =
        serde_json::from_str(encoded).map_err(|e| ProtocolError::ResultNotJson(e.to_string()))?;
    let error = match data.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return bad("data.error is not a string"),
    };
    let execution_time = match data.get("executionTime") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(ms) if ms >= 0.0 => Some(ms as u64),
            _ => return bad("data.executionTime is not a non-negative number"),
        },
    };
    Ok(ToolAnswer {
        success,
        result,
        error,
        execution_time,
    })
}

/// Check one JSON value is the executor's `HELLO`.
pub fn check_hello(value: &Value) -> Result<HelloMsg, String> {
    if value.get("type").and_then(Value::as_str) != Some("HELLO") {
        return Err(format!(
            "expected a HELLO message, got {}",
            crate::pattern::show(value)
        ));
    }
    let hello: HelloMsg =
        serde_json::from_value(value.clone()).map_err(|e| format!("malformed HELLO: {e}"))?;
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(format!(
            "HELLO protocolVersion {} is not the runner's {PROTOCOL_VERSION}",
            hello.protocol_version
        ));
    }
    if hello.implementation.is_none() {
        return Err("HELLO has no \"implementation\"".into());
    }
    if hello.tools.is_empty() {
        return Err("HELLO lists no \"tools\"".into());
    }
    Ok(hello)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(output: &str, expected: Result<bool, ProtocolError>) {
        let got = parse_tool_result(output.as_bytes(), "c#1").map(|a| a.success);
        assert_eq!(got, expected, "{output}");
    }

    #[test]
    fn answers() {
        let ok =
            r#"{"type":"TOOL_RESULT","data":{"toolCallId":"c#1","success":true,"result":"{}"}}"#;
        check(ok, Ok(true));
        check(&format!("\n{ok}\n"), Ok(true));
        check("", Err(ProtocolError::NoOutput));
        check(&format!("{ok}{ok}"), Err(ProtocolError::TwoMessages));
        check(
            &ok.replace("c#1", "c#2"),
            Err(ProtocolError::WrongToolCallId {
                expected: "c#1".into(),
                got: "c#2".into(),
            }),
        );
        assert!(matches!(
            parse_tool_result(b"garbage", "c#1"),
            Err(ProtocolError::InvalidJson(_))
        ));
        assert!(matches!(
            parse_tool_result(ok.replace("\"{}\"", "\"{\"").as_bytes(), "c#1"),
            Err(ProtocolError::ResultNotJson(_))
        ));
        assert!(matches!(
            parse_tool_result(ok.replace("TOOL_RESULT", "X").as_bytes(), "c#1"),
            Err(ProtocolError::BadShape(_))
        ));
    }
}
