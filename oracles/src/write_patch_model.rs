//! The independent model of `workspace_write_patch` (TUL-002 as decided in
//! docs/clarifications.md, C-wp-*): which batches are valid, what a valid
//! batch does to a file's bytes, and how docPaths resolve in a workspace
//! without symlinks.
//!
//! Written as rules, not as an algorithm: acceptance is a conjunction of
//! per-field predicates, and the ordering rule is checked pairwise
//! (O(n²) changes); the applier places every change by its original line
//! numbers and joins the lines once.

use std::collections::BTreeMap;

use patchspec_engine::hash::sha256_hex;
use serde_json::{Map, Value};

use super::envelope_model::{join_lines, split_lines};
use super::memfs::Node;

/// One change of a valid batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MChange {
    /// Insert after line `after` (0: top).
    Insert {
        /// `afterLine`.
        after: u64,
        /// `newLines`.
        lines: Vec<String>,
    },
    /// Replace (`new: Some`) or delete (`new: None`) lines `start..=end`.
    Range {
        /// `startLine`.
        start: u64,
        /// `endLine`.
        end: u64,
        /// `expectedOriginalLines`.
        expected: Vec<String>,
        /// `newLines` of a replace.
        new: Option<Vec<String>>,
    },
}

/// One file of a valid batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MFile {
    /// `docPath`.
    pub doc_path: String,
    /// `originalSha256`, as given.
    pub sha: String,
    /// `fileKey`, `fileLabel`.
    pub key_label: (Option<String>, Option<String>),
    /// The changes, with their `changeKey` and `description`.
    pub changes: Vec<(MChange, Option<String>, Option<String>)>,
}

/// A valid batch: `batchKey`, `batchLabel`, files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MBatch {
    /// `batchKey`, `batchLabel`.
    pub key_label: (Option<String>, Option<String>),
    /// The files, in order.
    pub files: Vec<MFile>,
}

/// A field, with `null` read as absent.
fn get<'v>(o: &'v Map<String, Value>, k: &str) -> Option<&'v Value> {
    o.get(k).filter(|v| !v.is_null())
}

fn only(o: &Map<String, Value>, allowed: &[&str]) -> Option<()> {
    o.keys()
        .all(|k| allowed.contains(&k.as_str()))
        .then_some(())
}

/// An optional string: absent/null → `None`; a string → `Some`; else invalid.
fn opt_str(o: &Map<String, Value>, k: &str) -> Option<Option<String>> {
    match get(o, k) {
        None => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(_) => None,
    }
}

fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) if n.is_i64() => n.as_i64().map(i128::from),
        Value::Number(n) if n.is_u64() => n.as_u64().map(i128::from),
        _ => None,
    }
}

fn lines(v: Option<&Value>, new_lines: bool) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for item in v?.as_array()? {
        let s = item.as_str()?;
        if s.contains('\n') || (new_lines && s.ends_with('\r')) {
            return None;
        }
        out.push(s.to_string());
    }
    Some(out)
}

fn change(v: &Value) -> Option<(MChange, Option<String>, Option<String>)> {
    let o = v.as_object()?;
    only(
        o,
        &[
            "changeId",
            "changeKey",
            "operation",
            "description",
            "afterLine",
            "startLine",
            "endLine",
            "expectedOriginalLines",
            "newLines",
        ],
    )?;
    let key = opt_str(o, "changeKey")?;
    let description = opt_str(o, "description")?;
    let absent = |fields: &[&str]| fields.iter().all(|f| get(o, f).is_none());
    let op = match get(o, "operation")?.as_str()? {
        "insert" => {
            if !absent(&["startLine", "endLine", "expectedOriginalLines"]) {
                return None;
            }
            let after = u64::try_from(integer(get(o, "afterLine")?)?).ok()?;
            let new = lines(get(o, "newLines"), true)?;
            if new.is_empty() {
                return None;
            }
            MChange::Insert { after, lines: new }
        }
        op @ ("replace" | "delete") => {
            let forbidden: &[&str] = if op == "delete" {
                &["afterLine", "newLines"]
            } else {
                &["afterLine"]
            };
            if !absent(forbidden) {
                return None;
            }
            let start = integer(get(o, "startLine")?)?;
            let end = integer(get(o, "endLine")?)?;
            if start < 1 || end < start {
                return None;
            }
            let expected = lines(get(o, "expectedOriginalLines"), false)?;
            if expected.len() as i128 != end - start + 1 {
                return None;
            }
            let new = if op == "replace" {
                Some(lines(get(o, "newLines"), true)?)
            } else {
                None
            };
            MChange::Range {
                start: u64::try_from(start).ok()?,
                end: u64::try_from(end).ok()?,
                expected,
                new,
            }
        }
        _ => return None,
    };
    Some((op, key, description))
}

