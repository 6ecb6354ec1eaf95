//! The structured input of `envelope_apply`: a small workspace (files with
//! chosen line endings, final newline, BOM, mode) and an edit script that
//! is rendered into an envelope, then optionally mutated byte by byte.
//!
//! Hunks are cut from the target file's own lines (a window, then keep /
//! remove / add operations), so most of them match; vocabulary words are
//! few and short, so duplicates (`multiple_matches`) and overlaps are common.

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use patchspec_engine::hash::sha256_hex;

use super::apply_model;
use super::envelope_model::{split_lines, NO_NEWLINE};
use super::memfs::Node;

const WORDS: &[&str] = &[
    "a",
    "b",
    "c",
    "x",
    "",
    " ",
    "a ",
    "\ta",
    "foo",
    "bar",
    "\u{e9}",
    "x\r",
    "*** End Patch",
    "@@",
    "-a",
    "+a",
    NO_NEWLINE,
    "\u{feff}a",
    "a -> b",
    "A",
];

/// Paths of the files a workspace may hold (directories `d` and `d/e` always exist).
pub const SLOTS: &[&str] = &["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "A.txt", "x y.txt"];
const NEW: &[&str] = &[
    "new.txt",
    "d/new.txt",
    "nodir/new.txt",
    "d/e/g.txt",
    "p -> q.txt",
    "q ->",
];

/// A line of text: a vocabulary word or anything (newlines removed).
#[derive(Arbitrary, Debug, Clone)]
pub enum Text {
    /// `WORDS[i % len]`.
    Word(u8),
    /// Arbitrary text, without `\n`, at most 12 characters.
    Raw(String),
}

impl Text {
    /// The text.
    pub fn get(&self) -> String {
        match self {
            Text::Word(i) => WORDS[usize::from(*i) % WORDS.len()].to_string(),
            Text::Raw(s) => s.chars().filter(|&c| c != '\n').take(12).collect(),
        }
    }
}

/// How a file's lines end.
#[derive(Arbitrary, Debug)]
pub enum Eol {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
    /// Bit `i % 8` of the mask: CRLF for line `i`.
    Mixed(u8),
}

/// One file of the workspace.
#[derive(Arbitrary, Debug)]
pub struct FileSpec {
    /// Which path (for the extra files).
    slot: u8,
    lines: Vec<Text>,
    eol: Eol,
    final_newline: bool,
    bom: bool,
    exec: bool,
}

/// How a section names its path.
#[derive(Arbitrary, Debug, Clone)]
pub enum PathSpec {
    /// A slot path as is.
    Slot(u8),
    /// A path that does not exist (some with a missing parent).
    New(u8),
    /// `./` + slot.
    Dot(u8),
    /// `d/../` + slot.
    Up(u8),
    /// `../out.txt`.
    Escape,
    /// `/etc/hostname`.
    Absolute,
    /// `d\c.txt`.
    Backslash,
    /// `a.txt/x`: through a file.
    ThroughFile,
    /// `d`: a directory.
    Dir,
    /// Anything.
    Raw(String),
}

impl PathSpec {
    fn get(&self) -> String {
        let slot = |i: &u8| SLOTS[usize::from(*i) % SLOTS.len()];
        match self {
            PathSpec::Slot(i) => slot(i).to_string(),
            PathSpec::New(i) => NEW[usize::from(*i) % NEW.len()].to_string(),
            PathSpec::Dot(i) => format!("./{}", slot(i)),
            PathSpec::Up(i) => format!("d/../{}", slot(i)),
            PathSpec::Escape => "../out.txt".into(),
            PathSpec::Absolute => "/etc/hostname".into(),
            PathSpec::Backslash => "d\\c.txt".into(),
            PathSpec::ThroughFile => "a.txt/x".into(),
            PathSpec::Dir => "d".into(),
            PathSpec::Raw(s) => s.chars().filter(|&c| c != '\n').take(16).collect(),
        }
    }
}

/// One step of a hunk built over a window of the file's lines.
#[derive(Arbitrary, Debug)]
pub enum HOp {
    /// The next window line as context.
    Keep,
    /// The next window line removed.
    Remove,
    /// An added line.
    Add(Text),
    /// A context line that is (probably) not in the file.
    Junk(Text),
    /// Skip the next window line (the hunk then probably does not match).
    Skip,
}

/// One hunk.
#[derive(Arbitrary, Debug)]
pub struct HunkSpec {
    start: u8,
    window: u8,
    ops: Vec<HOp>,
    eof: bool,
    marker: Option<u8>,
    header: Option<Text>,
}

/// One section (Update first: the variant all-zero input selects).
#[derive(Arbitrary, Debug)]
pub enum SectionSpec {
    /// `*** Update File:` / `*** Move File:`.
    Update {
        /// Which.
        path: PathSpec,
        /// Move destination.
        move_to: Option<PathSpec>,
        /// Spell the move `*** Move File: a -> b`.
        arrow: bool,
        /// Hunks.
        hunks: Vec<HunkSpec>,
    },
    /// `*** Add File:`.
    Add {
        /// Where.
        path: PathSpec,
        /// Body.
        lines: Vec<Text>,
        /// Close with the no-newline marker.
        no_newline: bool,
    },
    /// `*** Delete File:`.
    Delete {
        /// Which.
        path: PathSpec,
    },
}

/// What to put in `expectedSha256ByPath` for a path.
#[derive(Arbitrary, Debug)]
pub enum ShaSpec {
    /// The digest of the file there now (of `""` when there is none).
    Actual,
    /// The same, upper case.
    Upper,
    /// Someone else's digest.
    Wrong,
    /// `""`: must not exist.
    Empty,
    /// Not a digest.
    Malformed,
}

/// A byte-level mutation of the rendered envelope.
#[derive(Arbitrary, Debug)]
pub enum Mutation {
    /// Overwrite one byte.
    Set(u16, u8),
    /// Insert one byte.
    Insert(u16, u8),
    /// Remove up to 8 bytes.
    Remove(u16, u8),
    /// Insert a grammar token.
    Token(u16, u8),
}

const TOKENS: &[&str] = &[
    "*** Begin Patch\n",
    "*** End Patch\n",
    "*** End of File\n",
    "@@\n",
    "\\ No newline at end of file\n",
    "\n",
    "\r\n",
    " ",
    "+",
    "-",
    "*** Add File: ",
    "*** Delete File: a.txt\n",
    "*** Move to: ",
    "\u{feff}",
    "\r",
    " -> ",
];

/// The whole structured input.
#[derive(Arbitrary, Debug)]
pub struct ApplyInput {
    /// `a.txt`, `b.txt`, `d/c.txt` always exist (their `slot` is ignored).
    base: [FileSpec; 3],
    /// More files, at any slot.
    files: Vec<FileSpec>,
    sections: Vec<SectionSpec>,
    crlf_envelope: bool,
    atomic: bool,
    expected: Vec<(PathSpec, ShaSpec)>,
    mutations: Vec<Mutation>,
    /// Apply `mutations` only when `% 4 == 3` (most envelopes stay well-formed).
    mutate: u8,
    fault: Option<u8>,
    real_fs: u8,
}

/// A file of a workspace: path, bytes, permission bits.
pub type FileEntry = (String, Vec<u8>, u32);

/// What the oracle runs: a workspace, an envelope and options.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// (path, bytes, mode) of every file.
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// Directories.
    pub dirs: Vec<String>,
    /// The envelope bytes.
    pub patch: Vec<u8>,
    /// `atomic`.
    pub atomic: bool,
    /// `expectedSha256ByPath`.
    pub expected: BTreeMap<String, String>,
    /// Fail the n-th mutating filesystem operation.
    pub fault: Option<usize>,
    /// Run on a temporary directory instead of `MemFs`.
    pub real_fs: bool,
}

