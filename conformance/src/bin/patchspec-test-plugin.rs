//! A purpose-built WebSocket plugin for the runner's own tests (not shipped).
//!
//! It connects to the URL in `$PATCHSPEC_WS_URL` (or after `--connect`) with
//! the *blocking* tungstenite API, as a third-party plugin would, serves every
//! `TOOL_CALL` on its own thread (so calls overlap), implements the fake tool
//! `test.write {path, content}` (write the file, answer
//! `{"success": true, "path": path, "maxInFlight": n}`) and hands every other
//! tool to the reference engine. A case picks a misbehaviour with the param
//! `misbehave`:
//!
//! | misbehave | what the plugin does | the runner must report |
//! |---|---|---|
//! | `root-fields` | `toolCallId`, `success`, `result` at the root, no `data` | error (protocol) |
//! | `wrong-id` | answers with `data.toolCallId` = the call's + `-not` | error (protocol), `⚠️` logged |
//! | `never-made` | first a result for a toolCallId never sent, then the right answer | error (protocol) when it is the only call pending, `⚠️` logged |
//! | `never-made-in-flight` | the same once an `after-never-made` call is in flight | pass; a run-level error, `⚠️` logged |
//! | `after-never-made` | answers once a `never-made-in-flight` call has sent its unknown toolCallId | pass (pending when the unknown id arrives) |
//! | `private` | also writes `.private/trash/x` | pass when `.private` is declared (its HELLO) |
//! | `two-late` | the right answer, then the same again once the next `TOOL_CALL` arrives | error (protocol), pinned on this call after the fact |
//! | `two` | two results for the call, in one write | error (protocol) |
//! | `disconnect` | drops the connection without answering, reconnects 100 ms later | error (crash); the next case passes |
//! | `silent` | never answers | error (timeout) |
//! | `late` | answers once the next `TOOL_CALL` arrives (the runner gave up on this one), before serving it | error (timeout); the late answer harms no other case |
//! | `exit` | exits with code 3 without answering | error (crash); the runner restarts it |
//! | `garbage` | sends text that is not JSON | error (protocol) |
//! | `gather` | answers once four `gather` calls are in flight at once | pass (for the concurrency test) |
//! | `echo` | answers `{"success": true, "echo": <the TOOL_CALL received>}`, any tool | pass |
//!
//! It answers patchspec's `HELLO` (declaring `test.write` and the engine's
//! tools, and the private path `.private`) unless `--no-hello` is given.
//! Flags: `--always MODE` misbehaves on every call; `--bad-path` connects to
//! the wrong path (and is rejected); `--no-query` leaves out `projectKey`.
//!
//! The modes that wait wait for an event of the run, never for a span of
//! time, so a loaded machine cannot reorder them; each wait gives up after
//! [`HANG_GUARD`] (the test then fails on its outcome, it does not hang).

use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

enum Action {
    Send(Vec<String>),
    Disconnect,
    Exit(i32),
}

fn result_message(id: &str, success: bool, doc: &Value) -> String {
    json!({"type": "TOOL_RESULT", "data": {"toolCallId": id, "success": success, "result": doc.to_string()}}).to_string()
}

/// How long a waiting mode waits for its event before it answers anyway.
const HANG_GUARD: Duration = Duration::from_secs(10);

/// How many `gather` calls are released together.
const GATHER: usize = 4;

struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
    /// The events the waiting modes wait for.
    events: Mutex<Events>,
    changed: Condvar,
    /// Answers held for the next call (`late`, `two-late`'s second): the
    /// reader writes them when a `TOOL_CALL` arrives, before serving it.
    for_next_call: Mutex<Vec<String>>,
}

#[derive(Default)]
struct Events {
    /// `gather` calls waiting for their group to fill.
    gathering: usize,
    /// Groups of `gather` calls released so far.
    groups: u64,
    /// `after-never-made` calls in flight.
    awaiting_never_made: usize,
    /// A `never-made-in-flight` call has queued its unknown toolCallId.
    never_made_sent: bool,
}

