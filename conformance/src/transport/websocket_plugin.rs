//! The reference plugin: `patchspec exec --connect ws://…`, the client side
//! of websocket-tool-protocol.md, answering with the reference engine.
//!
//! Main function: [`serve`]. It connects to the backend's URL, reads
//! `TOOL_CALL`s (fields at the root) and answers each with a `TOOL_RESULT`
//! (fields inside `data`), built by [`super::inprocess::answer`], the same
//! code every other transport uses. Calls are served concurrently: each runs
//! on tokio's blocking pool against the `workspaceRoot` it names (the
//! plugin's cwd when a backend sends none), and answers go out as they are
//! ready, in any order. A `TOOL_CALL` that does not parse is answered
//! `success: false` when it has a `toolCallId` (the spec's "missing required
//! fields"), else reported on stderr. patchspec's `HELLO` is answered with
//! the engine's `HELLO` (identity, tools, private path `.patchspec`); other
//! message types are ignored.
//!
//! It exits 0 when the backend closes the connection, 1 when it cannot
//! connect or the connection fails, and 101 when the engine panics (without
//! answering, as the runner should see a crash): the codes of
//! [`crate::exit`]. It does not reconnect: a
//! runner that started it restarts it.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc as amsc;
use tokio_tungstenite::tungstenite::Message;

use super::inprocess::{answer, hello};
use super::websocket::ws_config;
use crate::error::Error;
use crate::exit;
use crate::protocol::{ToolCallMsg, ToolResultData, ToolResultMsg};

/// Connect to `url` and serve tool calls until the backend closes; returns the exit code.
pub fn serve(url: &str) -> Result<i32, Error> {
    if !url.starts_with("ws://") {
        return Err(Error::usage(format!(
            "--connect needs a ws:// URL (no TLS), got {url:?}"
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| Error::io(format!("cannot start the async runtime: {e}")))?;
    let code = runtime.block_on(run(url))?;
    // In-flight calls are of no use once the backend is gone.
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(code)
}

async fn run(url: &str) -> Result<i32, Error> {
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(ws_config()), true)
        .await
        .map_err(|e| Error::io(format!("cannot connect to {url}: {e}")))?;
    let (mut sink, mut stream) = ws.split();
    let (out, mut outbox) = amsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(text) = outbox.recv().await {
            if sink.send(Message::text(text)).await.is_err() {
                break;
            }
        }
    });
    let code = loop {
        match stream.next().await {
            None => break exit::OK,
            Some(Ok(Message::Close(_))) => break exit::OK,
            Some(Ok(Message::Text(text))) => on_text(text.as_str(), &out),
            Some(Ok(Message::Binary(_))) => {
                eprintln!("patchspec exec: ignoring a binary frame");
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Err(e)) => {
                eprintln!("patchspec exec: the connection failed: {e}");
                break exit::REFUSED;
            }
        }
    };
    drop(out);
    writer.abort();
    Ok(code)
}

/// A `TOOL_RESULT` reporting a call the plugin could not even start.
fn refusal(id: &str, message: String) -> ToolResultMsg {
    let doc = json!({"success": false, "error": {"kind": "bad_request", "message": message}});
    ToolResultMsg {
        kind: "TOOL_RESULT".into(),
        data: ToolResultData {
            tool_call_id: id.to_owned(),
            success: false,
            result: doc.to_string(),
            error: Some(message),
            execution_time: Some(0),
        },
    }
}

fn send(out: &amsc::UnboundedSender<String>, msg: &ToolResultMsg) {
    // The writer is gone only when the connection is: nobody to tell.
    let _ = out.send(serde_json::to_string(msg).expect("a ToolResultMsg always serialises"));
}

fn on_text(text: &str, out: &amsc::UnboundedSender<String>) {
    let mut value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("patchspec exec: ignoring a message that is not JSON: {e}");
            return;
        }
    };
    match value.get("type").and_then(Value::as_str) {
        Some("TOOL_CALL") => {}
        Some("HELLO") => {
            // patchspec's optional handshake: declare the engine.
            let _ =
                out.send(serde_json::to_string(&hello()).expect("a HelloMsg always serialises"));
            return;
        }
        other => {
            eprintln!("patchspec exec: ignoring a message of type {other:?}");
            return;
        }
    }
    let Some(id) = value
        .get("toolCallId")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        eprintln!("patchspec exec: ignoring a TOOL_CALL without a root toolCallId");
        return;
    };
    // A backend of the spec sends neither extension field: serve the cwd.
    if let Some(obj) = value.as_object_mut() {
        if !obj.contains_key("workspaceRoot") {
            let cwd = std::env::current_dir().unwrap_or_default();
            obj.insert(
                "workspaceRoot".into(),
                Value::String(cwd.to_string_lossy().into_owned()),
            );
        }
        obj.entry("webSocketSessionId")
            .or_insert_with(|| Value::String(String::new()));
    }
    let msg: ToolCallMsg = match serde_json::from_value(value) {
        Ok(m) => m,
        Err(e) => return send(out, &refusal(&id, format!("malformed TOOL_CALL: {e}"))),
    };
    let out = out.clone();
    tokio::task::spawn_blocking(move || match answer(&msg) {
        Ok(result) => send(&out, &result),
        Err(panic) => {
            eprintln!("{panic}");
            // At once, answering nothing: a crash, as the runner should see it.
            std::process::exit(exit::ENGINE_PANIC);
        }
    });
}
