//! Structured inputs of the write_patch targets.
//!
//! [`ApplyInput`]: the envelope targets' workspace, plus a batch planned
//! against it — changes placed in order with gaps, expected lines copied
//! from the file (sometimes corrupted), hashes right or wrong — so most
//! batches validate and many apply. [`BatchGen`]: a loosely typed batch for
//! the validator, where any field may be missing, mistyped or unknown.

use arbitrary::Arbitrary;
use patchspec_engine::hash::sha256_hex;
use serde_json::{json, Map, Value};

use crate::envelope::{workspace, FileSpec, Text, SLOTS};
use crate::tree::{line_texts, lookup_doc};

/// How a file patch names its file.
#[derive(Arbitrary, Debug)]
pub enum DocSpec {
    /// A slot path, lower-cased.
    Slot(u8),
    /// `./` + slot.
    Dot(u8),
    /// A file that does not exist.
    Missing,
    /// `../x.txt`.
    Escape,
    /// A slot path as is (upper case is refused by the validator).
    AsIs(u8),
    /// Anything.
    Raw(String),
    /// Through a link of [`crate::envelope::LINKS`].
    Link(u8),
}

impl DocSpec {
    /// The `docPath`.
    pub fn get(&self) -> String {
        let slot = |i: &u8| SLOTS[usize::from(*i) % SLOTS.len()];
        match self {
            DocSpec::Slot(i) => slot(i).to_lowercase(),
            DocSpec::Dot(i) => format!("./{}", slot(i).to_lowercase()),
            DocSpec::Missing => "nofile.txt".into(),
            DocSpec::Escape => "../x.txt".into(),
            DocSpec::AsIs(i) => slot(i).to_string(),
            DocSpec::Raw(s) => s.chars().take(16).collect(),
            DocSpec::Link(i) => {
                ["l.txt", "ld/c.txt", "out/sentinel.txt", "o.txt"][usize::from(*i) % 4].to_string()
            }
        }
    }
}

/// `originalSha256`.
#[derive(Arbitrary, Debug)]
pub enum ShaSpec {
    /// Of the file the docPath resolves to.
    Actual,
    /// The same, upper case.
    Upper,
    /// Of other bytes.
    Wrong,
}

/// One change, placed after the previous one.
#[derive(Arbitrary, Debug)]
pub enum ChangeSpec {
    /// `replace`: lines `start..=start + len % 3`, `start` a gap after the previous change.
    Replace {
        /// Lines skipped since the previous change.
        gap: u8,
        /// Range length - 1.
        len: u8,
        /// New lines.
        lines: Vec<Text>,
        /// Corrupt this expected line.
        corrupt: Option<u8>,
    },
    /// `insert` after a line.
    Insert {
        /// Lines skipped since the previous change.
        gap: u8,
        /// New lines (at least one is used).
        lines: Vec<Text>,
    },
    /// `delete`.
    Delete {
        /// Lines skipped since the previous change.
        gap: u8,
        /// Range length - 1.
        len: u8,
        /// Corrupt this expected line.
        corrupt: Option<u8>,
    },
    /// Swap the previous two changes (out of order, or overlapping).
    Swap,
}

/// One file patch.
#[derive(Arbitrary, Debug)]
pub struct PatchSpec {
    doc: DocSpec,
    sha: ShaSpec,
    changes: Vec<ChangeSpec>,
    file_key: Option<Text>,
}

/// The structured input of `write_patch_apply`.
#[derive(Arbitrary, Debug)]
pub struct ApplyInput {
    base: [FileSpec; 3],
    files: Vec<FileSpec>,
    patches: Vec<PatchSpec>,
    batch_label: Option<Text>,
    /// Fail the n-th mutating filesystem operation.
    pub fault: Option<u8>,
    /// Use a temporary directory (when `% 16 == 7`).
    pub real_fs: u8,
    /// Context lines of the envelope form (`% 4`).
    pub context: u8,
}

/// What the `write_patch_apply` oracle runs.
#[derive(Debug)]
pub struct Scenario {
    /// (path, bytes, mode).
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// Directories.
    pub dirs: Vec<String>,
    /// The batch (the tool's params).
    pub batch: Value,
    /// Fail the n-th mutating filesystem operation.
    pub fault: Option<usize>,
    /// Use a temporary directory.
    pub real_fs: bool,
    /// Context lines of the envelope form.
    pub context: usize,
}