impl InFlight {
    fn events(&self) -> MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait (at most [`HANG_GUARD`]) while `blocked` holds.
    fn wait_while(&self, mut blocked: impl FnMut(&mut Events) -> bool) {
        let guard = self.events();
        let _ = self
            .changed
            .wait_timeout_while(guard, HANG_GUARD, |e| blocked(e));
    }

    /// Hold a `gather` call until [`GATHER`] of them are in flight.
    fn gather(&self) {
        let generation = {
            let mut e = self.events();
            e.gathering += 1;
            if e.gathering == GATHER {
                e.gathering = 0;
                e.groups += 1;
                self.changed.notify_all();
                return;
            }
            e.groups
        };
        self.wait_while(|e| e.groups == generation);
    }

    /// Hold `text` until the next `TOOL_CALL` arrives.
    fn hold_for_next_call(&self, text: String) {
        self.for_next_call
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text);
    }

    /// Hold an `after-never-made` call until the unknown id is queued.
    fn after_never_made(&self) {
        self.events().awaiting_never_made += 1;
        self.changed.notify_all();
        self.wait_while(|e| !e.never_made_sent);
        self.events().awaiting_never_made -= 1;
    }
}

/// Serve one TOOL_CALL (on its own thread).
fn answer(call: &Value, always: Option<&str>, inflight: &InFlight) -> Option<Action> {
    let id = call["toolCallId"].as_str().unwrap_or_default().to_owned();
    let root = Path::new(call["workspaceRoot"].as_str().unwrap_or("."));
    let params = &call["params"];
    let mode = always
        .or_else(|| params["misbehave"].as_str())
        .unwrap_or("");
    let tool = call["toolName"].as_str().unwrap_or_default();
    if mode == "echo" {
        let doc = json!({"success": true, "echo": call});
        return Some(Action::Send(vec![result_message(&id, true, &doc)]));
    }
    let n = inflight.now.fetch_add(1, Ordering::SeqCst) + 1;
    inflight.max.fetch_max(n, Ordering::SeqCst);
    match mode {
        "gather" => inflight.gather(),
        "never-made-in-flight" => inflight.wait_while(|e| e.awaiting_never_made == 0),
        "after-never-made" => inflight.after_never_made(),
        _ => {}
    }
    let (success, doc) = if tool == "test.write" {
        let path = params["path"].as_str().unwrap_or("out.txt");
        let target = patchspec_conformance::rel_path::under(root, path);
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&target, params["content"].as_str().unwrap_or_default());
        let max = inflight.max.load(Ordering::SeqCst);
        (
            true,
            json!({"success": true, "path": path, "maxInFlight": max}),
        )
    } else {
        let session = patchspec_engine::dispatch::Session {
            active_files: serde_json::from_value(call["session"]["activeFiles"].clone())
                .unwrap_or_default(),
            ..Default::default()
        };
        let outcome = patchspec_engine::dispatch::call(&patchspec_engine::dispatch::ToolCall {
            tool_name: tool,
            params,
            workspace_root: root,
            session: &session,
        });
        (outcome.success, outcome.result)
    };
    inflight.now.fetch_sub(1, Ordering::SeqCst);
    let right = result_message(&id, success, &doc);
    match mode {
        "root-fields" => Some(Action::Send(vec![json!({"type": "TOOL_RESULT", "toolCallId": id, "success": success, "result": doc.to_string()}).to_string()])),
        "wrong-id" => Some(Action::Send(vec![result_message(&format!("{id}-not"), success, &doc)])),
        "two-late" => {
            inflight.hold_for_next_call(right.clone());
            Some(Action::Send(vec![right]))
        }
        "private" => {
            let _ = std::fs::create_dir_all(root.join(".private/trash"));
            let _ = std::fs::write(root.join(".private/trash/x"), "kept");
            Some(Action::Send(vec![right]))
        }
        "never-made" | "never-made-in-flight" => Some(Action::Send(vec![
            result_message(&format!("never-made-{}", std::process::id()), true, &json!({})),
            right,
        ])),
        "two" => Some(Action::Send(vec![right.clone(), right])),
        "disconnect" => Some(Action::Disconnect),
        "silent" => None,
        "late" => {
            inflight.hold_for_next_call(right);
            None
        }
        "exit" => Some(Action::Exit(3)),
        "garbage" => Some(Action::Send(vec!["this is not a message".into()])),
        _ => Some(Action::Send(vec![right])),
    }
}

