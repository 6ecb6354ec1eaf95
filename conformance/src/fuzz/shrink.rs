//! Shrinking: a disagreement reduced to a small case that still disagrees
//! the same way.
//!
//! Main function: [`shrink`]. It works on the case format (`given` and the
//! call's params), so it serves every tool alike: it tries candidates one at
//! a time — fewer files, links, directories, modes and ActiveFiles; fewer lines of a
//! file or of a multi-line param (an envelope), also a file line together
//! with the envelope line that quotes it; fewer array elements and object
//! members in the params (files, changes, lines of a batch); shorter lines;
//! simpler characters (ASCII for anything else) — and keeps the first that
//! still disagrees in at least one of the same
//! [kinds](super::Disagreement::kinds) (the caller's test), then starts over, until no candidate is kept. When a file's bytes change,
//! every param that quoted its SHA-256 is rewritten to the new one, so a
//! batch or a stale check stays about the same file.
//!
//! Cost: each candidate is one reference call and one executor call; the
//! number of candidates tried is bounded by the caller's budget
//! ([`Budget`]), whatever the case; the shrink stops there with what it has.

use std::collections::BTreeMap;

use patchspec_engine::hash::sha256_hex;
use serde_json::{Map, Value};

use crate::case::{Content, Given};

/// One state of a shrink: the workspace and session, and the params.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The workspace and session.
    pub given: Given,
    /// The params.
    pub call: Map<String, Value>,
}

/// How many candidates a shrink may try.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// At most this many checks (each: a reference call and an executor call).
    pub checks: usize,
}

/// What a shrink did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest candidate that still disagrees.
    pub candidate: Candidate,
    /// Candidates tried.
    pub checks: usize,
    /// Size before and after ([`size`]).
    pub size_before: usize,
    /// Size after.
    pub size_after: usize,
    /// The budget ran out before no candidate was left to try.
    pub budget_exhausted: bool,
}

/// The size a shrink reduces, in lines: every line of every file, every
/// line of every string param, one per symlink, directory and ActiveFiles
/// entry, and one per scalar of the params.
pub fn size(c: &Candidate) -> usize {
    fn lines(bytes: &[u8]) -> usize {
        if bytes.is_empty() {
            0
        } else {
            bytes.split(|&b| b == b'\n').count() - usize::from(bytes.ends_with(b"\n"))
        }
    }
    fn value(v: &Value) -> usize {
        match v {
            Value::String(s) => lines(s.as_bytes()).max(1),
            Value::Array(a) => a.iter().map(value).sum(),
            Value::Object(o) => o.values().map(value).sum(),
            _ => 1,
        }
    }
    c.given
        .files
        .values()
        .map(|f| lines(&f.bytes()).max(1))
        .sum::<usize>()
        + c.given.symlinks.len()
        + c.given.dirs.len()
        + c.given.session.active_files.len()
        + c.call.values().map(value).sum::<usize>()
}

