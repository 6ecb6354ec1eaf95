//! The model of a whole `apply_patch` call over a workspace without
//! symlinks: the path guard (lexical), `expectedSha256ByPath`, the section
//! rules in the order the clarifications give them, and the two commit modes
//! (`atomic: true` plans everything first; `atomic: false` commits section by
//! section and stops at the first failure).
//!
//! The workspace is a plain `BTreeMap`; hashing uses the engine's
//! `sha256_hex` (a SHA-256 is not something to re-implement in an oracle).

use std::collections::{BTreeMap, HashMap};

use patchspec_engine::hash::sha256_hex;

use super::envelope_model::{self as em, HunkErr, MKind, MPatch, MSection};
use super::memfs::{Node, DEFAULT_FILE_MODE};

/// The model's view of a refusal: the wire kind and, for hunk errors, the
/// hunk index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MErr {
    /// `patch_parse_error`, `stale_file`, ...
    pub kind: &'static str,
    /// `details.hunkIndex`, for hunk failures.
    pub hunk_index: Option<usize>,
}

fn e(kind: &'static str) -> MErr {
    MErr {
        kind,
        hunk_index: None,
    }
}

/// `changedFiles` entries: (operation, path, from).
pub type Changed = (&'static str, String, Option<String>);

/// The outcome of a modelled call.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Sections applied (all of them on success; the committed prefix when
    /// a non-atomic call stopped; none when an atomic call failed).
    pub changed: Vec<Changed>,
    /// Why it stopped.
    pub error: Option<MErr>,
    /// The tree after the call (files and directories).
    pub tree: BTreeMap<String, Node>,
    /// How many sections were committed (for non-atomic runs).
    pub committed_sections: usize,
}

/// The lexical path guard (no symlinks in the model's workspaces).
pub fn guard(tree: &BTreeMap<String, Node>, raw: &str) -> Result<String, MErr> {
    if raw.trim().is_empty() || raw.contains('\0') {
        return Err(e("command_failed"));
    }
    let b = raw.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if raw.starts_with('/') || raw.starts_with('\\') || drive || raw.contains('\\') {
        return Err(e("command_failed"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in raw.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(e("outside_workspace"));
                }
            }
            name => parts.push(name),
        }
    }
    if parts.is_empty() {
        return Err(e("command_failed"));
    }
    // A file standing where a directory is needed: missing parent.
    for k in 1..parts.len() {
        let prefix = parts[..k].join("/");
        match tree.get(&prefix) {
            Some(Node::File(..)) => return Err(e("not_found")),
            Some(Node::Dir) => {}
            None => break,
        }
    }
    Ok(parts.join("/"))
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

enum Op {
    Write(String, Vec<u8>, u32),
    Delete(String),
}

struct Planner<'a> {
    /// normalised path → expected digest (`""`: must not exist).
    expected: HashMap<String, String>,
    claimed: HashMap<String, usize>,
    tree: &'a BTreeMap<String, Node>,
}

impl Planner<'_> {
    fn guard(&mut self, raw: &str, line: usize) -> Result<String, MErr> {
        let p = guard(self.tree, raw)?;
        // Every section writes: the engine's private folder is refused
        // (C-path-private).
        if p.split('/').next() == Some(".patchspec") {
            return Err(e("command_failed"));
        }
        if let Some(&first) = self.claimed.get(&p) {
            if first != line {
                return Err(e("patch_parse_error"));
            }
        }
        self.claimed.insert(p.clone(), line);
        Ok(p)
    }

    /// `expectedSha256ByPath` for `p`. For a path the section creates (an
    /// Add, a move destination) any existing entry is stale, whatever the
    /// digest: stale checks come before existence rules (C-stale-sentinel).
    fn stale(&self, p: &str, creates: bool) -> Result<(), MErr> {
        let Some(want) = self.expected.get(p) else {
            return Ok(());
        };
        match self.tree.get(p) {
            None if want.is_empty() => Ok(()),
            Some(Node::File(bytes, _))
                if !creates && !want.is_empty() && sha256_hex(bytes).eq_ignore_ascii_case(want) =>
            {
                Ok(())
            }
            _ => Err(e("stale_file")),
        }
    }

    fn absent(&self, p: &str) -> Result<(), MErr> {
        match self.tree.get(p) {
            None => Ok(()),
            Some(_) => Err(e("already_exists")),
        }
    }

    fn parent_exists(&self, p: &str) -> Result<(), MErr> {
        let dir = parent(p);
        if dir.is_empty() || matches!(self.tree.get(dir), Some(Node::Dir)) {
            Ok(())
        } else {
            Err(e("not_found"))
        }
    }

    /// The file's bytes and mode after the stale check; `not_found` when absent.
    fn read_checked(&self, p: &str) -> Result<(Vec<u8>, u32), MErr> {
        if let Some(Node::Dir) = self.tree.get(p) {
            return Err(e("command_failed"));
        }
        self.stale(p, false)?;
        match self.tree.get(p) {
            Some(Node::File(b, m)) => Ok((b.clone(), *m)),
            _ => Err(e("not_found")),
        }
    }

    fn section(&mut self, s: &MSection) -> Result<(Vec<Op>, Changed), MErr> {
        match &s.kind {
            MKind::Add {
                path,
                lines,
                no_newline,
            } => {
                let p = self.guard(path, s.line)?;
                self.stale(&p, true)?;
                self.absent(&p)?;
                self.parent_exists(&p)?;
                let bytes = em::add_content(lines, *no_newline);
                Ok((
                    vec![Op::Write(p.clone(), bytes, DEFAULT_FILE_MODE & 0o7777)],
                    ("add", p, None),
                ))
            }
            MKind::Delete { path } => {
                let p = self.guard(path, s.line)?;
                self.read_checked(&p)?;
                Ok((vec![Op::Delete(p.clone())], ("delete", p, None)))
            }
            MKind::Update {
                path,
                move_to,
                hunks,
            } => {
                let src = self.guard(path, s.line)?;
                let dest = match move_to {
                    Some(to) => Some(self.guard(to, s.line)?),
                    None => None,
                };
                if dest.as_deref() == Some(src.as_str()) {
                    return Err(e("command_failed"));
                }
                let (before, mode) = self.read_checked(&src)?;
                if let Some(d) = &dest {
                    self.stale(d, true)?;
                }
                let after = em::apply_hunks(&before, hunks).map_err(|(i, h)| MErr {
                    kind: match h {
                        HunkErr::Misplaced => "patch_parse_error",
                        HunkErr::NotFound => "patch_apply_error",
                        HunkErr::Multiple => "multiple_matches",
                        HunkErr::Overlapping => "overlapping_edits",
                    },
                    hunk_index: Some(i),
                })?;
                match dest {
                    Some(d) => {
                        self.absent(&d)?;
                        self.parent_exists(&d)?;
                        Ok((
                            vec![Op::Write(d.clone(), after, mode), Op::Delete(src.clone())],
                            ("move", d, Some(src)),
                        ))
                    }
                    None => Ok((
                        vec![Op::Write(src.clone(), after, mode)],
                        ("update", src, None),
                    )),
                }
            }
        }
    }
}