/// Where a change sits on the doubled line axis, and the first position
/// the next change may take (C-wp-order).
fn place(c: &MChange) -> (u128, u128) {
    match c {
        MChange::Insert { after, .. } => {
            let k = u128::from(*after);
            (2 * k + 1, 2 * k + 2)
        }
        MChange::Range { start, end, .. } => (2 * u128::from(*start), 2 * u128::from(*end) + 1),
    }
}

fn file(v: &Value) -> Option<MFile> {
    let o = v.as_object()?;
    only(
        o,
        &[
            "filePatchId",
            "fileKey",
            "docPath",
            "originalSha256",
            "fileLabel",
            "changes",
        ],
    )?;
    let key = opt_str(o, "fileKey")?;
    let label = opt_str(o, "fileLabel")?;
    let doc = get(o, "docPath")?.as_str()?;
    if doc.trim().is_empty() || doc != doc.to_lowercase() {
        return None;
    }
    let sha = get(o, "originalSha256")?.as_str()?;
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let list = get(o, "changes")?.as_array()?;
    if list.is_empty() {
        return None;
    }
    let changes: Vec<_> = list.iter().map(change).collect::<Option<_>>()?;
    // Every later change: at or after every earlier one, and clear of it.
    for (j, (cj, _, _)) in changes.iter().enumerate() {
        let (key_j, _) = place(cj);
        for (ci, _, _) in &changes[..j] {
            let (key_i, frontier_i) = place(ci);
            if key_j < key_i || key_j < frontier_i {
                return None;
            }
        }
    }
    Some(MFile {
        doc_path: doc.to_string(),
        sha: sha.to_string(),
        key_label: (key, label),
        changes,
    })
}

/// The batch if it is valid, `None` if the validator must refuse it.
pub fn validate(v: &Value) -> Option<MBatch> {
    let o = v.as_object()?;
    only(o, &["batchId", "batchKey", "batchLabel", "files"])?;
    let key = opt_str(o, "batchKey")?;
    let label = opt_str(o, "batchLabel")?;
    let list = get(o, "files")?.as_array()?;
    if list.is_empty() {
        return None;
    }
    let files: Vec<MFile> = list.iter().map(file).collect::<Option<_>>()?;
    for (j, f) in files.iter().enumerate() {
        if files[..j].iter().any(|g| g.doc_path == f.doc_path) {
            return None;
        }
    }
    Some(MBatch {
        key_label: (key, label),
        files,
    })
}

/// Why one file's changes do not fit its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MApplyErr {
    /// `range_out_of_bounds` at this change.
    OutOfBounds(usize),
    /// `line_mismatch` at this change, at this 1-based line.
    Mismatch(usize, u64),
}

/// Apply a valid file's changes to `original` (C-wp-line-model, -endings,
/// -final-newline, -bounds).
pub fn apply<'a>(original: &'a [u8], changes: &'a [MChange]) -> Result<Vec<u8>, MApplyErr> {
    let file = split_lines(original);
    let n = file.lines.len() as u64;
    for (i, c) in changes.iter().enumerate() {
        match c {
            MChange::Insert { after, .. } => {
                if *after > n {
                    return Err(MApplyErr::OutOfBounds(i));
                }
            }
            MChange::Range {
                start,
                end,
                expected,
                ..
            } => {
                if *end > n {
                    return Err(MApplyErr::OutOfBounds(i));
                }
                for (j, want) in expected.iter().enumerate() {
                    let line = start + j as u64;
                    if file.lines[(line - 1) as usize].0 != want.as_bytes() {
                        return Err(MApplyErr::Mismatch(i, line));
                    }
                }
            }
        }
    }
    let nl = file.newline();
    let new_line = |s: &'a String| (s.as_bytes(), &[][..]);
    let mut out: Vec<(&[u8], &[u8])> = Vec::new();
    for k in 0..=n {
        // Line k itself (1-based; k = 0 is the top of the file).
        if k >= 1 {
            let removed = changes.iter().any(
                |c| matches!(c, MChange::Range { start, end, .. } if (*start..=*end).contains(&k)),
            );
            if let Some(MChange::Range { new, .. }) = changes
                .iter()
                .find(|c| matches!(c, MChange::Range { start, .. } if *start == k))
            {
                out.extend(new.iter().flatten().map(new_line));
            }
            if !removed {
                out.push(file.lines[(k - 1) as usize]);
            }
        }
        // Then what is inserted after it.
        for c in changes {
            if let MChange::Insert { after, lines } = c {
                if *after == k {
                    out.extend(lines.iter().map(new_line));
                }
            }
        }
    }
    Ok(join_lines(file.bom, &out, nl, file.final_newline()))
}

