//! The case model: one JSON file per case, loaded and validated.
//!
//! The main types are [`Case`] (one spec case, contract §4) and [`Corpus`]
//! (every case under a directory, with its version and content hash). This is
//! the only module with serde types for cases; everything else works on these
//! Rust types.
//!
//! Validation is done by hand, on the raw JSON, against the same structural
//! rules that `corpus/schema/case.schema.json` states (see [`validate`]); the
//! two must be kept in step. Validation collects every problem of a file, with
//! its JSON path, instead of stopping at the first. What it leaves out:
//! whether a case's expectation is *right* (that is `patchspec lint`, which
//! runs every case against the reference engine).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::pattern::quote;
use crate::protocol::SessionMsg;

/// One spec case.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's id: its path under the corpus, without `.json`.
    pub id: String,
    /// One line: what the case pins.
    pub summary: String,
    /// Clause references, `document#anchor`.
    pub spec: Vec<String>,
    /// The tool's wire name.
    pub tool: String,
    /// Free-form tags (used by filters and by executors to declare what they skip).
    #[serde(default)]
    pub tags: Vec<String>,
    /// The workspace and session before the call.
    pub given: Given,
    /// Calls made in the workspace before `call`, each with its expected
    /// result; `call` may use their results (multi-step cases,
    /// [`crate::steps`]). Empty for a single-call case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::steps::Step>,
    /// The tool's params object (may name the steps' results).
    pub call: Map<String, Value>,
    /// What must come out.
    pub expect: Expect,
}

/// The state before the call.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Given {
    /// Regular files: path → content.
    #[serde(default)]
    pub files: BTreeMap<String, Content>,
    /// Directories that exist (possibly empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// Symbolic links: path → target (as written, may be relative).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub symlinks: BTreeMap<String, String>,
    /// Session state sent with the call, as the `TOOL_CALL` carries it
    /// (one type for both; the loader's [`validate`] refuses members it
    /// does not know, where the wire tolerates them).
    #[serde(default)]
    pub session: SessionMsg,
}

/// A file entry: exact text, or an object with the content as `text` or
/// `base64` and, optionally, the file's permission `mode`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Content {
    /// Exact UTF-8 text.
    Text(String),
    /// The object form.
    Entry(FileEntry),
}

/// The object form of a file entry: exactly one of `text` and `base64`
/// (checked at load time), and an optional mode.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Exact UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64-encoded (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
    /// Permission bits as an octal string (`"755"`): set in `given`,
    /// compared in `expect` (an entry without one has its mode unchecked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

impl Content {
    /// The content's bytes. Base64 was checked at load time; a malformed one
    /// decodes to nothing here.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Content::Text(text) => text.as_bytes().to_vec(),
            Content::Entry(FileEntry {
                text: Some(text), ..
            }) => text.as_bytes().to_vec(),
            Content::Entry(FileEntry {
                base64: Some(b), ..
            }) => b64::decode(b).unwrap_or_default(),
            Content::Entry(_) => Vec::new(),
        }
    }

    /// The declared permission bits (checked at load time), if any.
    pub fn mode(&self) -> Option<u32> {
        match self {
            Content::Entry(FileEntry { mode: Some(m), .. }) => parse_mode(m),
            _ => None,
        }
    }

    /// Content for some bytes: text when they are UTF-8, base64 otherwise.
    pub fn from_bytes(bytes: &[u8]) -> Content {
        match std::str::from_utf8(bytes) {
            Ok(text) => Content::Text(text.to_owned()),
            Err(_) => Content::Entry(FileEntry {
                base64: Some(b64::encode(bytes)),
                ..FileEntry::default()
            }),
        }
    }
}

/// Permission bits from an octal string of three or four digits (`"755"`,
/// `"0644"`); `None` for anything else.
pub fn parse_mode(text: &str) -> Option<u32> {
    if !(3..=4).contains(&text.len()) || !text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u32::from_str_radix(text, 8).ok()
}

/// What the call must produce.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// A pattern for the tool's result document (see [`crate::pattern`]).
    pub result: Value,
    /// The visible tree after the call.
    pub files: ExpectFiles,
    /// With a full tree: the directories that exist and are empty after the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// With a full tree: the symbolic links after the call.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub symlinks: BTreeMap<String, String>,
}

