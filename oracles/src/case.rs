//! The seed format of the workspace targets (`envelope_apply`,
//! `write_patch_apply`): `PSCASE1\n` followed by one JSON object
//! `{"files": {path: content}, "dirs": [path], "params": {...}}`, where
//! `content` is a string or `{"base64": "..."}` as in corpus cases and
//! `params` are the tool's params. `extract-seeds` writes one per corpus
//! case; inputs without the magic are read with `arbitrary` instead.

use serde_json::{Map, Value};

/// The first bytes of a case-shaped input.
pub const MAGIC: &[u8] = b"PSCASE1\n";

/// A workspace and the params of one call.
#[derive(Debug)]
pub struct Case {
    /// (path, bytes, mode) of every regular file.
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// Directories that exist (parents of files exist anyway).
    pub dirs: Vec<String>,
    /// The tool's params.
    pub params: Value,
}

/// Read a case-shaped input; `None` when it is not one (or is malformed).
pub fn parse(data: &[u8]) -> Option<Case> {
    let body = data.strip_prefix(MAGIC)?;
    let v: Value = serde_json::from_slice(body).ok()?;
    let obj = v.as_object()?;
    let mut files = Vec::new();
    if let Some(map) = obj.get("files") {
        for (path, content) in map.as_object()? {
            files.push((path.clone(), content_bytes(content)?, 0o644));
        }
    }
    let mut dirs = Vec::new();
    if let Some(list) = obj.get("dirs") {
        for d in list.as_array()? {
            dirs.push(d.as_str()?.to_string());
        }
    }
    Some(Case {
        files,
        dirs,
        params: obj.get("params")?.clone(),
    })
}

/// Encode a case-shaped input.
pub fn encode(files: &Map<String, Value>, dirs: &[Value], params: &Value) -> Vec<u8> {
    let mut obj = Map::new();
    obj.insert("files".into(), Value::Object(files.clone()));
    obj.insert("dirs".into(), Value::Array(dirs.to_vec()));
    obj.insert("params".into(), params.clone());
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(Value::Object(obj).to_string().as_bytes());
    out
}

/// A corpus content value: a string, or `{"base64": "..."}`.
pub fn content_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Object(o) => base64_decode(o.get("base64")?.as_str()?),
        _ => None,
    }
}

/// Standard-alphabet base64, padding optional.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
