//! One incoming MCP message, read from its bytes: the typed message, or the
//! JSON-RPC error that answers it.
//!
//! Both transports of `patchspec mcp` read a message through
//! [`read_message`]: a stdio line ([`super::stdio`]) and an HTTP body
//! ([`super::http`]). rmcp's own readers drop a message serde rejects
//! (nesting deeper than 128, a number like `1e400`, a lone surrogate
//! `"\ud800"`, invalid UTF-8), and its client then waits forever. Here every
//! message that carries an `id` gets exactly one answer: the typed message
//! goes to rmcp, which answers it, or [`read_message`] returns the error that
//! answers it. A message without an `id` that cannot be read is dropped
//! (JSON-RPC answers no notification, and text that is not JSON might be
//! anything), except JSON that is neither a request nor a notification,
//! answered `-32600` with id `null` as JSON-RPC asks.
//!
//! The `id` of a message that does not parse is found by [`peek_id`], a scan
//! of the top-level object that skips each member with serde_json's
//! non-recursive skipper, so it finds the id before the first point where
//! the text stops being JSON, and in a message cut at the size limit.
//!
//! What it leaves out: batches (a JSON array), which MCP removed in
//! 2025-06-18; one is answered with a single `-32600` (id `null`).

use rmcp::model::ClientJsonRpcMessage;
use serde::de::IgnoredAny;
use serde_json::{json, Value};

/// The largest message `patchspec mcp` reads, on either transport: a stdio
/// line (without its newline) or an HTTP request body. 16 MiB, rmcp's own
/// stdio bound; a larger one is answered with [`TOO_LARGE`].
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC: the text is not JSON (or not UTF-8).
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: JSON, but not a JSON-RPC message (or over the size limit).
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC: a request whose members cannot be typed (nesting deeper than
/// 128, a number out of range, a lone surrogate).
pub const INVALID_PARAMS: i32 = -32602;
/// The code of [`too_large`]'s answer (`-32600`: the request cannot be taken).
pub const TOO_LARGE: i32 = INVALID_REQUEST;

/// What answers a message that could not be read.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The message's `id` (`Value::Null` when it had one that is not a
    /// valid id); `None`: the message had no id, so nothing answers it.
    pub id: Option<Value>,
    /// The JSON-RPC error code.
    pub code: i32,
    /// Why, for a human.
    pub message: String,
}

impl Refusal {
    /// The JSON-RPC error response, or `None` for a message without an id.
    pub fn response(&self) -> Option<Value> {
        let id = self.id.as_ref()?;
        Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": self.code, "message": self.message},
        }))
    }
}

/// Read one message from its bytes (one stdio line, one HTTP body).
pub fn read_message(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Refusal> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(too_large(bytes, &[]));
    }
    let typed_error = match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(message) => return Ok(message),
        Err(e) => e,
    };
    let (code, message) = if let Err(e) = std::str::from_utf8(bytes) {
        (
            PARSE_ERROR,
            format!("Parse error: the message is not UTF-8 ({e})"),
        )
    } else if let Err(e) = serde_json::from_slice::<IgnoredAny>(bytes) {
        (PARSE_ERROR, format!("Parse error: {e}"))
    } else if let Err(e) = serde_json::from_slice::<Value>(bytes) {
        // JSON, but past what serde reads: nesting deeper than 128, a
        // number out of range, a lone surrogate.
        let code = if has_method(bytes) {
            INVALID_PARAMS
        } else {
            INVALID_REQUEST
        };
        (code, format!("the message cannot be read: {e}"))
    } else if bytes.trim_ascii_start().starts_with(b"[") {
        return Err(Refusal {
            id: Some(Value::Null),
            code: INVALID_REQUEST,
            message: "Invalid request: batches are not supported".into(),
        });
    } else {
        // JSON-RPC answers an invalid request object with id null when it
        // has none, as rmcp did; a notification (it has a method) is not
        // answered even when broken.
        let id = match peek_id(bytes) {
            Peeked::NoId if !has_method(bytes) => Peeked::BadId,
            found => found,
        };
        return Err(Refusal {
            id: id.answer_to(),
            code: INVALID_REQUEST,
            message: format!("Invalid request: not a JSON-RPC message ({typed_error})"),
        });
    };
    Err(Refusal {
        id: peek_id(bytes).answer_to(),
        code,
        message,
    })
}