impl ApplyInput {
    /// Build the scenario: workspace, rendered (and mutated) envelope, options.
    pub fn scenario(&self) -> Scenario {
        let (files, dirs, tree) = workspace(&self.base, &self.files);
        let lines_of = |raw: &str| -> Vec<String> {
            match apply_model::guard(&tree, raw)
                .ok()
                .and_then(|p| tree.get(&p))
            {
                Some(Node::File(b, _)) => split_lines(b)
                    .lines
                    .iter()
                    .map(|(c, _)| String::from_utf8_lossy(c).into_owned())
                    .collect(),
                _ => Vec::new(),
            }
        };
        let mut out: Vec<String> = vec!["*** Begin Patch".into()];
        for s in self.sections.iter().take(4) {
            match s {
                SectionSpec::Add {
                    path,
                    lines,
                    no_newline,
                } => {
                    out.push(format!("*** Add File: {}", path.get()));
                    for l in lines.iter().take(6) {
                        out.push(format!("+{}", l.get()));
                    }
                    if *no_newline {
                        out.push(NO_NEWLINE.into());
                    }
                }
                SectionSpec::Delete { path } => {
                    out.push(format!("*** Delete File: {}", path.get()));
                }
                SectionSpec::Update {
                    path,
                    move_to,
                    arrow,
                    hunks,
                } => {
                    let from = path.get();
                    match move_to {
                        Some(to) if *arrow => {
                            out.push(format!("*** Move File: {from} -> {}", to.get()))
                        }
                        Some(to) => {
                            out.push(format!("*** Update File: {from}"));
                            out.push(format!("*** Move to: {}", to.get()));
                        }
                        None => out.push(format!("*** Update File: {from}")),
                    }
                    let base = lines_of(&from);
                    for h in hunks.iter().take(4) {
                        render_hunk(h, &base, &mut out);
                    }
                }
            }
        }
        out.push("*** End Patch".into());
        let sep = if self.crlf_envelope { "\r\n" } else { "\n" };
        let mut patch = out.join(sep);
        patch.push_str(sep);
        let mut patch = patch.into_bytes();
        let mutations = if self.mutate % 4 == 3 {
            &self.mutations[..]
        } else {
            &[]
        };
        for m in mutations.iter().take(4) {
            mutate(&mut patch, m);
        }
        let mut expected = BTreeMap::new();
        for (p, sha) in self.expected.iter().take(3) {
            let raw = p.get();
            let current = match apply_model::guard(&tree, &raw)
                .ok()
                .and_then(|p| tree.get(&p))
            {
                Some(Node::File(b, _)) => sha256_hex(b),
                _ => sha256_hex(b""),
            };
            let value = match sha {
                ShaSpec::Actual => current,
                ShaSpec::Upper => current.to_uppercase(),
                ShaSpec::Wrong => sha256_hex(b"someone else's file"),
                ShaSpec::Empty => String::new(),
                ShaSpec::Malformed => "abc".into(),
            };
            expected.insert(raw, value);
        }
        Scenario {
            files,
            dirs,
            patch,
            atomic: self.atomic,
            expected,
            fault: self.fault.map(|n| usize::from(n % 12)),
            real_fs: self.real_fs % 16 == 7,
        }
    }
}