impl ApplyInput {
    /// Build the workspace and the batch.
    pub fn scenario(&self) -> Scenario {
        let (files, dirs, tree) = workspace(&self.base, &self.files);
        let mut out_files = Vec::new();
        for p in self.patches.iter().take(3) {
            let doc = p.doc.get();
            let bytes = lookup_doc(&tree, &doc).unwrap_or_default();
            let lines = line_texts(bytes);
            let sha = match p.sha {
                ShaSpec::Actual => sha256_hex(bytes),
                ShaSpec::Upper => sha256_hex(bytes).to_uppercase(),
                ShaSpec::Wrong => sha256_hex(b"stale"),
            };
            let mut file = Map::new();
            file.insert("docPath".into(), json!(doc));
            file.insert("originalSha256".into(), json!(sha));
            if let Some(k) = &p.file_key {
                file.insert("fileKey".into(), json!(k.get()));
            }
            file.insert("changes".into(), Value::Array(changes(&p.changes, &lines)));
            out_files.push(Value::Object(file));
        }
        let mut batch = Map::new();
        if let Some(l) = &self.batch_label {
            batch.insert("batchLabel".into(), json!(l.get()));
        }
        batch.insert("files".into(), Value::Array(out_files));
        Scenario {
            files,
            dirs,
            batch: Value::Object(batch),
            fault: self.fault.map(|n| usize::from(n % 12)),
            real_fs: self.real_fs % 16 == 7,
            context: usize::from(self.context % 4),
        }
    }
}

fn new_lines(lines: &[Text]) -> Vec<String> {
    lines.iter().take(4).map(Text::get).collect()
}

/// Place the changes top to bottom over `file` (C-wp-order): the next
/// insert may follow line `min_insert` or later, the next range may start
/// at `min_start` or later.
fn changes(specs: &[ChangeSpec], file: &[String]) -> Vec<Value> {
    let (mut min_insert, mut min_start) = (0u64, 1u64);
    let mut out: Vec<Value> = Vec::new();
    let expected = |s: u64, e: u64, corrupt: &Option<u8>| -> Vec<String> {
        let mut lines: Vec<String> = (s..=e)
            .map(|i| {
                file.get((i - 1) as usize)
                    .cloned()
                    .unwrap_or_else(|| "?".into())
            })
            .collect();
        if let Some(c) = corrupt {
            let j = usize::from(*c) % lines.len();
            lines[j].push('#');
        }
        lines
    };
    for spec in specs.iter().take(6) {
        match spec {
            ChangeSpec::Insert { gap, lines } => {
                let k = min_insert + u64::from(gap % 3);
                let mut new = new_lines(lines);
                if new.is_empty() {
                    new.push("new".into());
                }
                out.push(json!({"operation": "insert", "afterLine": k, "newLines": new}));
                min_insert = k + 1;
                min_start = min_start.max(k + 1);
            }
            ChangeSpec::Replace {
                gap,
                len,
                lines,
                corrupt,
            } => {
                let s = min_start + u64::from(gap % 3);
                let e = s + u64::from(len % 3);
                out.push(json!({"operation": "replace", "startLine": s, "endLine": e,
                    "expectedOriginalLines": expected(s, e, corrupt), "newLines": new_lines(lines)}));
                min_start = e + 1;
                min_insert = e;
            }
            ChangeSpec::Delete { gap, len, corrupt } => {
                let s = min_start + u64::from(gap % 3);
                let e = s + u64::from(len % 3);
                out.push(json!({"operation": "delete", "startLine": s, "endLine": e,
                    "expectedOriginalLines": expected(s, e, corrupt)}));
                min_start = e + 1;
                min_insert = e;
            }
            ChangeSpec::Swap => {
                let n = out.len();
                if n >= 2 {
                    out.swap(n - 1, n - 2);
                }
            }
        }
    }
    if out.is_empty() {
        out.push(json!({"operation": "insert", "afterLine": 0, "newLines": ["top"]}));
    }
    out
}

// ------------------------------------------------------------ validator input

/// A JSON value of any type, small.
#[derive(Arbitrary, Debug)]
pub enum J {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A small integer.
    Int(i8),
    /// A float (`3.0` and friends).
    Float(i8),
    /// A string.
    Str(Text),
    /// An array of strings.
    Strs(Vec<Text>),
    /// An empty object.
    Obj,
}

