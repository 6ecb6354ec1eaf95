//! `PowerCutFs`: an in-memory [`Fs`] that knows what a power cut may lose.
//!
//! The rules (docs/clarifications.md, C-commit-power-loss):
//! - a file's bytes are durable once the file is fsync'd (`write_new`
//!   fsyncs before it returns); until then a cut leaves them absent (an
//!   empty file), whole, or torn (a prefix);
//! - every change to a folder's entries (create, mkdir, link, unlink,
//!   rmdir, rename) is durable once that folder is fsync'd after it; a
//!   rename between two folders is one operation, durable once *both*
//!   folders are fsync'd after it, and until then it is kept or lost as a
//!   whole (never in both places, never in neither); an fsync of a file
//!   makes nothing about its name durable;
//! - a cut keeps any subset of the operations not yet durable, each kept or
//!   lost independently of the others, in any order consistent with their
//!   dependencies: an operation on a name depends on the earlier operations
//!   on the same name in the same folder, an operation inside a folder on
//!   that folder's creation, and a folder's removal on the operations
//!   inside it. A durable operation whose dependency was lost is lost too
//!   (a file fsync'd into a folder whose own entry never reached the disk);
//! - an inode keeps its number across a cut, so a folder's identity (what
//!   the journal seal binds) survives when its entry does.
//!
//! This is weaker than ext4 `data=ordered`, XFS or btrfs, which journal
//! metadata in order (a cut keeps a prefix of it): whatever holds here
//! holds there.
//!
//! The model "dies" at a chosen step (every mutation, each part of a
//! `write_new` and every fsync is a step): that step and everything after
//! it fail, as when the power goes. [`PowerCutFs::crash_states`] then lists
//! the disk images the cut may leave.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::PathBuf;
use std::sync::Mutex;

use patchspec_engine::fs::{EntryKind, Fs};
use patchspec_engine::layout::{file_name_of, parent_of};
use patchspec_engine::seal::Seal;

/// An inode number.
pub type Ino = u64;
/// The root folder's inode.
const ROOT: Ino = 1;
/// The permission bits of a file created without a mode.
const FILE_MODE: u32 = 0o100644;

/// One inode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A regular file: its bytes and permission bits.
    File { data: Vec<u8>, mode: u32 },
    /// A folder: its entries.
    Dir { entries: BTreeMap<String, Ino> },
}

/// A disk: every inode, the root first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    nodes: BTreeMap<Ino, Node>,
    next: Ino,
}

/// One change to an [`Image`], as the model records it until it is durable.
#[derive(Clone, Debug)]
enum Effect {
    /// `dir/name` now names `ino` (a new inode when `new` is given).
    Link {
        dir: Ino,
        name: String,
        ino: Ino,
        new: Option<Node>,
    },
    /// `dir/name` (naming `ino`) is gone.
    Unlink { dir: Ino, name: String, ino: Ino },
    /// `from/from_name` moved to `to/to_name`, replacing what was there.
    Rename {
        from: Ino,
        from_name: String,
        to: Ino,
        to_name: String,
    },
    /// The file `ino` now holds `data`.
    Data { ino: Ino, data: Vec<u8> },
}

impl Effect {
    /// The (folder, name) entries it changes.
    fn entries(&self) -> Vec<(Ino, &str)> {
        match self {
            Effect::Link { dir, name, .. } | Effect::Unlink { dir, name, .. } => vec![(*dir, name)],
            Effect::Rename {
                from,
                from_name,
                to,
                to_name,
            } => vec![(*from, from_name), (*to, to_name)],
            Effect::Data { .. } => vec![],
        }
    }

    /// The folder it creates.
    fn made_dir(&self) -> Option<Ino> {
        match self {
            Effect::Link {
                ino,
                new: Some(Node::Dir { .. }),
                ..
            } => Some(*ino),
            _ => None,
        }
    }

    /// True when `self` (later) cannot reach the disk without `earlier`.
    fn depends_on(&self, earlier: &Effect, removed_dirs: &BTreeSet<Ino>) -> bool {
        let mine = self.entries();
        let theirs = earlier.entries();
        if mine.iter().any(|k| theirs.contains(k)) {
            return true;
        }
        if let Some(dir) = earlier.made_dir() {
            if mine.iter().any(|(d, _)| *d == dir) {
                return true;
            }
        }
        if let Effect::Unlink { ino, .. } = self {
            if removed_dirs.contains(ino) && theirs.iter().any(|(d, _)| d == ino) {
                return true;
            }
        }
        false
    }