/// The workspace of a structured input: the three base files, then up to
/// three extra ones (a later one at the same slot wins). Returns the files,
/// the directories and the same as a model tree.
pub fn workspace(
    base: &[FileSpec; 3],
    extra: &[FileSpec],
) -> (Vec<FileEntry>, Vec<String>, BTreeMap<String, Node>) {
    let mut by_slot: BTreeMap<&str, (Vec<u8>, u32)> = BTreeMap::new();
    let base = base.iter().enumerate().map(|(i, f)| (SLOTS[i], f));
    let extra = extra
        .iter()
        .take(3)
        .map(|f| (SLOTS[usize::from(f.slot) % SLOTS.len()], f));
    for (slot, f) in base.chain(extra) {
        let mut bytes = Vec::new();
        if f.bom {
            bytes.extend_from_slice(b"\xEF\xBB\xBF");
        }
        let mut lines: Vec<String> = f.lines.iter().take(10).map(Text::get).collect();
        if lines.is_empty() && !f.bom {
            // Empty specs get a default body with a repeated line, so
            // hunks have something to match (and to match twice).
            lines = ["one", "two", "three", "two", "four"]
                .map(String::from)
                .to_vec();
        }
        for (i, l) in lines.iter().enumerate() {
            bytes.extend_from_slice(l.as_bytes());
            if i + 1 == lines.len() && !f.final_newline {
                break;
            }
            let crlf = match f.eol {
                Eol::Lf => false,
                Eol::CrLf => true,
                Eol::Mixed(mask) => mask & (1 << (i % 8)) != 0,
            };
            bytes.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
        by_slot.insert(slot, (bytes, if f.exec { 0o755 } else { 0o644 }));
    }
    let files: Vec<(String, Vec<u8>, u32)> = by_slot
        .into_iter()
        .map(|(p, (b, m))| (p.to_string(), b, m))
        .collect();
    let dirs = vec!["d".to_string(), "d/e".to_string()];
    let mut tree: BTreeMap<String, Node> = BTreeMap::new();
    for d in &dirs {
        tree.insert(d.clone(), Node::Dir);
    }
    for (p, b, m) in &files {
        tree.insert(p.clone(), Node::File(b.clone(), *m));
    }
    (files, dirs, tree)
}

fn render_hunk(h: &HunkSpec, base: &[String], out: &mut Vec<String>) {
    match &h.header {
        Some(t) => out.push(format!("@@ {}", t.get())),
        None => out.push("@@".into()),
    }
    let n = base.len();
    let start = usize::from(h.start) % (n + 1);
    let end = n.min(start + 1 + usize::from(h.window % 5));
    let mut i = start;
    let mut body: Vec<String> = Vec::new();
    for op in h.ops.iter().take(8) {
        match op {
            HOp::Keep if i < end => {
                body.push(format!(" {}", base[i]));
                i += 1;
            }
            HOp::Remove if i < end => {
                body.push(format!("-{}", base[i]));
                i += 1;
            }
            HOp::Skip if i < end => i += 1,
            HOp::Add(t) => body.push(format!("+{}", t.get())),
            HOp::Junk(t) => body.push(format!(" {}", t.get())),
            HOp::Keep | HOp::Remove | HOp::Skip => {}
        }
    }
    while i < end {
        body.push(format!(" {}", base[i]));
        i += 1;
    }
    if body.is_empty() {
        body.push("+z".into());
    }
    let marker = h.marker.map(|m| usize::from(m) % body.len());
    for (j, line) in body.into_iter().enumerate() {
        out.push(line);
        if marker == Some(j) {
            out.push(NO_NEWLINE.into());
        }
    }
    if h.eof {
        out.push("*** End of File".into());
    }
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |pos: u16, len: usize| usize::from(pos) % (len + 1);
    match m {
        Mutation::Set(pos, b) => {
            if !bytes.is_empty() {
                let i = usize::from(*pos) % bytes.len();
                bytes[i] = *b;
            }
        }
        Mutation::Insert(pos, b) => {
            let i = at(*pos, bytes.len());
            bytes.insert(i, *b);
        }
        Mutation::Remove(pos, n) => {
            let i = at(*pos, bytes.len());
            let j = bytes.len().min(i + usize::from(n % 8) + 1);
            bytes.drain(i..j);
        }
        Mutation::Token(pos, t) => {
            let i = at(*pos, bytes.len());
            let tok = TOKENS[usize::from(*t) % TOKENS.len()].as_bytes();
            bytes.splice(i..i, tok.iter().copied());
        }
    }
}