impl J {
    fn get(&self) -> Value {
        match self {
            J::Null => Value::Null,
            J::Bool(b) => json!(b),
            J::Int(i) => json!(i),
            J::Float(i) => json!(f64::from(*i) + 0.5 * f64::from(i % 2)),
            J::Str(t) => json!(t.get()),
            J::Strs(v) => json!(v.iter().take(4).map(Text::get).collect::<Vec<_>>()),
            J::Obj => json!({}),
        }
    }
}

/// A line number: mostly small and valid, sometimes not.
#[derive(Arbitrary, Debug)]
pub enum Num {
    /// `0..12`.
    Small(u8),
    /// Negative.
    Neg(i8),
    /// Huge (`u64::MAX - n`).
    Huge(u8),
    /// Any other JSON value.
    Other(J),
}

impl Num {
    fn get(&self) -> Value {
        match self {
            Num::Small(n) => json!(n % 12),
            Num::Neg(n) => json!(-i64::from(n.unsigned_abs()) - 1),
            Num::Huge(n) => json!(u64::MAX - u64::from(*n)),
            Num::Other(j) => j.get(),
        }
    }
}

const OPS: &[&str] = &["insert", "replace", "delete", "Insert", "move", ""];
const FIELDS: &[&str] = &[
    "changeId",
    "changeKey",
    "description",
    "afterLine",
    "startLine",
    "endLine",
    "expectedOriginalLines",
    "newLines",
    "operation",
    "fileKey",
    "fileLabel",
    "filePatchId",
    "batchId",
    "batchKey",
    "batchLabel",
    "docPath",
    "originalSha256",
    "changes",
    "files",
    "newlines",
    "descripton",
];

/// One change: mostly well-formed (`Plain`), or with any field missing,
/// mistyped or unknown (`Loose`).
#[derive(Arbitrary, Debug)]
pub enum ChangeGen {
    /// A well-typed change (order and bounds still arbitrary).
    Plain {
        /// `insert`, `replace`, `delete` by `% 3`.
        op: u8,
        /// `afterLine` or `startLine`, `0..12`.
        at: u8,
        /// `endLine - startLine`, `0..3`.
        len: u8,
        /// `expectedOriginalLines` (padded/cut to the range).
        expected: Vec<Text>,
        /// `newLines`.
        new: Vec<Text>,
        /// `changeKey`.
        key: Option<Text>,
    },
    /// Every field optional and of any type.
    Loose {
        /// `operation`.
        op: Option<u8>,
        /// `afterLine`.
        after: Option<Num>,
        /// `startLine`.
        start: Option<Num>,
        /// `endLine`.
        end: Option<Num>,
        /// `expectedOriginalLines`.
        expected: Option<Vec<Text>>,
        /// `newLines`.
        new: Option<Vec<Text>>,
        /// `changeKey`.
        key: Option<J>,
        /// One more field, known or not.
        extra: Option<(u8, J)>,
    },
}

/// One file patch: mostly well-formed, or loose.
#[derive(Arbitrary, Debug)]
pub enum FileGen {
    /// docPath, a valid SHA-256, changes.
    Plain {
        /// `docPath`.
        doc: DocSpec,
        /// `changes`.
        changes: Vec<ChangeGen>,
        /// `fileLabel`.
        label: Option<Text>,
    },
    /// Every field optional.
    Loose {
        /// `docPath`.
        doc: Option<DocSpec>,
        /// `originalSha256`, one of four shapes.
        sha: Option<u8>,
        /// `changes`.
        changes: Option<Vec<ChangeGen>>,
        /// `fileKey`.
        key: Option<J>,
        /// One more field.
        extra: Option<(u8, J)>,
    },
}

/// A batch for the validator.
#[derive(Arbitrary, Debug)]
pub struct BatchGen {
    files: Vec<FileGen>,
    key: Option<Text>,
    /// `% 8`: 0 a loose top level (below), 1 not an object, else plain.
    shape: u8,
    label: Option<J>,
    extra: Option<(u8, J)>,
    other: J,
}

fn put_extra(o: &mut Map<String, Value>, extra: &Option<(u8, J)>) {
    if let Some((f, v)) = extra {
        o.insert(FIELDS[usize::from(*f) % FIELDS.len()].into(), v.get());
    }
}

