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

use crate::tree::{line_texts, lookup, Node, Tree};

/// The no-newline marker line of an envelope.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

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
/// The symbolic links a runner workspace may hold (path, target as
/// written): inside the workspace, and out of it into the sentinel
/// directory next to it (`../outside`, see docs/protocol.md).
pub const LINKS: &[(&str, &str)] = &[
    ("l.txt", "a.txt"),
    ("ld", "d"),
    ("out", "../outside"),
    ("o.txt", "../outside/sentinel.txt"),
];
/// Paths through [`LINKS`].
const LINK_PATHS: &[&str] = &[
    "l.txt",
    "ld/c.txt",
    "ld/new.txt",
    "out/x.txt",
    "out/sentinel.txt",
    "o.txt",
    "out",
];
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
    /// Repeat some of the lines later in the file (`k`: lines `0..=k % 3`
    /// again at `k / 3`), so hunks cut from it often match twice.
    echo: Option<u8>,
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
    /// A path through one of the [`LINKS`] (a runner workspace may hold
    /// them; elsewhere it names nothing).
    Link(u8),
}

impl PathSpec {
    /// The path as the envelope spells it.
    pub fn get(&self) -> String {
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
            PathSpec::Link(i) => LINK_PATHS[usize::from(*i) % LINK_PATHS.len()].to_string(),
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
    /// The next window line, nearly (a near miss): `% 4` 0 a trailing
    /// space added, 1 trailing whitespace removed, 2 a tab added, 3 upper case.
    /// As context when `% 8 < 4`, else removed.
    Blur(u8),
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

impl PathSpec {
    /// A path that names something a workspace usually has (the tricks
    /// kept: `./`, `d/../`, new paths and links; the rest become a slot).
    fn plain(&self) -> PathSpec {
        match self {
            PathSpec::Slot(_)
            | PathSpec::New(_)
            | PathSpec::Dot(_)
            | PathSpec::Up(_)
            | PathSpec::Link(_) => self.clone(),
            PathSpec::Raw(s) => PathSpec::Slot(s.len() as u8),
            _ => PathSpec::Slot(0),
        }
    }
}

impl ApplyInput {
    /// Make the input plain, for generation without coverage guidance
    /// (`patchspec fuzz`): one or two sections on paths that exist or may,
    /// at most two hunks each without markers, junk or skipped lines, no
    /// byte mutations, at most one stale check. Most such envelopes apply,
    /// so a defect in how they apply shows (a near miss is kept).
    pub fn tame(&mut self) {
        self.sections.truncate(2);
        self.mutate = 0;
        self.expected
            .retain(|(_, sha)| matches!(sha, ShaSpec::Actual | ShaSpec::Upper));
        for s in &mut self.sections {
            match s {
                SectionSpec::Update {
                    path,
                    move_to,
                    hunks,
                    ..
                } => {
                    *path = path.plain();
                    if let Some(to) = move_to {
                        // A fresh destination: onto a slot is already_exists.
                        let fresh = match &*to {
                            PathSpec::Slot(i) | PathSpec::Dot(i) | PathSpec::Up(i) => {
                                PathSpec::New(*i)
                            }
                            other => other.plain(),
                        };
                        *to = fresh;
                    }
                    hunks.truncate(2);
                    for h in hunks.iter_mut() {
                        h.marker = None;
                        h.header = None;
                        h.eof = false;
                        h.ops.retain(|o| !matches!(o, HOp::Junk(_) | HOp::Skip));
                    }
                }
                SectionSpec::Add { path, .. } | SectionSpec::Delete { path } => {
                    *path = path.plain()
                }
            }
        }
    }

    /// Build the scenario: workspace, rendered (and mutated) envelope, options.
    pub fn scenario(&self) -> Scenario {
        let (files, dirs, tree) = workspace(&self.base, &self.files);
        let lines_of = |raw: &str| -> Vec<String> {
            match lookup(&tree, raw) {
                Some(Node::File(b, _)) => line_texts(b),
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
            let current = match lookup(&tree, &raw) {
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
pub fn workspace(base: &[FileSpec; 3], extra: &[FileSpec]) -> (Vec<FileEntry>, Vec<String>, Tree) {
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
        if let (Some(k), false) = (f.echo, lines.is_empty()) {
            let again: Vec<String> = lines.iter().take(usize::from(k % 3) + 1).cloned().collect();
            let at = usize::from(k / 3) % (lines.len() + 1);
            lines.splice(at..at, again);
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
    let mut tree = Tree::new();
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
            HOp::Blur(k) if i < end => {
                let line = &base[i];
                let near = match k % 4 {
                    0 => format!("{line} "),
                    1 => line.trim_end().to_string(),
                    2 => format!("{line}\t"),
                    _ => line.to_uppercase(),
                };
                body.push(format!("{}{near}", if k % 8 < 4 { ' ' } else { '-' }));
                i += 1;
            }
            HOp::Add(t) => body.push(format!("+{}", t.get())),
            HOp::Junk(t) => body.push(format!(" {}", t.get())),
            HOp::Keep | HOp::Remove | HOp::Skip | HOp::Blur(_) => {}
        }
    }
    while i < end {
        body.push(format!(" {}", base[i]));
        i += 1;
    }
    if body.is_empty() {
        body.push("+z".into());
    }
    // A quarter of the hunks carry a near miss: their first old-side line
    // nearly as in the file (what a tolerant matcher would accept).
    if h.window >= 0xC0 {
        if let Some(line) = body
            .iter_mut()
            .find(|l| l.starts_with(' ') || l.starts_with('-'))
        {
            let (kind, text) = line.split_at(1);
            let near = match h.window % 4 {
                0 => format!("{text} "),
                1 => text.trim_end().to_string(),
                2 => format!("{text}\t"),
                _ => text.to_uppercase(),
            };
            *line = format!("{kind}{near}");
        }
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