/// `expect.files`: `"unchanged"` or the whole tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ExpectFiles {
    /// The tree must equal the given one, byte for byte.
    Unchanged(UnchangedTag),
    /// The regular files after the call, exactly.
    Tree(BTreeMap<String, Content>),
}

/// The literal string `"unchanged"`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum UnchangedTag {
    /// `"unchanged"`.
    #[serde(rename = "unchanged")]
    Unchanged,
}

/// One problem found in a corpus file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file (relative to the corpus root where possible).
    pub file: PathBuf,
    /// A JSON path inside the file (`$` for the file as a whole).
    pub at: String,
    /// What is wrong, as a lowercase fragment.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file.display(), self.at, self.message)
    }
}

/// Where a corpus was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorpusRoot {
    /// The copy compiled into this binary ([`crate::corpus_source`]).
    Embedded,
    /// A corpus directory.
    Dir(PathBuf),
}

impl CorpusRoot {
    /// The directory, when the corpus was read from one.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            CorpusRoot::Embedded => None,
            CorpusRoot::Dir(dir) => Some(dir),
        }
    }

    /// For report headers: the directory, or that the corpus is the embedded one.
    pub fn display(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for CorpusRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusRoot::Embedded => {
                write!(f, "embedded in patchspec {}", env!("CARGO_PKG_VERSION"))
            }
            CorpusRoot::Dir(dir) => write!(f, "{}", dir.display()),
        }
    }
}

/// Every case of a corpus (a directory, or the embedded copy).
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Where the corpus was read from.
    pub root: CorpusRoot,
    /// The cases, sorted by id.
    pub cases: Vec<Case>,
    /// `corpus/VERSION`, trimmed, when present.
    pub version: Option<String>,
    /// SHA-256 (hex) over the sorted case files: for each, its relative path,
    /// a NUL, its bytes, a NUL. The same for a directory and for the embedded
    /// copy of it.
    pub content_hash: String,
}

impl Corpus {
    /// Load and validate every case file under `root` (every `*.json` except
    /// those in `root/schema/`, see [`crate::corpus_walk`]). Returns every
    /// problem found when any file is invalid.
    pub fn load(root: &Path) -> Result<Corpus, Vec<Problem>> {
        let files = crate::corpus_walk::files(root).map_err(|e| {
            vec![Problem {
                file: root.to_path_buf(),
                at: "$".into(),
                message: format!("cannot read the corpus directory: {e}"),
            }]
        })?;
        let case_files = files
            .into_iter()
            .filter(|rel| crate::corpus_walk::is_case_file(rel))
            .map(|rel| {
                let bytes = std::fs::read(root.join(&rel)).map(Cow::Owned);
                (rel, bytes)
            });
        let version = std::fs::read_to_string(root.join("VERSION"))
            .ok()
            .map(|v| v.trim().to_owned());
        Corpus::parse(CorpusRoot::Dir(root.to_path_buf()), case_files, version)
    }

    /// Load and validate a corpus from its files, each `(path relative to
    /// the corpus root, bytes)` (those that are not cases are left out).
    pub fn from_files<'a>(
        root: CorpusRoot,
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<Corpus, Vec<Problem>> {
        let mut version = None;
        let mut case_files = Vec::new();
        for (rel, bytes) in files {
            let rel = PathBuf::from(rel);
            if rel == Path::new("VERSION") {
                version = Some(String::from_utf8_lossy(bytes).trim().to_owned());
            } else if crate::corpus_walk::is_case_file(&rel) {
                case_files.push((rel, Ok(Cow::Borrowed(bytes))));
            }
        }
        Corpus::parse(root, case_files, version)
    }