    fn apply(&self, image: &mut Image, torn: bool) {
        match self {
            Effect::Link {
                dir,
                name,
                ino,
                new,
            } => {
                if let Some(node) = new {
                    image.nodes.entry(*ino).or_insert_with(|| node.clone());
                }
                if let Some(Node::Dir { entries }) = image.nodes.get_mut(dir) {
                    entries.insert(name.clone(), *ino);
                }
            }
            Effect::Unlink { dir, name, .. } => {
                if let Some(Node::Dir { entries }) = image.nodes.get_mut(dir) {
                    entries.remove(name);
                }
            }
            Effect::Rename {
                from,
                from_name,
                to,
                to_name,
            } => {
                let moved = match image.nodes.get_mut(from) {
                    Some(Node::Dir { entries }) => entries.remove(from_name),
                    _ => None,
                };
                if let (Some(ino), Some(Node::Dir { entries })) = (moved, image.nodes.get_mut(to)) {
                    entries.insert(to_name.clone(), ino);
                }
            }
            Effect::Data { ino, data } => {
                if let Some(Node::File { data: held, .. }) = image.nodes.get_mut(ino) {
                    *held = if torn {
                        data[..data.len() / 2].to_vec()
                    } else {
                        data.clone()
                    };
                }
            }
        }
    }
}

/// An operation not yet known durable: the fsyncs it still waits for.
#[derive(Clone, Debug)]
struct Op {
    effect: Effect,
    /// The folders (or, for data, the file) still to be fsync'd after it.
    unsynced: BTreeSet<Ino>,
}

/// What a cut may do to one pending operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Lost,
    Kept,
    /// File data only: a prefix reached the disk.
    Torn,
}

struct State {
    /// The disk when the model was made (everything durable).
    base: Image,
    /// What the running process sees.
    live: Image,
    /// Every operation since `base`, in order.
    ops: Vec<Op>,
    /// Steps taken so far.
    steps: usize,
    /// The step at which the power goes.
    die_at: Option<usize>,
    dead: bool,
}

/// The model filesystem (see the module doc).
pub struct PowerCutFs {
    state: Mutex<State>,
    seal: Option<Seal>,
}

fn not_found(path: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("model: no {path}"))
}

/// An error with the raw OS code the engine tells errors by (ENOTEMPTY...).
fn os_error(code: i32, _path: &str) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl Image {
    /// A disk holding `files` (path, bytes), their folders made.
    pub fn with_files(files: &[(&str, &[u8])]) -> Image {
        let mut image = Image {
            nodes: BTreeMap::from([(
                ROOT,
                Node::Dir {
                    entries: BTreeMap::new(),
                },
            )]),
            next: ROOT + 1,
        };
        for (path, bytes) in files {
            let mut dir = ROOT;
            let parts: Vec<&str> = path.split('/').collect();
            for part in &parts[..parts.len() - 1] {
                dir = match image.lookup(dir, part) {
                    Some(ino) => ino,
                    None => image.insert(
                        dir,
                        part,
                        Node::Dir {
                            entries: BTreeMap::new(),
                        },
                    ),
                };
            }
            image.insert(
                dir,
                parts[parts.len() - 1],
                Node::File {
                    data: bytes.to_vec(),
                    mode: FILE_MODE,
                },
            );
        }
        image
    }

    fn insert(&mut self, dir: Ino, name: &str, node: Node) -> Ino {
        let ino = self.next;
        self.next += 1;
        self.nodes.insert(ino, node);
        if let Some(Node::Dir { entries }) = self.nodes.get_mut(&dir) {
            entries.insert(name.to_string(), ino);
        }
        ino
    }

    fn lookup(&self, dir: Ino, name: &str) -> Option<Ino> {
        match self.nodes.get(&dir) {
            Some(Node::Dir { entries }) => entries.get(name).copied(),
            _ => None,
        }
    }

    /// The inode `path` names (`""`: the root).
    fn resolve(&self, path: &str) -> Option<Ino> {
        if path.is_empty() {
            return Some(ROOT);
        }
        path.split('/')
            .try_fold(ROOT, |dir, part| self.lookup(dir, part))
    }

    /// Every path under the root: `dir/` for folders, with the bytes of
    /// files (what tests compare).
    pub fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        self.key()
            .into_iter()
            .map(|(path, bytes, _)| (path, bytes))
            .collect()
    }

    /// [`Image::tree`] with each folder's inode: two images that differ
    /// only there differ for the seal.
    pub fn key(&self) -> Vec<(String, Vec<u8>, Ino)> {
        let mut out = Vec::new();
        self.walk(ROOT, "", &mut out);
        out
    }

    fn walk(&self, dir: Ino, prefix: &str, out: &mut Vec<(String, Vec<u8>, Ino)>) {
        let Some(Node::Dir { entries }) = self.nodes.get(&dir) else {
            return;
        };
        for (name, ino) in entries {
            let path = format!("{prefix}{name}");
            match self.nodes.get(ino) {
                Some(Node::Dir { .. }) => {
                    out.push((format!("{path}/"), Vec::new(), *ino));
                    self.walk(*ino, &format!("{path}/"), out);
                }
                Some(Node::File { data, .. }) => out.push((path, data.clone(), 0)),
                None => {}
            }
        }
    }
}