fn commit(tree: &mut BTreeMap<String, Node>, ops: Vec<Op>) {
    for op in ops {
        match op {
            Op::Write(p, bytes, mode) => {
                tree.insert(p, Node::File(bytes, mode & 0o777));
            }
            Op::Delete(p) => {
                tree.remove(&p);
            }
        }
    }
}

/// Model one `apply_patch` call: `expected` as the wire's
/// `expectedSha256ByPath` (raw path → digest), `tree` the workspace before.
pub fn apply(
    tree: &BTreeMap<String, Node>,
    patch: &[u8],
    atomic: bool,
    expected: &BTreeMap<String, String>,
) -> Outcome {
    run(tree, patch, atomic, expected, usize::MAX)
}

/// The model's tree after committing only the first `k` sections of a
/// non-atomic call (what a commit fault in section `k` must leave), or
/// `None` when those sections do not all succeed in the model.
pub fn apply_prefix(
    tree: &BTreeMap<String, Node>,
    patch: &[u8],
    expected: &BTreeMap<String, String>,
    k: usize,
) -> Option<BTreeMap<String, Node>> {
    let out = run(tree, patch, false, expected, k);
    (out.error.is_none() && out.committed_sections == k).then_some(out.tree)
}

fn run(
    tree: &BTreeMap<String, Node>,
    patch: &[u8],
    atomic: bool,
    expected: &BTreeMap<String, String>,
    limit: usize,
) -> Outcome {
    let fail = |error: MErr| Outcome {
        changed: Vec::new(),
        error: Some(error),
        tree: tree.clone(),
        committed_sections: 0,
    };
    let is_hex = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if expected.values().any(|v| !v.is_empty() && !is_hex(v)) {
        return fail(e("command_failed"));
    }
    // Keys are normalised; a key the guard refuses is ignored; two keys for
    // one path must hold the same digest (hex case aside), before parsing.
    let mut norm: HashMap<String, String> = HashMap::new();
    for (raw, sha) in expected {
        if let Ok(p) = guard(tree, raw) {
            match norm.get(&p) {
                Some(first) if !first.eq_ignore_ascii_case(sha) => {
                    return fail(e("command_failed"))
                }
                Some(_) => {}
                None => {
                    norm.insert(p, sha.clone());
                }
            }
        }
    }
    let parsed: MPatch = match em::parse(patch) {
        Ok(p) => p,
        Err(_) => return fail(e("patch_parse_error")),
    };
    let mut work = tree.clone();
    let mut claimed = HashMap::new();
    let mut changed = Vec::new();
    let mut pending = Vec::new();
    for s in parsed.sections.iter().take(limit) {
        let mut planner = Planner {
            expected: norm.clone(),
            claimed: std::mem::take(&mut claimed),
            tree: &work,
        };
        let r = planner.section(s);
        claimed = planner.claimed;
        match r {
            Ok((ops, c)) => {
                changed.push(c);
                if atomic {
                    pending.extend(ops);
                } else {
                    commit(&mut work, ops);
                }
            }
            Err(err) if atomic => return fail(err),
            Err(err) => {
                let n = changed.len();
                return Outcome {
                    changed,
                    error: Some(err),
                    tree: work,
                    committed_sections: n,
                };
            }
        }
    }
    commit(&mut work, pending);
    let n = changed.len();
    Outcome {
        changed,
        error: None,
        tree: work,
        committed_sections: n,
    }
}