    /// Parse the case files, hashing them in [`Path`] order.
    fn parse<'a>(
        root: CorpusRoot,
        files: impl IntoIterator<Item = (PathBuf, std::io::Result<Cow<'a, [u8]>>)>,
        version: Option<String>,
    ) -> Result<Corpus, Vec<Problem>> {
        let mut files: Vec<_> = files.into_iter().collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut problems = Vec::new();
        let mut cases = Vec::new();
        let mut seen = BTreeSet::new();
        for (rel, bytes) in &files {
            let bytes = match bytes {
                Ok(b) => b,
                Err(e) => {
                    problems.push(Problem {
                        file: rel.clone(),
                        at: "$".into(),
                        message: format!("cannot read: {e}"),
                    });
                    continue;
                }
            };
            let expected_id = rel.with_extension("").to_string_lossy().replace('\\', "/");
            match parse_case(bytes, Some(&expected_id)) {
                Ok(case) => {
                    if !seen.insert(case.id.clone()) {
                        problems.push(Problem {
                            file: rel.clone(),
                            at: "$.id".into(),
                            message: format!("duplicate id {:?}", case.id),
                        });
                    }
                    cases.push(case);
                }
                Err(list) => problems.extend(list.into_iter().map(|(at, message)| Problem {
                    file: rel.clone(),
                    at,
                    message,
                })),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        cases.sort_by(|a, b| a.id.cmp(&b.id));
        // Every file was read (a read error is a problem, returned above):
        // each one's path, NUL, bytes, NUL, in path order.
        let names: Vec<_> = files.iter().map(|(rel, _)| rel.to_string_lossy()).collect();
        let content_hash = patchspec_engine::hash::sha256_hex_of_parts(
            files.iter().zip(&names).flat_map(|((_, bytes), name)| {
                let bytes: &[u8] = bytes.as_deref().unwrap_or_default();
                [name.as_bytes(), &[0u8][..], bytes, &[0u8][..]]
            }),
        );
        Ok(Corpus {
            root,
            cases,
            version,
            content_hash,
        })
    }

    /// A file of the corpus other than a case (`schema/case.schema.json`,
    /// `CHANGELOG.md`), by its path relative to the corpus root.
    pub fn read_file(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        match &self.root {
            CorpusRoot::Dir(dir) => std::fs::read(crate::rel_path::under(dir, rel)),
            CorpusRoot::Embedded => crate::corpus_embedded::file(rel)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("{rel} is not in the embedded corpus"),
                    )
                }),
        }
    }

    /// The case with this id.
    pub fn get(&self, id: &str) -> Option<&Case> {
        self.cases
            .binary_search_by(|c| c.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.cases[i])
    }
}