fn hello() -> String {
    let mut tools = vec!["test.write".to_owned()];
    tools.extend(
        patchspec_engine::dispatch::SUPPORTED_TOOLS
            .iter()
            .map(|s| s.to_string()),
    );
    json!({
        "type": "HELLO", "protocolVersion": 1,
        "implementation": {"name": "patchspec-test-plugin", "version": "0.0.0", "language": "Rust"},
        "tools": tools, "privatePaths": [".private"]
    })
    .to_string()
}

fn connect(url: &str) -> Result<WebSocket<TcpStream>, String> {
    let rest = url.strip_prefix("ws://").ok_or("not a ws:// URL")?;
    let host = rest.split('/').next().unwrap_or_default();
    let stream = TcpStream::connect(host).map_err(|e| format!("connect {host}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (ws, _) = tungstenite::client(url, stream).map_err(|e| format!("handshake: {e}"))?;
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_millis(2)))
        .map_err(|e| e.to_string())?;
    Ok(ws)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let always = value("--always");
    let mut url = value("--connect")
        .or_else(|| std::env::var("PATCHSPEC_WS_URL").ok())
        .unwrap_or_else(|| {
            eprintln!("patchspec-test-plugin: no URL (--connect or $PATCHSPEC_WS_URL)");
            std::process::exit(2)
        });
    if flag("--bad-path") {
        url = url.replace("/ws/agent/chat", "/ws/other");
    }
    if flag("--no-query") {
        url = url.split('?').next().unwrap_or_default().to_owned();
    }
    let inflight = Arc::new(InFlight {
        now: AtomicUsize::new(0),
        max: AtomicUsize::new(0),
        events: Mutex::default(),
        changed: Condvar::new(),
        for_next_call: Mutex::default(),
    });
    let (tx, rx) = mpsc::channel::<Action>();
    loop {
        let mut ws = match connect(&url) {
            Ok(ws) => ws,
            Err(e) => {
                eprintln!("patchspec-test-plugin: {e}");
                std::process::exit(1);
            }
        };
        let reconnect = loop {
            match ws.read() {
                Ok(Message::Text(text)) => {
                    let call: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                    if call["type"] == "HELLO" && !flag("--no-hello") {
                        let _ = ws.send(Message::text(hello()));
                    }
                    if call["type"] == "TOOL_CALL" {
                        // The runner moved on: what was held for the next
                        // call arrives now, while this call is pending.
                        let held: Vec<String> = std::mem::take(
                            &mut *inflight
                                .for_next_call
                                .lock()
                                .unwrap_or_else(|e| e.into_inner()),
                        );
                        if !held.is_empty() {
                            for text in held {
                                let _ = ws.write(Message::text(text));
                            }
                            let _ = ws.flush();
                        }
                        let (tx, always, inflight) = (tx.clone(), always.clone(), inflight.clone());
                        std::thread::spawn(move || {
                            let never_made_in_flight =
                                call["params"]["misbehave"] == "never-made-in-flight";
                            if let Some(action) = answer(&call, always.as_deref(), &inflight) {
                                let _ = tx.send(action);
                            }
                            if never_made_in_flight {
                                // Queued: the held calls' answers follow it.
                                inflight.events().never_made_sent = true;
                                inflight.changed.notify_all();
                            }
                        });
                    }
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    std::process::exit(0)
                }
                Err(e) => {
                    eprintln!("patchspec-test-plugin: {e}");
                    std::process::exit(1);
                }
            }
            let mut reconnect = false;
            while let Ok(action) = rx.try_recv() {
                match action {
                    Action::Send(burst) => {
                        // One flush: a burst arrives together.
                        for text in burst {
                            let _ = ws.write(Message::text(text));
                        }
                        let _ = ws.flush();
                    }
                    Action::Disconnect => reconnect = true,
                    Action::Exit(code) => std::process::exit(code),
                }
            }
            if reconnect {
                break true;
            }
        };
        if reconnect {
            eprintln!("patchspec-test-plugin: dropping the connection");
            let _ = ws.get_ref().shutdown(std::net::Shutdown::Both);
            drop(ws);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