/// The file a docPath names in a workspace without symlinks, or the wire
/// code of why none (C-wp-doc-path).
pub fn locate(tree: &BTreeMap<String, Node>, doc: &str) -> Result<String, &'static str> {
    if doc.trim().is_empty() {
        return Err("path_empty");
    }
    if doc.contains('\0') {
        return Err("path_nul");
    }
    let b = doc.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if doc.starts_with('/') || doc.starts_with('\\') || drive {
        return Err("path_absolute");
    }
    if doc.contains('\\') {
        return Err("path_backslash");
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in doc.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("outside_workspace");
                }
            }
            name => parts.push(name),
        }
    }
    if parts.is_empty() {
        return Err("path_empty");
    }
    for k in 1..parts.len() {
        match tree.get(&parts[..k].join("/")) {
            Some(Node::File(..)) => return Err("file_not_found"),
            Some(Node::Dir) => {}
            None => break,
        }
    }
    // The engine's private folder is never written (C-path-private).
    if parts[0] == ".patchspec" {
        return Err("private_path");
    }
    let exact = parts.join("/");
    match tree.get(&exact) {
        Some(Node::File(..)) => return Ok(exact),
        Some(Node::Dir) => return Err("file_not_found"),
        None => {}
    }
    let matches: Vec<&String> = tree
        .iter()
        .filter(|(_, n)| matches!(n, Node::File(..)))
        .map(|(p, _)| p)
        .filter(|p| {
            let comps: Vec<&str> = p.split('/').collect();
            comps.len() == parts.len()
                && comps
                    .iter()
                    .zip(&parts)
                    .all(|(c, want)| c.to_lowercase() == *want)
        })
        .collect();
    match matches.len() {
        0 => Err("file_not_found"),
        1 => Ok(matches[0].clone()),
        _ => Err("ambiguous_doc_path"),
    }
}

/// One file's outcome: (workspace path, new bytes) or the failure code.
pub type FileResult = Result<(String, Vec<u8>), &'static str>;

/// The outcome of applying a valid batch to a workspace: per file, the new
/// bytes or the failure code; and the tree after (unchanged unless every
/// file succeeded).
pub fn apply_batch(
    tree: &BTreeMap<String, Node>,
    batch: &MBatch,
) -> (Vec<FileResult>, BTreeMap<String, Node>) {
    let mut results = Vec::new();
    let mut targets: Vec<String> = Vec::new();
    for f in &batch.files {
        let r = locate(tree, &f.doc_path).and_then(|target| {
            let Some(Node::File(before, _)) = tree.get(&target) else {
                return Err("file_not_found");
            };
            if !sha256_hex(before).eq_ignore_ascii_case(&f.sha) {
                return Err("sha256_mismatch");
            }
            let changes: Vec<MChange> = f.changes.iter().map(|(c, _, _)| c.clone()).collect();
            let after = apply(before, &changes).map_err(|e| match e {
                MApplyErr::OutOfBounds(_) => "range_out_of_bounds",
                MApplyErr::Mismatch(..) => "line_mismatch",
            })?;
            if targets.contains(&target) {
                return Err("duplicate_target");
            }
            targets.push(target.clone());
            Ok((target, after))
        });
        results.push(r);
    }
    let mut after = tree.clone();
    if results.iter().all(Result::is_ok) {
        for (target, bytes) in results.iter().flatten() {
            if let Some(Node::File(b, _)) = after.get_mut(target) {
                *b = bytes.clone();
            }
        }
    }
    (results, after)
}