/// Parse and validate one case file. With `expected_id`, the id must equal it
/// (the file's path without `.json`). Errors are `(json path, message)`.
pub fn parse_case(bytes: &[u8], expected_id: Option<&str>) -> Result<Case, Vec<(String, String)>> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| vec![("$".to_owned(), format!("not valid JSON: {e}"))])?;
    let mut problems = validate(&value);
    if let (Some(want), Some(Value::String(id))) = (expected_id, value.get("id")) {
        if id != want {
            problems.push((
                "$.id".into(),
                format!("id {id:?} does not equal the file's path {want:?}"),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // `$schema` points an editor at case.schema.json; it is not part of the
    // case model, so it is allowed (and checked to be a string) and dropped.
    let mut value = value;
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
    }
    serde_json::from_value(value)
        .map_err(|e| vec![("$".to_owned(), format!("does not fit the case model: {e}"))])
}

/// The clause documents a `spec` reference may name.
pub const SPEC_DOCUMENTS: &[&str] = &[
    "patch-envelope",
    "tul-001-workspace-read-file",
    "tul-002-workspace-write-patch",
    "tul-004-workspace-create-file",
    "websocket-tool-protocol",
    // docs/clarifications.md: the project's decisions where the specs are silent.
    "clarifications",
];

/// The structural rules of `corpus/schema/case.schema.json`, by hand.
/// Returns `(json path, message)` for every violation.
pub fn validate(value: &Value) -> Vec<(String, String)> {
    let mut v = Validator::default();
    v.case(value);
    v.problems
}

#[derive(Default)]
struct Validator {
    problems: Vec<(String, String)>,
}

impl Validator {
    fn err(&mut self, at: &str, message: impl Into<String>) {
        self.problems.push((at.to_owned(), message.into()));
    }

    fn object<'v>(
        &mut self,
        at: &str,
        value: &'v Value,
        required: &[&str],
        allowed: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.err(at, "must be an object");
            return None;
        };
        for key in required {
            if !map.contains_key(*key) {
                self.err(at, format!("missing required member {key:?}"));
            }
        }
        for key in map.keys() {
            if !required.contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
                self.err(at, format!("unknown member {key:?}"));
            }
        }
        Some(map)
    }

    fn non_empty_string(&mut self, at: &str, value: Option<&Value>) {
        match value {
            None => {}
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            Some(_) => self.err(at, "must be a non-empty string"),
        }
    }

    fn rel_path(&mut self, at: &str, path: &str) {
        let bad = path.is_empty()
            || path.starts_with('/')
            || path.ends_with('/')
            || path.contains('\\')
            || path.contains('\0')
            || path
                .split('/')
                .any(|seg| seg.is_empty() || seg == "." || seg == "..");
        if bad {
            self.err(at, format!("{path:?} is not a normalized relative path (no leading or trailing '/', no '.', '..', '\\\\' or empty segments)"));
        }
    }

    fn content(&mut self, at: &str, value: &Value) {
        const SHAPE: &str = "content must be a string or an object with \"text\" or \"base64\" (and optionally \"mode\")";
        match value {
            Value::String(_) => {}
            Value::Object(map) => {
                if let Some(key) = map
                    .keys()
                    .find(|k| !["text", "base64", "mode"].contains(&k.as_str()))
                {
                    self.err(at, format!("{SHAPE}; unknown member {key:?}"));
                }
                match (map.get("text"), map.get("base64")) {
                    (Some(_), Some(_)) => {
                        self.err(at, "\"text\" and \"base64\" exclude each other")
                    }
                    (None, None) => self.err(at, SHAPE),
                    (Some(Value::String(_)), None) => {}
                    (Some(_), None) => self.err(&format!("{at}.text"), "must be a string"),
                    (None, Some(Value::String(s))) => {
                        if b64::decode(s).is_none() {
                            self.err(
                                &format!("{at}.base64"),
                                "not valid base64 (standard alphabet, padded)",
                            );
                        }
                    }
                    (None, Some(_)) => self.err(&format!("{at}.base64"), "must be a string"),
                }
                if let Some(mode) = map.get("mode") {
                    if mode.as_str().and_then(parse_mode).is_none() {
                        self.err(
                            &format!("{at}.mode"),
                            "must be permission bits as an octal string of 3 or 4 digits (\"755\")",
                        );
                    }
                }
            }
            _ => self.err(at, SHAPE),
        }
    }

    fn files(&mut self, at: &str, value: &Value) {
        let Some(map) = value.as_object() else {
            self.err(at, "must be an object (path → content)");
            return;
        };
        for (path, content) in map {
            let here = format!("{at}[{}]", quote(path));
            self.rel_path(&here, path);
            self.content(&here, content);
        }
    }

    fn dirs(&mut self, at: &str, value: Option<&Value>) {
        let Some(value) = value else { return };
        let Some(list) = value.as_array() else {
            self.err(at, "must be an array of paths");
            return;
        };
        let mut seen = BTreeSet::new();
        for (i, item) in list.iter().enumerate() {
            let here = format!("{at}[{i}]");
            match item.as_str() {
                Some(p) => {
                    self.rel_path(&here, p);
                    if !seen.insert(p) {
                        self.err(&here, format!("duplicate directory {p:?}"));
                    }
                }
                None => self.err(&here, "must be a string"),
            }
        }
    }

    fn symlinks(&mut self, at: &str, value: Option<&Value>) {
        let Some(value) = value else { return };
        let Some(map) = value.as_object() else {
            self.err(at, "must be an object (path → target)");
            return;
        };
        for (path, target) in map {
            let here = format!("{at}[{}]", quote(path));
            self.rel_path(&here, path);
            match target.as_str() {
                Some(t) if !t.is_empty() => {}
                _ => self.err(&here, "target must be a non-empty string"),
            }
        }
    }

    fn string_array(&mut self, at: &str, value: Option<&Value>, min: usize) {
        let Some(value) = value else { return };
        let Some(list) = value.as_array() else {
            self.err(at, "must be an array of strings");
            return;
        };
        if list.len() < min {
            self.err(at, format!("must have at least {min} item(s)"));
        }
        for (i, item) in list.iter().enumerate() {
            if item.as_str().is_none_or(str::is_empty) {
                self.err(&format!("{at}[{i}]"), "must be a non-empty string");
            }
        }
    }

    /// A tree is consistent: no path declared twice, and no file or symlink
    /// standing where another entry needs a directory.
    fn tree_conflicts(
        &mut self,
        at: &str,
        files: Option<&Value>,
        dirs: Option<&Value>,
        symlinks: Option<&Value>,
    ) {
        let mut leaves: BTreeMap<&str, &str> = BTreeMap::new();
        let mut all: Vec<(&str, &str)> = Vec::new();
        if let Some(Value::Object(m)) = files {
            all.extend(m.keys().map(|k| (k.as_str(), "file")));
        }
        if let Some(Value::Object(m)) = symlinks {
            all.extend(m.keys().map(|k| (k.as_str(), "symlink")));
        }
        for (path, kind) in &all {
            if let Some(other) = leaves.insert(path, kind) {
                self.err(
                    at,
                    format!("{path:?} is declared both as a {other} and as a {kind}"),
                );
            }
        }
        let mut paths: Vec<&str> = all.iter().map(|(p, _)| *p).collect();
        if let Some(Value::Array(list)) = dirs {
            for d in list.iter().filter_map(Value::as_str) {
                if let Some(kind) = leaves.get(d) {
                    self.err(
                        at,
                        format!("{d:?} is declared both as a directory and as a {kind}"),
                    );
                }
                paths.push(d);
            }
        }
        for path in paths {
            let mut prefix = String::new();
            for seg in path
                .split('/')
                .collect::<Vec<_>>()
                .split_last()
                .map(|(_, init)| init.to_vec())
                .unwrap_or_default()
            {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(seg);
                if let Some(kind) = leaves.get(prefix.as_str()) {
                    self.err(at, format!("{path:?} needs {prefix:?} to be a directory, but it is declared as a {kind}"));
                }
            }
        }
    }

    /// `steps` (multi-step cases) and the templates of `call` that name them.
    fn steps(
        &mut self,
        steps: Option<&Value>,
        call: Option<&Value>,
        expect_result: Option<&Value>,
    ) {
        let count = steps.and_then(Value::as_array).map_or(0, Vec::len);
        let mut problems = steps.map(crate::steps::problems).unwrap_or_default();
        if let Some(call) = call.filter(|c| c.is_object()) {
            problems.extend(crate::steps::template_problems("$.call", call, count));
        }
        if let Some(result) = expect_result {
            problems.extend(crate::steps::template_problems(
                "$.expect.result",
                result,
                count,
            ));
        }
        for (at, message) in problems {
            self.err(&at, message);
        }
    }

    fn case(&mut self, value: &Value) {
        let Some(map) = self.object(
            "$",
            value,
            &["id", "summary", "spec", "tool", "given", "call", "expect"],
            &["tags", "$schema", "steps"],
        ) else {
            return;
        };
        if map.get("$schema").is_some_and(|v| !v.is_string()) {
            self.err("$.$schema", "must be a string (the URI of the case schema)");
        }
        if let Some(id) = map.get("id") {
            match id.as_str() {
                Some(s) => {
                    let ok = !s.is_empty()
                        && s.split('/')
                            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
                    if !ok {
                        self.err(
                            "$.id",
                            "must be a path of [A-Za-z0-9._-] segments separated by '/'",
                        );
                    }
                }
                None => self.err("$.id", "must be a string"),
            }
        }
        self.non_empty_string("$.summary", map.get("summary"));
        self.non_empty_string("$.tool", map.get("tool"));
        self.string_array("$.spec", map.get("spec"), 1);
        if let Some(Value::Array(spec)) = map.get("spec") {
            for (i, item) in spec.iter().enumerate() {
                if let Some(s) = item.as_str() {
                    match s.split_once('#') {
                        Some((doc, anchor)) if !doc.is_empty() && !anchor.is_empty() => {}
                        _ => self.err(
                            &format!("$.spec[{i}]"),
                            format!("{s:?} is not a clause reference `document#anchor`"),
                        ),
                    }
                }
            }
        }
        self.string_array("$.tags", map.get("tags"), 0);
        if let Some(given) = map.get("given") {
            if let Some(g) = self.object(
                "$.given",
                given,
                &[],
                &["files", "dirs", "symlinks", "session"],
            ) {
                if let Some(files) = g.get("files") {
                    self.files("$.given.files", files);
                }
                self.dirs("$.given.dirs", g.get("dirs"));
                self.symlinks("$.given.symlinks", g.get("symlinks"));
                self.tree_conflicts("$.given", g.get("files"), g.get("dirs"), g.get("symlinks"));
                if let Some(session) = g.get("session") {
                    if let Some(s) = self.object(
                        "$.given.session",
                        session,
                        &[],
                        &["activeFiles", "limits", "keepStore"],
                    ) {
                        if s.get("keepStore").is_some_and(|k| !k.is_boolean()) {
                            self.err("$.given.session.keepStore", "must be a boolean");
                        }
                        if let Some(limits) = s.get("limits") {
                            if let Some(l) = self.object(
                                "$.given.session.limits",
                                limits,
                                &[],
                                &["createFileMaxBytes"],
                            ) {
                                for (k, v) in l {
                                    if !v.is_u64() {
                                        self.err(
                                            &format!("$.given.session.limits.{k}"),
                                            "must be a non-negative integer",
                                        );
                                    }
                                }
                            }
                        }
                        if let Some(active) = s.get("activeFiles") {
                            match active.as_object() {
                                Some(m) => {
                                    for (k, v) in m {
                                        if !v.is_string() {
                                            self.err(
                                                &format!(
                                                    "$.given.session.activeFiles[{}]",
                                                    quote(k)
                                                ),
                                                "must be a string",
                                            );
                                        }
                                    }
                                }
                                None => self.err(
                                    "$.given.session.activeFiles",
                                    "must be an object (docPath → content)",
                                ),
                            }
                        }
                    }
                }
            }
        }
        if let Some(call) = map.get("call") {
            if !call.is_object() {
                self.err("$.call", "must be an object (the tool's params)");
            }
        }
        self.steps(
            map.get("steps"),
            map.get("call"),
            map.get("expect").and_then(|e| e.get("result")),
        );
        if let Some(expect) = map.get("expect") {
            if let Some(e) = self.object(
                "$.expect",
                expect,
                &["result", "files"],
                &["dirs", "symlinks"],
            ) {
                if let Some(result) = e.get("result") {
                    for problem in crate::pattern::check_pattern(result) {
                        self.err(
                            &format!("$.expect.result{}", problem.0.trim_start_matches('$')),
                            problem.1,
                        );
                    }
                }
                let unchanged =
                    matches!(e.get("files"), Some(Value::String(s)) if s == "unchanged");
                match e.get("files") {
                    Some(Value::String(s)) if s == "unchanged" => {}
                    Some(files @ Value::Object(_)) => self.files("$.expect.files", files),
                    Some(_) => self.err(
                        "$.expect.files",
                        "must be \"unchanged\" or an object (path → content)",
                    ),
                    None => {}
                }
                if unchanged && (e.contains_key("dirs") || e.contains_key("symlinks")) {
                    self.err(
                        "$.expect",
                        "\"dirs\" and \"symlinks\" go with a full tree, not with \"unchanged\"",
                    );
                }
                self.dirs("$.expect.dirs", e.get("dirs"));
                self.symlinks("$.expect.symlinks", e.get("symlinks"));
                if !unchanged {
                    self.tree_conflicts(
                        "$.expect",
                        e.get("files"),
                        e.get("dirs"),
                        e.get("symlinks"),
                    );
                }
            }
        }
    }
}

