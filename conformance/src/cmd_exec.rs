//! `patchspec exec`: the reference executor, the engine behind the protocol.
//!
//! Oneshot (default): read one message from stdin, answer one on stdout,
//! exit 0. A `HELLO` on stdin is answered with the executor's `HELLO`, and
//! `patchspec check` sends one before the first case, so a oneshot run learns
//! the engine's identity, tools and private path (`.patchspec`). Session
//! (`--session`): read one message per line; answer `HELLO` with `HELLO`,
//! each `TOOL_CALL` with its `TOOL_RESULT`, and exit 0 on `BYE` or end of
//! input. WebSocket (`--connect URL`): the reference plugin, in
//! [`crate::transport::websocket_plugin`]. Input that is not a message is
//! reported on stderr and exits 2 (oneshot) or is skipped (session). An engine panic exits 101 without an
//! answer, as a crash should look to the runner. The answers are built by
//! [`crate::transport::inprocess::answer`], the same code the in-process
//! transport uses.

use std::io::{BufRead, Read, Write};

use serde_json::Value;

use crate::error::Error;
use crate::exit;
use crate::protocol::ToolCallMsg;
use crate::transport::inprocess::{answer, hello};

/// `patchspec exec`.
#[derive(Clone, Debug, clap::Args)]
pub struct ExecArgs {
    /// Speak the session transport (HELLO, one message per line, BYE) instead of oneshot.
    #[arg(long)]
    pub session: bool,
    /// Be the reference WebSocket plugin: connect to the backend at URL
    /// (`ws://HOST:PORT/ws/agent/chat?sessionId=…&projectKey=…`) and serve its TOOL_CALLs.
    #[arg(long, value_name = "URL", conflicts_with = "session")]
    pub connect: Option<String>,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

enum Reply {
    Message(String),
    Bye,
    Invalid(String),
    Crash(String),
}

fn handle(text: &[u8]) -> Reply {
    let value: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => return Reply::Invalid(format!("not a JSON message: {e}")),
    };
    match value.get("type").and_then(Value::as_str) {
        Some("HELLO") => Reply::Message(serde_json::to_string(&hello()).expect("HELLO serialises")),
        Some("BYE") => Reply::Bye,
        Some("TOOL_CALL") => match serde_json::from_value::<ToolCallMsg>(value) {
            Ok(msg) => match answer(&msg) {
                Ok(result) => {
                    Reply::Message(serde_json::to_string(&result).expect("TOOL_RESULT serialises"))
                }
                Err(panic) => Reply::Crash(panic),
            },
            Err(e) => Reply::Invalid(format!("malformed TOOL_CALL: {e}")),
        },
        other => Reply::Invalid(format!("unexpected message type {other:?}")),
    }
}

/// Run `patchspec exec`; returns the exit code.
pub fn exec(args: &ExecArgs) -> Result<i32, Error> {
    args.log.install();
    args.store.open()?;
    if let Some(url) = &args.connect {
        return crate::transport::websocket_plugin::serve(url);
    }
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut write = |line: &str| -> Result<(), Error> {
        writeln!(stdout, "{line}")
            .and_then(|_| stdout.flush())
            .map_err(|e| Error::io(format!("cannot write to stdout: {e}")))
    };
    if !args.session {
        let mut input = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut input)
            .map_err(|e| Error::io(format!("cannot read stdin: {e}")))?;
        return match handle(&input) {
            Reply::Message(m) => write(&m).map(|_| exit::OK),
            Reply::Bye => Ok(exit::OK),
            Reply::Invalid(e) => Err(Error::usage(e)),
            Reply::Crash(e) => {
                eprintln!("{e}");
                Ok(exit::ENGINE_PANIC)
            }
        };
    }
    for line in stdin.lock().split(b'\n') {
        let line = line.map_err(|e| Error::io(format!("cannot read stdin: {e}")))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match handle(&line) {
            Reply::Message(m) => write(&m)?,
            Reply::Bye => return Ok(exit::OK),
            Reply::Invalid(e) => eprintln!("patchspec exec: ignoring input: {e}"),
            Reply::Crash(e) => {
                eprintln!("{e}");
                return Ok(exit::ENGINE_PANIC);
            }
        }
    }
    Ok(exit::OK)
}