/// The answer to a message over [`MAX_MESSAGE_BYTES`], of which the reader
/// kept `head` (its start) and `tail` (its last bytes).
pub fn too_large(head: &[u8], tail: &[u8]) -> Refusal {
    let id = match peek_id(head) {
        Peeked::NoId => tail_id(tail),
        found => found,
    };
    Refusal {
        id: id.answer_to(),
        code: TOO_LARGE,
        message: format!(
            "request too large: over {MAX_MESSAGE_BYTES} bytes, the most patchspec mcp \
             reads in one message (one limit for stdio lines and HTTP bodies)"
        ),
    }
}

/// What [`peek_id`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Peeked {
    /// An `id` member that is a JSON-RPC id (a string, a number or null).
    Id(Value),
    /// An `id` member that is not one (or that could not be read).
    BadId,
    /// No `id` member before the text stopped being readable.
    NoId,
}

impl Peeked {
    /// The id an answer carries: the id, `null` for a bad one, `None` when
    /// there is none (nothing answers).
    fn answer_to(self) -> Option<Value> {
        match self {
            Peeked::Id(id) => Some(id),
            Peeked::BadId => Some(Value::Null),
            Peeked::NoId => None,
        }
    }
}

/// The top-level `id` member of a JSON object, read from the start of
/// `bytes` up to the first point where they stop being JSON (or end).
pub fn peek_id(bytes: &[u8]) -> Peeked {
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Peeked::NoId;
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        let mut keys = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<String>();
        let Some(Ok(key)) = keys.next() else {
            return Peeked::NoId;
        };
        at = skip_ws(bytes, at + keys.byte_offset());
        if bytes.get(at) != Some(&b':') {
            return Peeked::NoId;
        }
        at += 1;
        let rest = &bytes[at..];
        if key == "id" {
            let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
            return match values.next() {
                Some(Ok(id @ (Value::String(_) | Value::Number(_) | Value::Null))) => {
                    Peeked::Id(id)
                }
                _ => Peeked::BadId,
            };
        }
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
        let Some(Ok(_)) = values.next() else {
            return Peeked::NoId;
        };
        at = skip_ws(bytes, at + values.byte_offset());
        if bytes.get(at) != Some(&b',') {
            return Peeked::NoId;
        }
        at += 1;
    }
}

/// The `id` of a message from its last bytes: `,"id":V}` at its very end
/// (JavaScript SDKs write the id last). One closing brace after `V` means
/// the member is the top-level object's: a nested object would close twice.
fn tail_id(tail: &[u8]) -> Peeked {
    let tail = tail.trim_ascii_end();
    let Some(body) = tail.strip_suffix(b"}") else {
        return Peeked::NoId;
    };
    let body = body.trim_ascii_end();
    // The value: a number or a string without escapes, scanning back.
    let start = if body.ends_with(b"\"") {
        match body[..body.len() - 1].iter().rposition(|&b| b == b'"') {
            Some(open) if !body[open..body.len() - 1].contains(&b'\\') => open,
            _ => return Peeked::NoId,
        }
    } else {
        let digits = body
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'e' | b'E' | b'+'))
            .count();
        body.len() - digits
    };
    let Ok(id) = serde_json::from_slice::<Value>(&body[start..]) else {
        return Peeked::NoId;
    };
    let before = body[..start].trim_ascii_end();
    let Some(before) = before.strip_suffix(b":") else {
        return Peeked::NoId;
    };
    let Some(before) = before.trim_ascii_end().strip_suffix(b"\"id\"") else {
        return Peeked::NoId;
    };
    if before.trim_ascii_end().ends_with(b",") && matches!(id, Value::String(_) | Value::Number(_))
    {
        Peeked::Id(id)
    } else {
        Peeked::NoId
    }
}