/// Lines of `bytes`, each with its ending.
fn split_keep(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// Every way to make `bytes` smaller or simpler, biggest steps first.
fn smaller_bytes(bytes: &[u8]) -> Vec<Vec<u8>> {
    let lines = split_keep(bytes);
    let mut out = Vec::new();
    if lines.len() > 1 {
        // Halves, then single lines.
        let half = lines.len() / 2;
        out.push(lines[half..].concat());
        out.push(lines[..half].concat());
        for i in 0..lines.len() {
            let mut l = lines.clone();
            l.remove(i);
            out.push(l.concat());
        }
    }
    for (i, line) in lines.iter().enumerate() {
        let body_len = line.len()
            - line
                .iter()
                .rev()
                .take_while(|b| **b == b'\n' || **b == b'\r')
                .count();
        if body_len > 1 {
            let mut l: Vec<Vec<u8>> = lines.iter().map(|x| x.to_vec()).collect();
            let ending = l[i][body_len..].to_vec();
            let mut shorter = l[i][..body_len / 2].to_vec();
            // Never cut a UTF-8 sequence in two.
            while std::str::from_utf8(&shorter).is_err() && !shorter.is_empty() {
                shorter.pop();
            }
            shorter.extend_from_slice(&ending);
            l[i] = shorter;
            out.push(l.concat());
            // The second half too: what matters may be at the end of a line.
            let mut tail = lines[i][body_len / 2..body_len].to_vec();
            while std::str::from_utf8(&tail).is_err() && !tail.is_empty() {
                tail.remove(0);
            }
            tail.extend_from_slice(&ending);
            l[i] = tail;
            out.push(l.concat());
        }
        if let Ok(text) = std::str::from_utf8(line) {
            if !text.is_ascii() {
                let simple: String = text
                    .chars()
                    .map(|c| if c.is_ascii() { c } else { 'x' })
                    .collect();
                let mut l: Vec<Vec<u8>> = lines.iter().map(|x| x.to_vec()).collect();
                l[i] = simple.into_bytes();
                out.push(l.concat());
            }
        }
    }
    if !bytes.is_empty() {
        out.push(Vec::new());
    }
    out.retain(|b| b.as_slice() != bytes);
    out
}

/// Every smaller version of a params value (one change each).
fn smaller_values(v: &Value) -> Vec<Value> {
    match v {
        Value::String(s) => smaller_bytes(s.as_bytes())
            .into_iter()
            .filter_map(|b| String::from_utf8(b).ok())
            .map(Value::String)
            .collect(),
        Value::Array(items) => {
            let mut out = Vec::new();
            for i in 0..items.len() {
                let mut a = items.clone();
                a.remove(i);
                out.push(Value::Array(a));
            }
            for (i, item) in items.iter().enumerate() {
                for smaller in smaller_values(item) {
                    let mut a = items.clone();
                    a[i] = smaller;
                    out.push(Value::Array(a));
                }
            }
            out
        }
        Value::Object(map) => smaller_maps(map).into_iter().map(Value::Object).collect(),
        _ => Vec::new(),
    }
}

fn smaller_maps(map: &Map<String, Value>) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    for k in map.keys() {
        let mut m = map.clone();
        m.remove(k);
        out.push(m);
    }
    for (k, v) in map {
        for smaller in smaller_values(v) {
            let mut m = map.clone();
            m.insert(k.clone(), smaller);
            out.push(m);
        }
    }
    out
}

/// Rewrite every string of `v` equal to `old` (either case) as `new`.
fn rehash(v: &mut Value, old: &str, new: &str) {
    match v {
        Value::String(s) if s.eq_ignore_ascii_case(old) => *s = new.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| rehash(x, old, new)),
        Value::Object(o) => o.values_mut().for_each(|x| rehash(x, old, new)),
        _ => {}
    }
}

/// `c` with file `path`'s bytes replaced (and the params' hashes of it).
fn with_file(c: &Candidate, path: &str, bytes: Vec<u8>) -> Candidate {
    let mut next = c.clone();
    let old = next.given.files[path].bytes();
    let (old_sha, new_sha) = (sha256_hex(&old), sha256_hex(&bytes));
    let mode = next.given.files[path].mode();
    let mut content = Content::from_bytes(&bytes);
    if let Some(m) = mode {
        content = match content {
            Content::Text(t) => Content::Entry(crate::case::FileEntry {
                text: Some(t),
                mode: Some(format!("{m:o}")),
                ..Default::default()
            }),
            Content::Entry(e) => Content::Entry(crate::case::FileEntry {
                mode: Some(format!("{m:o}")),
                ..e
            }),
        };
    }
    next.given.files.insert(path.to_string(), content);
    let mut params = Value::Object(std::mem::take(&mut next.call));
    rehash(&mut params, &old_sha, &new_sha);
    if let Value::Object(m) = params {
        next.call = m;
    }
    next
}