impl PowerCutFs {
    /// A model over `image`, all of it durable, sealed with `seal`; the
    /// power goes at step `die_at` (never when `None`).
    pub fn new(image: Image, seal: Option<Seal>, die_at: Option<usize>) -> PowerCutFs {
        PowerCutFs {
            state: Mutex::new(State {
                base: image.clone(),
                live: image,
                ops: Vec::new(),
                steps: 0,
                die_at,
                dead: false,
            }),
            seal,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// Steps taken (every mutation, part of a write and fsync).
    pub fn steps(&self) -> usize {
        self.with(|s| s.steps)
    }

    /// What the running process sees now.
    pub fn live(&self) -> Image {
        self.with(|s| s.live.clone())
    }

    /// The disk images a cut now may leave: all of them when there are at
    /// most `limit` ways to choose, else `limit` choices drawn with `rng`.
    /// Duplicates are removed.
    pub fn crash_states(&self, limit: usize, rng: &mut fastrand::Rng) -> Vec<Image> {
        self.with(|s| {
            let pending: Vec<usize> = (0..s.ops.len())
                .filter(|&i| !s.ops[i].unsynced.is_empty())
                .collect();
            let fates_of = |i: usize| -> &'static [Fate] {
                match &s.ops[i].effect {
                    Effect::Data { data, .. } if data.len() > 1 => {
                        &[Fate::Lost, Fate::Kept, Fate::Torn]
                    }
                    _ => &[Fate::Lost, Fate::Kept],
                }
            };
            let total: f64 = pending.iter().map(|&i| fates_of(i).len() as f64).product();
            let mut choices: Vec<Vec<Fate>> = Vec::new();
            if total <= limit as f64 {
                let mut current = vec![Fate::Lost; pending.len()];
                let mut counters = vec![0usize; pending.len()];
                loop {
                    for (k, &i) in pending.iter().enumerate() {
                        current[k] = fates_of(i)[counters[k]];
                    }
                    choices.push(current.clone());
                    // Next mixed-radix number.
                    let mut k = 0;
                    loop {
                        if k == pending.len() {
                            break;
                        }
                        counters[k] += 1;
                        if counters[k] < fates_of(pending[k]).len() {
                            break;
                        }
                        counters[k] = 0;
                        k += 1;
                    }
                    if k == pending.len() {
                        break;
                    }
                }
            } else {
                for _ in 0..limit {
                    choices.push(
                        pending
                            .iter()
                            .map(|&i| {
                                let fates = fates_of(i);
                                fates[rng.usize(..fates.len())]
                            })
                            .collect(),
                    );
                }
            }
            let mut seen = BTreeSet::new();
            let mut out = Vec::new();
            for choice in choices {
                let mut fate = vec![Fate::Kept; s.ops.len()];
                for (k, &i) in pending.iter().enumerate() {
                    fate[i] = choice[k];
                }
                let image = s.crash_image(&fate);
                if seen.insert(image.key()) {
                    out.push(image);
                }
            }
            out
        })
    }
}

impl State {
    /// The disk a cut leaves when each operation meets its `fate`.
    fn crash_image(&self, fate: &[Fate]) -> Image {
        let removed_dirs: BTreeSet<Ino> = self
            .ops
            .iter()
            .filter_map(|o| match &o.effect {
                Effect::Unlink { ino, .. } => Some(*ino),
                _ => None,
            })
            // The live disk keeps every inode ever made.
            .filter(|ino| matches!(self.live.nodes.get(ino), Some(Node::Dir { .. })))
            .collect();
        let mut applied = vec![false; self.ops.len()];
        let mut image = self.base.clone();
        for (i, op) in self.ops.iter().enumerate() {
            if fate[i] == Fate::Lost {
                continue;
            }
            let blocked = (0..i)
                .any(|j| !applied[j] && op.effect.depends_on(&self.ops[j].effect, &removed_dirs));
            if blocked {
                continue;
            }
            op.effect.apply(&mut image, fate[i] == Fate::Torn);
            applied[i] = true;
        }
        image.next = self.live.next;
        image
    }