/// Base64 (standard alphabet, padded), the encoding of `{"base64": ...}` content.
pub mod b64 {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    /// Encode bytes.
    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    /// Decode; `None` when the text is not canonical padded base64.
    pub fn decode(text: &str) -> Option<Vec<u8>> {
        let bytes = text.as_bytes();
        if !bytes.len().is_multiple_of(4) {
            return None;
        }
        let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
        for (ci, chunk) in bytes.chunks(4).enumerate() {
            let last = ci == bytes.len() / 4 - 1;
            let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
            if pad > 2 || (pad > 0 && !last) {
                return None;
            }
            let mut n = 0u32;
            for &c in &chunk[..4 - pad] {
                let v = ALPHABET.iter().position(|&a| a == c)? as u32;
                n = (n << 6) | v;
            }
            n <<= 6 * pad as u32;
            let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            out.extend_from_slice(&decoded[..3 - pad]);
            if encode(&decoded[..3 - pad]).as_bytes() != chunk {
                return None;
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same negative examples are rejected by corpus/schema/case.schema.json
    /// (checked with a JSON Schema validator when the schema changes).
    #[test]
    fn validate_rejects_what_the_schema_rejects() {
        let good = serde_json::json!({
            "id": "t/a", "summary": "s", "spec": ["patch-envelope#add-file"], "tool": "apply_patch",
            "given": {"files": {"a.txt": "x"}, "dirs": ["d"], "symlinks": {"l": "../outside"}},
            "call": {}, "expect": {"result": {"success": {"$type": "boolean"}}, "files": "unchanged"}
        });
        assert_eq!(validate(&good), Vec::<(String, String)>::new());
        let with = |path: &[&str], v: Value| {
            let mut case = good.clone();
            let mut at = &mut case;
            for p in &path[..path.len() - 1] {
                at = &mut at[*p];
            }
            at[path[path.len() - 1]] = v;
            case
        };
        let bad = [
            ("extra member", with(&["x"], Value::from(1)), "$"),
            (
                "bad path",
                with(&["given", "files"], serde_json::json!({"../a": "x"})),
                "$.given.files[\"../a\"]",
            ),
            (
                "bad base64",
                with(
                    &["given", "files"],
                    serde_json::json!({"a": {"base64": "Zg"}}),
                ),
                "$.given.files[\"a\"].base64",
            ),
            (
                "matcher mix",
                with(
                    &["expect", "result"],
                    serde_json::json!({"a": {"$len": 1, "x": 2}}),
                ),
                "$.expect.result.a",
            ),
            (
                "unknown matcher",
                with(
                    &["expect", "result"],
                    serde_json::json!({"a": {"$nope": 1}}),
                ),
                "$.expect.result.a",
            ),
            (
                "dirs with unchanged",
                with(&["expect", "dirs"], serde_json::json!(["a"])),
                "$.expect",
            ),
            (
                "empty spec",
                with(&["spec"], serde_json::json!([])),
                "$.spec",
            ),
            (
                "file under a file",
                with(&["given", "dirs"], serde_json::json!(["a.txt/b"])),
                "$.given",
            ),
            (
                "decimal mode",
                with(
                    &["given", "files"],
                    serde_json::json!({"a": {"text": "x", "mode": "789"}}),
                ),
                "$.given.files[\"a\"].mode",
            ),
            (
                "text and base64",
                with(
                    &["given", "files"],
                    serde_json::json!({"a": {"text": "x", "base64": "eA=="}}),
                ),
                "$.given.files[\"a\"]",
            ),
            (
                "mode alone",
                with(
                    &["expect", "files"],
                    serde_json::json!({"a": {"mode": "755"}}),
                ),
                "$.expect.files[\"a\"]",
            ),
            (
                "unknown limit",
                with(
                    &["given", "session"],
                    serde_json::json!({"limits": {"maxBytes": 1}}),
                ),
                "$.given.session.limits",
            ),
            (
                "negative limit",
                with(
                    &["given", "session"],
                    serde_json::json!({"limits": {"createFileMaxBytes": -1}}),
                ),
                "$.given.session.limits.createFileMaxBytes",
            ),
        ];
        for (name, case, at) in bad {
            let problems = validate(&case);
            assert!(
                problems.iter().any(|(p, _)| p == at),
                "{name}: {problems:?}"
            );
        }
    }

    #[test]
    fn file_entries_give_bytes_and_modes() {
        let case = |files: Value| -> Given {
            serde_json::from_value(serde_json::json!({"files": files})).expect("a valid given")
        };
        let g = case(serde_json::json!({
            "a": "x\n",
            "b": {"text": "#!/bin/sh\n", "mode": "755"},
            "c": {"base64": "/wA=", "mode": "0600"},
            "d": {"base64": "/wA="}
        }));
        let got: Vec<(Vec<u8>, Option<u32>)> =
            g.files.values().map(|c| (c.bytes(), c.mode())).collect();
        assert_eq!(
            got,
            vec![
                (b"x\n".to_vec(), None),
                (b"#!/bin/sh\n".to_vec(), Some(0o755)),
                (vec![0xff, 0], Some(0o600)),
                (vec![0xff, 0], None),
            ]
        );
        assert_eq!(parse_mode("7777"), Some(0o7777));
        for bad in ["75", "75a", "07555", "-755", "8"] {
            assert_eq!(parse_mode(bad), None, "{bad}");
        }
        // The object form serialises back as it was written.
        let back = serde_json::to_value(&g.files).expect("serialise");
        assert_eq!(
            back["b"],
            serde_json::json!({"text": "#!/bin/sh\n", "mode": "755"})
        );
        assert_eq!(back["d"], serde_json::json!({"base64": "/wA="}));
    }

    #[test]
    fn base64_round_trips() {
        for input in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\xfe\x00bar"] {
            assert_eq!(b64::decode(&b64::encode(input)).as_deref(), Some(input));
        }
        assert_eq!(b64::encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(
            b64::decode("Zm9=").as_deref(),
            None,
            "non-canonical padding bits"
        );
        assert_eq!(b64::decode("Zg").as_deref(), None);
    }
}