/// Does the message have a top-level string `method` (a request or a
/// notification)? Read like [`peek_id`].
fn has_method(bytes: &[u8]) -> bool {
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return false;
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        let mut keys = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<String>();
        let Some(Ok(key)) = keys.next() else {
            return false;
        };
        at = skip_ws(bytes, at + keys.byte_offset());
        if bytes.get(at) != Some(&b':') {
            return false;
        }
        at += 1;
        let rest = &bytes[at..];
        if key == "method" {
            let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
            return matches!(values.next(), Some(Ok(_)));
        }
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
        let Some(Ok(_)) = values.next() else {
            return false;
        };
        at = skip_ws(bytes, at + values.byte_offset());
        if bytes.get(at) != Some(&b',') {
            return false;
        }
        at += 1;
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &[u8]) -> Refusal {
        read_message(text).expect_err("the message must be refused")
    }

    fn nested(depth: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"apply_patch","arguments":{{"x":{}{}}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn a_valid_message_is_typed() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(read_message(ok).is_ok());
        assert!(read_message(nested(100).as_bytes()).is_ok());
    }

    #[test]
    fn every_unreadable_message_with_an_id_is_answered_with_its_id() {
        let cases: Vec<(Vec<u8>, i32)> = vec![
            (nested(200).into_bytes(), INVALID_PARAMS),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"n":1e400}}}"#.to_vec(),
                INVALID_PARAMS,
            ),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"s":"\ud800"}}}"#.to_vec(),
                INVALID_PARAMS,
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}".to_vec(),
                PARSE_ERROR,
            ),
            (br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{,}}"#.to_vec(), PARSE_ERROR),
            (br#"{"id":7,"jsonrpc":"2.0"}"#.to_vec(), INVALID_REQUEST),
            (br#"{"id":7,"method":5}"#.to_vec(), INVALID_REQUEST),
        ];
        for (text, code) in cases {
            let r = refused(&text);
            assert_eq!(r.id, Some(json!(7)), "{}", String::from_utf8_lossy(&text));
            assert_eq!(
                r.code,
                code,
                "{}: {}",
                String::from_utf8_lossy(&text),
                r.message
            );
            let answer = r.response().unwrap();
            assert_eq!(answer["id"], 7);
            assert_eq!(answer["error"]["code"], code);
        }
    }

    #[test]
    fn a_bad_id_is_answered_with_null_and_no_id_is_not_answered() {
        let r = refused(br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#);
        assert_eq!(r.id, Some(Value::Null));
        let r = refused(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(r.id, Some(Value::Null));
        let r = refused(br#"{"jsonrpc":"2.0","method":"notifications/x","params":1e400}"#);
        assert_eq!(r.id, None);
        assert_eq!(r.response(), None);
        assert_eq!(refused(b"not json").id, None);
        // JSON that is no JSON-RPC message: answered with null, as JSON-RPC
        // asks; a broken notification is not.
        assert_eq!(refused(br#"{"hello":1}"#).id, Some(Value::Null));
        assert_eq!(refused(br#"{"method":"n","params":3}"#).id, None);
        assert_eq!(refused(b"[1]").id, Some(Value::Null));
    }

    #[test]
    fn a_message_over_the_limit_is_answered_from_its_head_or_its_tail() {
        let r = too_large(br#"{"jsonrpc":"2.0","id":"a","params":{"x":"aaaa"#, b"");
        assert_eq!(r.id, Some(json!("a")));
        assert_eq!(r.code, TOO_LARGE);
        assert!(
            r.message.contains(&MAX_MESSAGE_BYTES.to_string()),
            "{}",
            r.message
        );
        let r = too_large(
            br#"{"jsonrpc":"2.0","params":{"x":"aaaa"#,
            br#"aaa"}},"id":12 } "#,
        );
        assert_eq!(r.id, Some(json!(12)));
        // A nested id is not the message's.
        let r = too_large(br#"{"params":{"x":"aa"#, br#"aaa","id":12}}"#);
        assert_eq!(r.id, None);
    }
}