    /// Take one step: fail when the power is gone or goes now.
    fn step(&mut self, what: &str) -> io::Result<()> {
        if self.dead {
            return Err(io::Error::other(format!("model: power is off ({what})")));
        }
        if Some(self.steps) == self.die_at {
            self.dead = true;
            return Err(io::Error::other(format!("model: power cut at {what}")));
        }
        self.steps += 1;
        Ok(())
    }

    fn alive(&self, what: &str) -> io::Result<()> {
        if self.dead {
            return Err(io::Error::other(format!("model: power is off ({what})")));
        }
        Ok(())
    }

    /// Record `effect` (already checked legal) and apply it to the live disk.
    fn record(&mut self, effect: Effect) {
        let unsynced = match &effect {
            Effect::Link { dir, .. } | Effect::Unlink { dir, .. } => BTreeSet::from([*dir]),
            Effect::Rename { from, to, .. } => BTreeSet::from([*from, *to]),
            Effect::Data { ino, .. } => BTreeSet::from([*ino]),
        };
        effect.apply(&mut self.live, false);
        self.ops.push(Op { effect, unsynced });
    }

    /// fsync of `ino`: every earlier operation waiting for it is durable there.
    fn sync(&mut self, ino: Ino) {
        for op in &mut self.ops {
            op.unsynced.remove(&ino);
        }
    }

    /// The folder and name of `path`, its folder required to exist.
    fn parent(&self, path: &str) -> io::Result<(Ino, String)> {
        let dir = self
            .live
            .resolve(parent_of(path))
            .ok_or_else(|| not_found(path))?;
        match self.live.nodes.get(&dir) {
            Some(Node::Dir { .. }) => Ok((dir, file_name_of(path).to_string())),
            _ => Err(os_error(libc::ENOTDIR, path)),
        }
    }

    /// A new inode `node` at `path`, where nothing is: one step.
    fn link_new(&mut self, path: &str, node: Node) -> io::Result<Ino> {
        let (dir, name) = self.parent(path)?;
        if self.live.lookup(dir, &name).is_some() {
            return Err(os_error(libc::EEXIST, path));
        }
        self.step(path)?;
        let ino = self.live.next;
        self.live.next += 1;
        self.record(Effect::Link {
            dir,
            name,
            ino,
            new: Some(node),
        });
        Ok(ino)
    }

    /// Remove the entry `path` (naming `ino`): one step.
    fn unlink(&mut self, path: &str, ino: Ino) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        self.step(path)?;
        self.record(Effect::Unlink { dir, name, ino });
        Ok(())
    }

    fn file(&self, path: &str) -> io::Result<(Ino, &Vec<u8>, u32)> {
        let ino = self.live.resolve(path).ok_or_else(|| not_found(path))?;
        match self.live.nodes.get(&ino) {
            Some(Node::File { data, mode }) => Ok((ino, data, *mode)),
            _ => Err(os_error(libc::EISDIR, path)),
        }
    }
}