fn texts(v: &[Text]) -> Vec<String> {
    v.iter().take(4).map(Text::get).collect()
}

impl BatchGen {
    /// The batch as JSON.
    pub fn get(&self) -> Value {
        if self.shape % 8 == 1 {
            return self.other.get();
        }
        let mut top = Map::new();
        if let Some(k) = &self.key {
            top.insert("batchKey".into(), json!(k.get()));
        }
        let files: Vec<Value> = self.files.iter().take(3).map(file_gen).collect();
        top.insert("files".into(), Value::Array(files));
        if self.shape & 7 == 0 {
            if let Some(l) = &self.label {
                top.insert("batchLabel".into(), l.get());
            }
            put_extra(&mut top, &self.extra);
        }
        Value::Object(top)
    }
}

fn file_gen(f: &FileGen) -> Value {
    let mut o = Map::new();
    match f {
        FileGen::Plain {
            doc,
            changes,
            label,
        } => {
            o.insert("docPath".into(), json!(doc.get()));
            o.insert("originalSha256".into(), json!(sha256_hex(b"a\n")));
            if let Some(l) = label {
                o.insert("fileLabel".into(), json!(l.get()));
            }
            let cs: Vec<Value> = changes.iter().take(5).map(change_gen).collect();
            o.insert("changes".into(), Value::Array(cs));
        }
        FileGen::Loose {
            doc,
            sha,
            changes,
            key,
            extra,
        } => {
            if let Some(d) = doc {
                o.insert("docPath".into(), json!(d.get()));
            }
            if let Some(s) = sha {
                let sha = match s % 4 {
                    0 => sha256_hex(b"a\n"),
                    1 => sha256_hex(b"").to_uppercase(),
                    2 => "0".repeat(63),
                    _ => "g".repeat(64),
                };
                o.insert("originalSha256".into(), json!(sha));
            }
            if let Some(k) = key {
                o.insert("fileKey".into(), k.get());
            }
            if let Some(cs) = changes {
                let cs: Vec<Value> = cs.iter().take(5).map(change_gen).collect();
                o.insert("changes".into(), Value::Array(cs));
            }
            put_extra(&mut o, extra);
        }
    }
    Value::Object(o)
}

fn change_gen(c: &ChangeGen) -> Value {
    let mut o = Map::new();
    match c {
        ChangeGen::Plain {
            op,
            at,
            len,
            expected,
            new,
            key,
        } => {
            let at = u64::from(at % 12);
            let end = at.max(1) + u64::from(len % 3);
            let mut exp = texts(expected);
            exp.resize((end - at.max(1) + 1) as usize, "x".into());
            let new = texts(new);
            let v = match op % 3 {
                0 => json!({"operation": "insert", "afterLine": at,
                    "newLines": if new.is_empty() { vec!["n".to_string()] } else { new }}),
                1 => json!({"operation": "replace", "startLine": at.max(1), "endLine": end,
                    "expectedOriginalLines": exp, "newLines": new}),
                _ => json!({"operation": "delete", "startLine": at.max(1), "endLine": end,
                    "expectedOriginalLines": exp}),
            };
            let Value::Object(mut m) = v else {
                unreachable!("json! of an object literal is an object")
            };
            if let Some(k) = key {
                m.insert("changeKey".into(), json!(k.get()));
            }
            return Value::Object(m);
        }
        ChangeGen::Loose {
            op,
            after,
            start,
            end,
            expected,
            new,
            key,
            extra,
        } => {
            if let Some(op) = op {
                o.insert("operation".into(), json!(OPS[usize::from(*op) % OPS.len()]));
            }
            let mut put = |k: &str, v: &Option<Num>| {
                if let Some(n) = v {
                    o.insert(k.into(), n.get());
                }
            };
            put("afterLine", after);
            put("startLine", start);
            put("endLine", end);
            if let Some(e) = expected {
                o.insert("expectedOriginalLines".into(), json!(texts(e)));
            }
            if let Some(n) = new {
                o.insert("newLines".into(), json!(texts(n)));
            }
            if let Some(k) = key {
                o.insert("changeKey".into(), k.get());
            }
            put_extra(&mut o, extra);
        }
    }
    Value::Object(o)
}