/// Every candidate one step smaller than `c`, biggest steps first.
fn candidates(c: &Candidate) -> Vec<Candidate> {
    let mut out = Vec::new();
    let g = &c.given;
    for path in g.files.keys() {
        let mut next = c.clone();
        next.given.files.remove(path);
        out.push(next);
    }
    for (path, content) in &g.files {
        if content.mode().is_some() {
            let mut next = c.clone();
            next.given
                .files
                .insert(path.clone(), Content::from_bytes(&content.bytes()));
            out.push(next);
        }
    }
    for path in g.symlinks.keys() {
        let mut next = c.clone();
        next.given.symlinks.remove(path);
        out.push(next);
    }
    for i in 0..g.dirs.len() {
        let mut next = c.clone();
        next.given.dirs.remove(i);
        out.push(next);
    }
    for key in g.session.active_files.keys() {
        let mut next = c.clone();
        next.given.session.active_files.remove(key);
        out.push(next);
    }
    if g.session.limits.create_file_max_bytes.is_some() {
        let mut next = c.clone();
        next.given.session.limits.create_file_max_bytes = None;
        out.push(next);
    }
    // A file line and the envelope line that quotes it, together.
    let quoting: Vec<(&String, &Value)> = c
        .call
        .iter()
        .filter(|(_, v)| v.as_str().is_some_and(|s| s.contains('\n')))
        .collect();
    for (path, content) in &g.files {
        let bytes = content.bytes();
        let lines = split_keep(&bytes);
        for i in 0..lines.len() {
            let body = String::from_utf8_lossy(lines[i]);
            let body = body.trim_end_matches(['\n', '\r']);
            for (key, text) in &quoting {
                let text = text.as_str().unwrap_or_default();
                let mut patch: Vec<&str> = text.split_inclusive('\n').collect();
                let Some(j) = patch.iter().position(|l| {
                    let l = l.trim_end_matches(['\n', '\r']);
                    (l.starts_with(' ') || l.starts_with('-')) && &l[1..] == body
                }) else {
                    continue;
                };
                patch.remove(j);
                let mut l = lines.clone();
                l.remove(i);
                let mut next = with_file(c, path, l.concat());
                next.call
                    .insert((*key).clone(), Value::String(patch.concat()));
                out.push(next);
            }
        }
    }
    for (path, content) in &g.files {
        for smaller in smaller_bytes(&content.bytes()) {
            out.push(with_file(c, path, smaller));
        }
    }
    for smaller in smaller_maps(&c.call) {
        let mut next = c.clone();
        next.call = smaller;
        out.push(next);
    }
    for (key, text) in &g.session.active_files {
        for smaller in smaller_bytes(text.as_bytes()) {
            if let Ok(s) = String::from_utf8(smaller) {
                let mut next = c.clone();
                next.given.session.active_files.insert(key.clone(), s);
                out.push(next);
            }
        }
    }
    out
}

/// Shrink `start` while `still_disagrees` holds, within `budget`.
pub fn shrink(
    start: Candidate,
    budget: Budget,
    still_disagrees: &mut dyn FnMut(&Candidate) -> bool,
) -> Shrunk {
    let size_before = size(&start);
    let mut current = start;
    let mut checks = 0;
    let mut seen: BTreeMap<String, ()> = BTreeMap::new();
    'outer: loop {
        for next in candidates(&current) {
            if size(&next) > size(&current) {
                continue;
            }
            let key = serde_json::to_string(&(&next.given, &next.call)).unwrap_or_default();
            if seen.insert(key, ()).is_some() {
                continue;
            }
            if checks >= budget.checks {
                return Shrunk {
                    size_after: size(&current),
                    candidate: current,
                    checks,
                    size_before,
                    budget_exhausted: true,
                };
            }
            checks += 1;
            if still_disagrees(&next) {
                current = next;
                continue 'outer;
            }
        }
        break;
    }
    Shrunk {
        size_after: size(&current),
        candidate: current,
        checks,
        size_before,
        budget_exhausted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidate(files: &[(&str, &str)], call: Value) -> Candidate {
        Candidate {
            given: Given {
                files: files
                    .iter()
                    .map(|(p, t)| (p.to_string(), Content::Text(t.to_string())))
                    .collect(),
                ..Given::default()
            },
            call: call.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn shrinks_to_what_the_property_needs_and_keeps_hashes_in_step() {
        let start = candidate(
            &[("a.txt", "one\ntwo \nthree\nfour\n"), ("b.txt", "x\ny\n")],
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n",
                   "sha": sha256_hex(b"one\ntwo \nthree\nfour\n")}),
        );
        // The "disagreement": a.txt still has a line ending in a space, and
        // `sha` is its hash.
        let mut check = |c: &Candidate| {
            c.given.files.get("a.txt").is_some_and(|f| {
                let b = f.bytes();
                String::from_utf8_lossy(&b)
                    .lines()
                    .any(|l| l.ends_with(' '))
                    && c.call.get("sha") == Some(&json!(sha256_hex(&b)))
            })
        };
        let shrunk = shrink(start, Budget { checks: 10_000 }, &mut check);
        assert!(!shrunk.budget_exhausted);
        assert_eq!(shrunk.candidate.given.files.len(), 1);
        let a = shrunk.candidate.given.files["a.txt"].bytes();
        assert!(a.len() <= 3, "{:?}", String::from_utf8_lossy(&a));
        assert!(!shrunk.candidate.call.contains_key("patch"));
        assert!(shrunk.size_after < shrunk.size_before);
    }

    #[test]
    fn the_budget_bounds_the_checks() {
        let start = candidate(
            &[("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n")],
            json!({"p": "x\ny\nz\n"}),
        );
        let mut calls = 0;
        let shrunk = shrink(start, Budget { checks: 7 }, &mut |_| {
            calls += 1;
            false
        });
        assert_eq!((calls, shrunk.checks), (7, 7));
        assert!(shrunk.budget_exhausted);
    }
}