impl Fs for PowerCutFs {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.with(|s| {
            s.alive(path)?;
            Ok(s.file(path)?.1.clone())
        })
    }

    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.with(|s| {
            s.alive(path)?;
            Ok(s.live
                .resolve(path)
                .map(|ino| match s.live.nodes.get(&ino) {
                    Some(Node::Dir { .. }) => EntryKind::Dir,
                    _ => EntryKind::File,
                }))
        })
    }

    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        Err(os_error(libc::EINVAL, path))
    }

    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.with(|s| {
            s.alive(path)?;
            let ino = s.live.resolve(path).ok_or_else(|| not_found(path))?;
            let Some(Node::Dir { entries }) = s.live.nodes.get(&ino) else {
                return Err(os_error(libc::ENOTDIR, path));
            };
            Ok(entries
                .iter()
                .map(|(name, ino)| {
                    let kind = match s.live.nodes.get(ino) {
                        Some(Node::Dir { .. }) => EntryKind::Dir,
                        _ => EntryKind::File,
                    };
                    (name.clone(), kind)
                })
                .collect())
        })
    }

    fn mode(&self, path: &str) -> io::Result<u32> {
        self.with(|s| {
            s.alive(path)?;
            let ino = s.live.resolve(path).ok_or_else(|| not_found(path))?;
            Ok(match s.live.nodes.get(&ino) {
                Some(Node::File { mode, .. }) => *mode,
                _ => 0o040755,
            })
        })
    }

    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.with(|s| {
            s.alive(path)?;
            let node = Node::File {
                data: Vec::new(),
                mode: mode.map_or(FILE_MODE, |m| 0o100000 | (m & 0o7777)),
            };
            let ino = s.link_new(path, node)?;
            s.step(path)?;
            s.record(Effect::Data {
                ino,
                data: bytes.to_vec(),
            });
            s.step(path)?;
            s.sync(ino);
            Ok(())
        })
    }

    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(link)?;
            let (ino, _, _) = s.file(original)?;
            let (dir, name) = s.parent(link)?;
            if s.live.lookup(dir, &name).is_some() {
                return Err(os_error(libc::EEXIST, link));
            }
            s.step(link)?;
            s.record(Effect::Link {
                dir,
                name,
                ino,
                new: None,
            });
            Ok(())
        })
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(from)?;
            let (from_dir, from_name) = s.parent(from)?;
            let ino = s
                .live
                .lookup(from_dir, &from_name)
                .ok_or_else(|| not_found(from))?;
            let (to_dir, to_name) = s.parent(to)?;
            if let Some(there) = s.live.lookup(to_dir, &to_name) {
                if there == ino {
                    // Two names of one file: rename does nothing (POSIX).
                    return s.step(from);
                }
                if matches!(s.live.nodes.get(&there), Some(Node::Dir { .. })) {
                    return Err(os_error(libc::EISDIR, to));
                }
            }
            s.step(from)?;
            s.record(Effect::Rename {
                from: from_dir,
                from_name,
                to: to_dir,
                to_name,
            });
            Ok(())
        })
    }

    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(path)?;
            let (ino, _, _) = s.file(path)?;
            s.unlink(path, ino)
        })
    }

    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(path)?;
            let dir = Node::Dir {
                entries: BTreeMap::new(),
            };
            s.link_new(path, dir).map(|_| ())
        })
    }

    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(path)?;
            let ino = s.live.resolve(path).ok_or_else(|| not_found(path))?;
            match s.live.nodes.get(&ino) {
                Some(Node::Dir { entries }) if entries.is_empty() => {}
                Some(Node::Dir { .. }) => return Err(os_error(libc::ENOTEMPTY, path)),
                _ => return Err(os_error(libc::ENOTDIR, path)),
            }
            s.unlink(path, ino)
        })
    }

    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.with(|s| {
            s.alive(path)?;
            let ino = s.live.resolve(path).ok_or_else(|| not_found(path))?;
            s.step(path)?;
            s.sync(ino);
            Ok(())
        })
    }

    fn identity(&self, path: &str) -> io::Result<Option<(u64, u64)>> {
        self.with(|s| {
            s.alive(path)?;
            let ino = s.live.resolve(path).ok_or_else(|| not_found(path))?;
            Ok(Some((1, ino)))
        })
    }

    fn seal(&self) -> Option<&Seal> {
        self.seal.as_ref()
    }
}
