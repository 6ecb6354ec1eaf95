//! The commit journal: the intent record a multi-step commit writes before
//! its first visible change, and the crash recovery that reads it — only
//! when it can prove the engine wrote it.
//!
//! One folder per transaction, `.patchspec/txn/<transaction>/`, holds:
//! - `intent`: the plan as JSON (every temp file the commit will stage,
//!   every rename it will make, where each pre-image is kept), sealed
//!   ([`crate::seal`]), written and fsync'd, its folder fsync'd, before
//!   anything is staged;
//! - `pre-<i>`: the pre-image of the `i`-th change when it replaces a file,
//!   a hard link to the file being replaced (a copy when the filesystem
//!   refuses hard links), made after staging and before any rename;
//! - `renaming`: an empty marker written (and its folder fsync'd) after the
//!   pre-images and before the first rename;
//! - `committed`: the intent, renamed at the commit point.
//!
//! The design is **roll-back** (docs/clarifications.md, C-commit-journal):
//! while `intent` exists the commit has not happened, and [`recover`] puts
//! back the pre-state. Renaming `intent` to `committed` (and fsyncing its
//! folder) is the commit point; what is left after it (pre-image links, the
//! marker, the folder) is only cleaned up. Each recovery step tests a name
//! that only this transaction uses, so recovery is idempotent and may itself
//! be interrupted and re-run:
//! - replaced file: its temp still there means it was never renamed (unlink
//!   the temp); otherwise, once renaming began, the pre-image is renamed
//!   back over it;
//! - created file: temp still there, unlink it; otherwise, once renaming
//!   began, the created file is removed;
//! - deleted file: if its trash path exists, it is renamed back;
//! - created directory: removed (undone in reverse plan order, so after
//!   the files in it and before its parent); one that is not there was
//!   never made, one that is not empty holds what this transaction did not
//!   put there and stays.
//!
//! After a power cut (docs/clarifications.md, C-commit-power-loss) the
//! same holds because every rename is durable before the record that
//! decides it goes: the commit's renames before the commit point, an
//! undo's (into and out of every folder it touched) before its intent is
//! removed. What a cut leaves of a commit with nothing to undo (a torn
//! intent alone; pre-images and the marker without a record) is removed
//! ([`recover`]), in a folder whose name tag verifies.
//!
//! **Proof before action** (docs/security.md): a workspace may come from a
//! clone, and a clone can carry any `.patchspec/txn/`. Recovery acts on a
//! transaction folder only when ([`prove`]) its name is one the committer
//! makes, its record's seal verifies under this user's key for this
//! workspace and this folder's identity, and every name in it is the one the
//! committer derives from the step (the temp file a sibling
//! `<name>.<16 hex>.apply-patch.tmp`, the pre-image `pre-<i>` of this
//! folder, the trash path this transaction's, no path into the private
//! folder or out of the workspace). Anything else is *foreign*: never
//! executed, never removed, only reported ([`Recovery::foreign`]); `patchspec
//! recover --discard` removes it ([`discard_foreign`]).
//!
//! Cost: recovery lists `.patchspec/txn` once and examines at most
//! [`MAX_TRANSACTIONS`] folders (a name the committer does not make costs
//! nothing more; an intent is read only up to [`MAX_INTENT_BYTES`]), then
//! makes a constant number of filesystem calls per planned change of a
//! proven journal; a workspace with nothing to recover costs one `lstat`.

use std::io;

use serde::{Deserialize, Serialize};

use crate::layout::{file_name_of, is_temp_name, parent_of, PRIVATE_DIR, TRASH_DIR, TXN_DIR};
use crate::fs::{EntryKind, Fs};

/// The version of the intent record's format (2: sealed).
const INTENT_VERSION: u32 = 2;
/// The most transaction folders one recovery examines; the rest are
/// reported, not read (a clone may plant any number).
pub const MAX_TRANSACTIONS: usize = 1024;
/// The largest intent record read (about 100 bytes per planned change: a
/// commit of 100,000 files fits).
pub const MAX_INTENT_BYTES: u64 = 64 << 20;

/// One planned change, with the names recovery needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Replace the file at `path` with the staged `temp`; the pre-image is kept at `pre`.
    Update {
        /// Workspace-relative target.
        path: String,
        /// The staged sibling temp file.
        temp: String,
        /// Where the pre-image is kept while the commit runs.
        pre: String,
    },
    /// Create `path` from the staged `temp` (nothing was there).
    Create {
        /// Workspace-relative target.
        path: String,
        /// The staged sibling temp file.
        temp: String,
    },
    /// Move `path` into the trash at `trash`.
    Delete {
        /// Workspace-relative file being deleted.
        path: String,
        /// Where it goes (and what is renamed back on recovery).
        trash: String,
    },
    /// Create the directory `path` (nothing was there), before any file is
    /// staged; removed again on rollback.
    CreateDir {
        /// Workspace-relative directory.
        path: String,
    },
}

impl Step {
    /// The workspace path this step changes.
    pub fn path(&self) -> &str {
        match self {
            Step::Update { path, .. }
            | Step::Create { path, .. }
            | Step::Delete { path, .. }
            | Step::CreateDir { path } => path,
        }
    }

    /// The staged temp file, for writes.
    pub fn temp(&self) -> Option<&str> {
        match self {
            Step::Update { temp, .. } | Step::Create { temp, .. } => Some(temp),
            Step::Delete { .. } | Step::CreateDir { .. } => None,
        }
    }
}

/// The intent record of one transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intent {
    /// The record's format version.
    pub version: u32,
    /// The transaction id (also its trash folder's name).
    pub transaction: String,
    /// The changes, in plan (rename) order.
    pub steps: Vec<Step>,
    /// True when a patch store recorded this commit as pending
    /// ([`crate::fs::CommitRecorder`]): its `committed` record is then
    /// kept after the commit until the store has the call's outcome.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
    /// The seal ([`crate::seal::Seal::tag`]) over the record without it;
    /// absent when the engine had no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

impl Intent {
    /// A new intent record for `transaction`.
    pub fn new(transaction: &str, steps: Vec<Step>) -> Intent {
        Intent {
            version: INTENT_VERSION,
            transaction: transaction.to_string(),
            steps,
            recorded: false,
            seal: None,
        }
    }

    /// This transaction's folder.
    pub fn dir(&self) -> String {
        format!("{TXN_DIR}/{}", self.transaction)
    }

    /// Where the pre-image of step `index` is kept.
    pub fn pre_path(transaction: &str, index: usize) -> String {
        format!("{TXN_DIR}/{transaction}/pre-{index}")
    }

    /// The record's bytes as sealed: without its seal.
    fn unsealed_bytes(&self) -> io::Result<Vec<u8>> {
        let mut plain = self.clone();
        plain.seal = None;
        serde_json::to_vec(&plain).map_err(io::Error::other)
    }
}

fn intent_path(dir: &str) -> String {
    format!("{dir}/intent")
}

fn committed_path(dir: &str) -> String {
    format!("{dir}/committed")
}

fn marker_path(dir: &str) -> String {
    format!("{dir}/renaming")
}

/// A transaction folder (or another entry of `.patchspec/txn`) that recovery
/// did not act on, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// Its workspace path (`.patchspec/txn/<name>`, or `.patchspec/txn`
    /// itself when that cannot be read).
    pub path: String,
    /// Why it is not proven to be this engine's.
    pub reason: String,
}

/// What [`recover`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Interrupted transactions found and rolled back (a proven intent).
    pub interrupted: usize,
    /// Files put back to their pre-state (restored, un-created, un-deleted)
    /// and directories the transaction created removed again.
    pub rolled_back: usize,
    /// Staged temp files removed.
    pub temps_removed: usize,
    /// Transaction folders of finished commits whose clean-up was cut short.
    pub leftovers: usize,
    /// Finished commits whose `committed` record is kept for a patch store
    /// that has not yet recorded their call's outcome (settled by the next
    /// writing call with that store: [`crate::dispatch`]).
    pub kept_for_store: usize,
    /// What was found and not acted on: never executed, never removed.
    pub foreign: Vec<Foreign>,
}

impl Recovery {
    /// True when nothing had to be done and nothing foreign was found.
    pub fn is_nothing(&self) -> bool {
        *self == Recovery::default()
    }
}

/// True when some transaction folder exists (something may need recovery,
/// or something foreign lies there). Costs one `lstat` when the workspace is
/// clean.
pub fn pending(fs: &dyn Fs) -> io::Result<bool> {
    match fs.kind(TXN_DIR)? {
        Some(EntryKind::Dir) => Ok(!fs.list_dir(TXN_DIR)?.is_empty()),
        _ => Ok(false),
    }
}

/// What a transaction folder holds, once proven.
#[derive(Debug)]
pub enum Proven {
    /// An interrupted commit: its sealed intent (roll it back).
    Interrupted(Intent),
    /// A finished commit whose clean-up was cut short (remove the folder),
    /// or whose record a patch store still waits for (`recorded`: keep it).
    Finished {
        /// The store recorded it as pending ([`Intent::recorded`]).
        recorded: bool,
    },
}

/// True when `name` is one the committer gives a transaction:
/// `<13 digits>-<8 hex>-<digits>[-<16 hex>]`.
pub fn is_transaction_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    let digits = |s: &str, min: usize, max: usize| {
        (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    match parts.as_slice() {
        [millis, random, bytes] => digits(millis, 13, 13) && hex(random, 8) && digits(bytes, 1, 20),
        [millis, random, bytes, tag] => {
            digits(millis, 13, 13) && hex(random, 8) && digits(bytes, 1, 20) && hex(tag, 16)
        }
        _ => false,
    }
}

/// Prove that the transaction folder `name` is this engine's, for this
/// workspace (the module doc: name, seal, derived names); `Err` says why
/// not. Reads at most the intent (or the committed record); writes nothing.
pub fn prove(fs: &dyn Fs, name: &str) -> Result<Proven, String> {
    if !is_transaction_name(name) {
        return Err("not a name the engine gives a transaction".into());
    }
    let dir = format!("{TXN_DIR}/{name}");
    let seal = fs
        .seal()
        .ok_or("no journal key at hand: nothing can be proven (docs/security.md)")?;
    let folder = fs
        .identity(&dir)
        .map_err(|e| format!("cannot read its identity: {e}"))?;
    let (record, finished) = match fs.kind(&intent_path(&dir)) {
        Ok(Some(_)) => (intent_path(&dir), false),
        Ok(None) => (committed_path(&dir), true),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let bytes = fs
        .read_at_most(&record, MAX_INTENT_BYTES)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => {
                "no intent record (a commit that never began, or not the engine's)".to_string()
            }
            _ => format!("{}: {e}", file_name_of(&record)),
        })?;
    let intent: Intent = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not an intent record: {e}", file_name_of(&record)))?;
    if intent.version != INTENT_VERSION {
        return Err(format!(
            "intent format {} is not this engine's",
            intent.version
        ));
    }
    if intent.transaction != name {
        return Err("its record names another transaction".into());
    }
    let tag = intent.seal.as_deref().ok_or("its record is not sealed")?;
    let plain = intent.unsealed_bytes().map_err(|e| e.to_string())?;
    if !seal.verify(name, folder, &plain, tag) {
        return Err(
            "its seal does not verify: not written by this engine for this workspace".into(),
        );
    }
    check_names(&intent)?;
    Ok(if finished {
        Proven::Finished {
            recorded: intent.recorded,
        }
    } else {
        Proven::Interrupted(intent)
    })
}

/// Every name of a sealed intent is the one the committer derives
/// (defence in depth: the seal already says the engine wrote it).
fn check_names(intent: &Intent) -> Result<(), String> {
    let txn = &intent.transaction;
    for (i, step) in intent.steps.iter().enumerate() {
        let path = step.path();
        if !is_plain_path(path) {
            return Err(format!(
                "step {i} names {path:?}, not a workspace path the engine writes"
            ));
        }
        let derived = match step {
            Step::Update { temp, pre, .. } => {
                is_sibling_temp(path, temp) && *pre == Intent::pre_path(txn, i)
            }
            Step::Create { temp, .. } => is_sibling_temp(path, temp),
            Step::Delete { trash, .. } => *trash == format!("{TRASH_DIR}/{txn}/{path}"),
            Step::CreateDir { .. } => true,
        };
        if !derived {
            return Err(format!(
                "step {i} ({path}) names a file the committer would not"
            ));
        }
    }
    Ok(())
}

/// A relative, normalised path outside the private folder.
fn is_plain_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && path.split('/').next() != Some(PRIVATE_DIR)
}

/// `temp` is what `crate::commit::temp_name` makes for `path`.
fn is_sibling_temp(path: &str, temp: &str) -> bool {
    let name = file_name_of(path);
    let temp_file = file_name_of(temp);
    parent_of(temp) == parent_of(path)
        && is_temp_name(temp)
        && temp_file
            .len()
            .checked_sub(".0123456789abcdef.apply-patch.tmp".len())
            .and_then(|stem| temp_file.get(..stem))
            .is_some_and(|stem| !stem.is_empty() && name.starts_with(stem))
}

/// Finish every interrupted commit of the workspace that is provably this
/// engine's by rolling it back, and clean up after finished ones; report
/// everything else in `.patchspec/txn` as [`Foreign`], untouched. The caller
/// must hold the workspace lock ([`crate::workspace`]): a live commit's
/// journal looks just like a dead one's. An error means a proven rollback
/// could not be completed (its intent stays, and the next writer runs it
/// again); what is foreign never makes recovery fail.
pub fn recover(fs: &dyn Fs) -> io::Result<Recovery> {
    let mut done = Recovery::default();
    // The committer journals only inside a real `.patchspec` folder (it
    // never writes through a symlink there): behind anything else nothing
    // can be the engine's, and nothing there is touched.
    match fs.kind(PRIVATE_DIR) {
        Ok(None | Some(EntryKind::Dir)) => {}
        Ok(Some(kind)) => {
            done.foreign.push(Foreign {
                path: PRIVATE_DIR.into(),
                reason: format!(
                    "is a {kind:?}, not the engine's folder: the engine cannot journal here"
                ),
            });
            return Ok(done);
        }
        Err(e) => {
            done.foreign.push(Foreign {
                path: PRIVATE_DIR.into(),
                reason: format!("cannot be read: {e}"),
            });
            return Ok(done);
        }
    }
    let entries = match fs.kind(TXN_DIR) {
        Ok(Some(EntryKind::Dir)) => match fs.list_dir(TXN_DIR) {
            Ok(entries) => entries,
            Err(e) => {
                done.foreign.push(Foreign {
                    path: TXN_DIR.into(),
                    reason: format!("cannot be listed: {e}"),
                });
                return Ok(done);
            }
        },
        Ok(None) => return Ok(done),
        Ok(Some(kind)) => {
            done.foreign.push(Foreign {
                path: TXN_DIR.into(),
                reason: format!("is a {kind:?}, not a folder the engine made"),
            });
            return Ok(done);
        }
        Err(e) => {
            done.foreign.push(Foreign {
                path: TXN_DIR.into(),
                reason: format!("cannot be read: {e}"),
            });
            return Ok(done);
        }
    };
    let mut examined = 0;
    for (name, kind) in entries {
        let dir = format!("{TXN_DIR}/{name}");
        if kind != EntryKind::Dir {
            done.foreign.push(Foreign {
                path: dir,
                reason: format!("a {kind:?}, not a transaction folder"),
            });
            continue;
        }
        if !is_transaction_name(&name) {
            done.foreign.push(Foreign {
                path: dir,
                reason: "not a name the engine gives a transaction".into(),
            });
            continue;
        }
        examined += 1;
        if examined > MAX_TRANSACTIONS {
            done.foreign.push(Foreign {
                path: dir,
                reason: format!("not examined: more than {MAX_TRANSACTIONS} transaction folders"),
            });
            continue;
        }
        match prove(fs, &name) {
            Ok(Proven::Interrupted(intent)) => {
                let renaming = fs.kind(&marker_path(&dir))?.is_some();
                let undone = undo(fs, &intent, renaming)?;
                done.interrupted += 1;
                done.rolled_back += undone.rolled_back;
                done.temps_removed += undone.temps_removed;
                discard(fs, &dir)?;
            }
            Ok(Proven::Finished { recorded: true }) => {
                // Only its `committed` record is left (the clean-up ran or
                // runs now): the store's evidence that the commit happened.
                keep_record_only(fs, &dir)?;
                done.kept_for_store += 1;
            }
            Ok(Proven::Finished { recorded: false }) => {
                done.leftovers += 1;
                discard(fs, &dir)?;
            }
            // A folder the committer made and died before writing its
            // record into: empty, so removing it cannot lose anything.
            Err(_)
                if fs.list_dir(&dir).is_ok_and(|e| e.is_empty()) && fs.remove_dir(&dir).is_ok() =>
            {
                done.leftovers += 1;
            }
            // What a power cut left of a commit that needs nothing undone
            // (its intent torn, or its record already removed).
            Err(_) if is_remains(fs, &name, &dir) && discard(fs, &dir).is_ok() => {
                done.leftovers += 1;
            }
            Err(reason) => done.foreign.push(Foreign { path: dir, reason }),
        }
    }
    // No empty folder left behind (a commit killed right after making it
    // leaves one); removing an empty folder cannot lose anything.
    if fs.remove_dir(TXN_DIR).is_ok() {
        let _ = fs.remove_dir(PRIVATE_DIR);
    }
    Ok(done)
}

/// True when the transaction folder `dir` (named `name`) is what a power
/// cut left of a commit with nothing to undo (docs/clarifications.md,
/// C-commit-power-loss). Its name must be one this engine gave under this
/// user's key ([`crate::seal::Seal::is_tagged_name`]), and it must hold
/// files only, either
/// - `intent` alone, not a whole JSON record (empty or torn): the cut came
///   before the record's fsync returned, and the committer does nothing
///   else before it; or
/// - no record, only `pre-<i>` links and the `renaming` marker: the record
///   is removed only after the commit point or after an undo made durable
///   ([`undo`] fsyncs every folder it renamed out of and into), so these
///   are a clean-up's remains, cut short.
///
/// A whole record that does not verify, or any other name, stays foreign.
fn is_remains(fs: &dyn Fs, name: &str, dir: &str) -> bool {
    if !fs.seal().is_some_and(|seal| seal.is_tagged_name(name)) {
        return false;
    }
    let Ok(entries) = fs.list_dir(dir) else {
        return false;
    };
    if entries.iter().any(|(_, kind)| *kind != EntryKind::File) {
        return false;
    }
    if entries.len() == 1 && entries[0].0 == "intent" {
        return fs
            .read_at_most(&intent_path(dir), MAX_INTENT_BYTES)
            .is_ok_and(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).is_err());
    }
    let is_pre = |n: &str| {
        n.strip_prefix("pre-")
            .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
    };
    entries.iter().all(|(n, _)| n == "renaming" || is_pre(n))
}

/// The most entries [`discard_foreign`] removes from one foreign folder.
pub const MAX_DISCARDED_ENTRIES: usize = 1 << 20;

/// Remove what [`recover`] reported as foreign (`patchspec recover
/// --discard`): the folder and everything in it, symlinks removed and never
/// followed; a non-folder entry of `.patchspec/txn`, or `.patchspec/txn` or
/// `.patchspec` itself when it is not a folder (a symlink is removed, not
/// what it points at). Returns how many entries were removed.
pub fn discard_foreign(fs: &dyn Fs, foreign: &Foreign) -> io::Result<usize> {
    let mut removed = 0;
    match fs.kind(&foreign.path)? {
        None => Ok(0),
        Some(EntryKind::Dir) if foreign.path != TXN_DIR && foreign.path != PRIVATE_DIR => {
            remove_tree(fs, &foreign.path, &mut removed)?;
            Ok(removed)
        }
        Some(EntryKind::Dir) => Ok(0),
        Some(_) => {
            fs.remove_file(&foreign.path)?;
            Ok(1)
        }
    }
}

fn remove_tree(fs: &dyn Fs, dir: &str, removed: &mut usize) -> io::Result<()> {
    for (name, kind) in fs.list_dir(dir)? {
        if *removed >= MAX_DISCARDED_ENTRIES {
            return Err(io::Error::other(format!(
                "{dir}: more than {MAX_DISCARDED_ENTRIES} entries; remove it by hand"
            )));
        }
        let path = format!("{dir}/{name}");
        if kind == EntryKind::Dir {
            remove_tree(fs, &path, removed)?;
        } else {
            fs.remove_file(&path)?;
            *removed += 1;
        }
    }
    fs.remove_dir(dir)?;
    *removed += 1;
    Ok(())
}

/// The workspace folders (`""` left out) above the paths a commit changes
/// that hold a journal folder of a nested workspace, outermost first: each
/// is the root of a nested workspace whose interrupted commit, rolled back
/// later, could undo this commit. Costs one `lstat` per distinct folder.
pub fn nested_roots<'p>(
    fs: &dyn Fs,
    paths: impl IntoIterator<Item = &'p str>,
) -> io::Result<Vec<String>> {
    let mut folders: Vec<&str> = Vec::new();
    for path in paths {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            folders.push(&path[..end]);
            end += 1;
        }
    }
    folders.sort_unstable();
    folders.dedup();
    let mut roots = Vec::new();
    for folder in folders {
        if fs.kind(&format!("{folder}/{TXN_DIR}"))? == Some(EntryKind::Dir) {
            roots.push(folder.to_string());
        }
    }
    Ok(roots)
}

/// Before a commit changes `paths`: roll back the proven interrupted
/// commits of every nested workspace above them ([`nested_roots`]), through
/// a [`crate::fs::Subtree`] view. The caller holds this workspace's writer
/// lock, which a nested writer must share first ([`crate::workspace`]), so
/// those commits' writers are dead. Returns the nested roots whose commit
/// was rolled back (the caller planned against their half-done files, so
/// it must not commit that plan) and what is foreign there (left alone).
pub fn recover_nested<'p>(
    fs: &dyn Fs,
    paths: impl IntoIterator<Item = &'p str>,
) -> io::Result<(Vec<String>, Vec<Foreign>)> {
    let mut rolled_back = Vec::new();
    let mut foreign = Vec::new();
    for nested in nested_roots(fs, paths)? {
        let view = crate::fs::Subtree::new(fs, &nested);
        let done = recover(&view).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot recover the interrupted commit of the nested workspace {nested}: {e}"
                ),
            )
        })?;
        if done.interrupted > 0 {
            rolled_back.push(nested.clone());
        }
        foreign.extend(done.foreign.into_iter().map(|f| Foreign {
            path: format!("{nested}/{}", f.path),
            reason: f.reason,
        }));
    }
    Ok((rolled_back, foreign))
}

/// Write the intent record durably: create the transaction folder (and the
/// folders above it), seal the record to it ([`crate::seal`]; unsealed when
/// the workspace has no key), write `intent` (fsync'd), fsync its folder and
/// the parent of every folder created. The folders it created are pushed
/// on `created`, outermost first, even when it fails (a failed commit
/// removes those, and only those).
pub fn write_intent(fs: &dyn Fs, intent: &Intent, created: &mut Vec<String>) -> io::Result<()> {
    let dir = intent.dir();
    ensure_dirs_into(fs, &dir, created)?;
    let mut sealed = intent.clone();
    sealed.seal = None;
    if let Some(seal) = fs.seal() {
        let folder = fs.identity(&dir)?;
        let plain = sealed.unsealed_bytes()?;
        sealed.seal = Some(seal.tag(&intent.transaction, folder, &plain));
    }
    let bytes = serde_json::to_vec(&sealed).map_err(io::Error::other)?;
    fs.write_new(&intent_path(&dir), &bytes, None)?;
    fs.sync_dir(&dir)?;
    for created_dir in created.iter() {
        fs.sync_dir(parent_of(created_dir))?;
    }
    Ok(())
}

/// Write the marker that says renaming may have begun, durably (with the
/// pre-images beside it).
pub fn mark_renaming(fs: &dyn Fs, intent: &Intent) -> io::Result<()> {
    let dir = intent.dir();
    fs.write_new(&marker_path(&dir), b"", None)?;
    fs.sync_dir(&dir)
}

/// The commit point: rename the intent record to `committed`, then fsync
/// its folder. A failure of that fsync is returned: the caller cannot yet
/// know that the commit is durable (a power loss could bring the intent
/// back, and recovery would roll back), so it must not report it as done.
pub fn commit_point(fs: &dyn Fs, intent: &Intent) -> io::Result<()> {
    let dir = intent.dir();
    fs.rename(&intent_path(&dir), &committed_path(&dir))?;
    fs.sync_dir(&dir)
}

#[cfg(any(test, feature = "testing"))]
/// True when the operation at `index` of a commit's operation log (as
/// [`crate::fs::FaultFs::log`] records it) comes after a commit point: the
/// last intent record touched before it was renamed to `committed`, not
/// written. A fault there is a clean-up fault, which does not fail the
/// commit (the module doc of [`crate::commit`], phase 3); fault-injection
/// oracles use this to tell which faults must be reported.
pub fn after_commit_point(log: &[(crate::fs::FsOp, String)], index: usize) -> bool {
    use crate::fs::FsOp;
    let is_intent = |p: &str| p.starts_with(TXN_DIR) && p.ends_with("/intent");
    let last = log
        .iter()
        .take(index)
        .enumerate()
        .rev()
        .find_map(|(i, (op, p))| match op {
            FsOp::Rename if is_intent(p) => Some((i, true)),
            FsOp::WriteNew if is_intent(p) => Some((i, false)),
            _ => None,
        });
    // The fsync right after the rename is part of the commit point: a fault
    // there fails the commit.
    matches!(last, Some((i, true)) if index > i + 1)
}

/// Clean up a finished transaction folder whose commit a patch store
/// recorded as pending: everything but its `committed` record goes.
pub fn keep_record_only(fs: &dyn Fs, dir: &str) -> io::Result<()> {
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for (name, _) in entries.iter().filter(|(name, _)| name != "committed") {
        remove_if_present(fs, &format!("{dir}/{name}"))?;
    }
    Ok(())
}

/// True when the folder of transaction `name` is certainly not there: a
/// commit that never began, or one whose rollback finished. False when it
/// is there and when it cannot be read: what cannot be read is not known
/// to be gone.
pub fn absent(fs: &dyn Fs, name: &str) -> bool {
    matches!(fs.kind(&format!("{TXN_DIR}/{name}")), Ok(None))
}

/// Remove the folder of a finished transaction once its store has the
/// call's outcome (it was kept for it): only a proven, finished one.
pub fn forget(fs: &dyn Fs, transaction: &str) -> io::Result<()> {
    match prove(fs, transaction) {
        Ok(Proven::Finished { .. }) => {
            discard(fs, &format!("{TXN_DIR}/{transaction}"))?;
            let _ = fs.remove_dir(TXN_DIR);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Remove a transaction folder of this engine's: everything in it, the
/// record last.
pub fn discard(fs: &dyn Fs, dir: &str) -> io::Result<()> {
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let is_record = |name: &str| name == "intent" || name == "committed";
    for (name, _) in entries.iter().filter(|(name, _)| !is_record(name)) {
        remove_if_present(fs, &format!("{dir}/{name}"))?;
    }
    for (name, _) in entries.iter().filter(|(name, _)| is_record(name)) {
        remove_if_present(fs, &format!("{dir}/{name}"))?;
    }
    match fs.remove_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What [`undo`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Undone {
    /// Files put back, and created directories removed.
    pub rolled_back: usize,
    /// Temp files removed.
    pub temps_removed: usize,
}

/// Put back the pre-state of `intent`'s changes, in reverse plan order
/// (`renaming`: whether renames may have begun), then fsync the folders it
/// changed (a failure is returned, so the caller keeps the intent) and
/// remove the trash folders the transaction made.
/// The intent record itself is left for the caller to discard.
pub fn undo(fs: &dyn Fs, intent: &Intent, renaming: bool) -> io::Result<Undone> {
    let mut done = Undone::default();
    let mut first_error: Option<io::Error> = None;
    for step in intent.steps.iter().rev() {
        if let Err(e) = undo_step(fs, step, renaming, &mut done) {
            first_error.get_or_insert(e);
        }
    }
    // Every folder it renamed into and out of: a rename between two folders
    // is durable once both are fsync'd (C-commit-power-loss), and the
    // intent is removed after this, so a cut must not keep that removal
    // and lose a pre-image's or a trashed file's way back.
    let own = intent.dir();
    let mut dirs: Vec<&str> = intent.steps.iter().map(|s| parent_of(s.path())).collect();
    for step in &intent.steps {
        match step {
            Step::Update { .. } => dirs.push(&own),
            Step::Delete { trash, .. } => dirs.push(parent_of(trash)),
            Step::Create { .. } | Step::CreateDir { .. } => {}
        }
    }
    dirs.sort_unstable();
    dirs.dedup();
    // A failed fsync is an error like a failed rename: the caller then keeps
    // the intent, so the undo is run again, rather than discarding the only
    // record of a rollback that a power loss could still lose. A folder the
    // undo itself removed (a created one) is not there to sync.
    for dir in dirs {
        if let Err(e) = sync_if_present(fs, dir) {
            first_error.get_or_insert(e);
        }
    }
    // Trash folders this transaction made, deepest first; one that is not
    // empty (or already gone) is left as it is.
    let trash_root = format!("{TRASH_DIR}/{}", intent.transaction);
    let mut trash_dirs: Vec<String> = Vec::new();
    for step in &intent.steps {
        if let Step::Delete { trash, .. } = step {
            let mut dir = parent_of(trash);
            while dir.len() >= trash_root.len() {
                trash_dirs.push(dir.to_string());
                dir = parent_of(dir);
            }
        }
    }
    trash_dirs.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    trash_dirs.dedup();
    // Each one's emptying made durable before its removal, and the last
    // removal before the intent goes: a cut then leaves no empty trash
    // folder that no journal names.
    let mut removed_any = false;
    for dir in trash_dirs {
        if sync_if_present(fs, &dir).is_ok() && fs.remove_dir(&dir).is_ok() {
            removed_any = true;
        }
    }
    if removed_any {
        if let Err(e) = sync_if_present(fs, TRASH_DIR) {
            first_error.get_or_insert(e);
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

fn undo_step(fs: &dyn Fs, step: &Step, renaming: bool, done: &mut Undone) -> io::Result<()> {
    match step {
        Step::Update { path, temp, pre } => {
            if fs.kind(temp)?.is_some() {
                fs.remove_file(temp)?;
                done.temps_removed += 1;
            } else if renaming && fs.kind(pre)?.is_some() {
                // Renaming a hard link over another name of the same file
                // does nothing, so this is right even if the rename of the
                // temp never reached the disk.
                fs.rename(pre, path)?;
                done.rolled_back += 1;
            }
            remove_if_present(fs, pre)
        }
        Step::Create { path, temp } => {
            if fs.kind(temp)?.is_some() {
                fs.remove_file(temp)?;
                done.temps_removed += 1;
            } else if renaming && fs.kind(path)?.is_some() {
                fs.remove_file(path)?;
                done.rolled_back += 1;
            }
            Ok(())
        }
        Step::Delete { path, trash } => {
            if fs.kind(trash)?.is_some() {
                fs.rename(trash, path)?;
                done.rolled_back += 1;
            }
            Ok(())
        }
        // The removals inside it made durable first: its own removal
        // cannot reach the disk without them (C-commit-power-loss), and the
        // intent goes once the undo returns.
        Step::CreateDir { path } => {
            match sync_if_present(fs, path).and_then(|()| fs.remove_dir(path)) {
                Ok(()) => {
                    done.rolled_back += 1;
                    Ok(())
                }
                Err(e) => match fs.kind(path)? {
                    // Never made (the commit stopped before it), or gone already.
                    None => Ok(()),
                    // Not empty: it holds what this transaction did not put
                    // there (its own files were undone first), so it stays.
                    Some(EntryKind::Dir) if not_empty(&e) => Ok(()),
                    Some(_) => Err(e),
                },
            }
        }
    }
}

/// fsync the folder `dir`; one that is not there (removed by the undo,
/// never made, or unreachable because a file stands where a folder above
/// it would be: the step that needed it failed) has nothing to make
/// durable.
fn sync_if_present(fs: &dyn Fs, dir: &str) -> io::Result<()> {
    match fs.sync_dir(dir) {
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// True when removing a directory failed because it has entries.
fn not_empty(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST))
}

fn remove_if_present(fs: &dyn Fs, path: &str) -> io::Result<()> {
    match fs.remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => match fs.kind(path) {
            Ok(None) => Ok(()),
            _ => Err(e),
        },
        Ok(()) => Ok(()),
    }
}

/// Create `dir` and its missing parents; the folders created, outermost first.
pub fn ensure_dirs(fs: &dyn Fs, dir: &str) -> io::Result<Vec<String>> {
    let mut created = Vec::new();
    ensure_dirs_into(fs, dir, &mut created)?;
    Ok(created)
}

/// [`ensure_dirs`], pushing each folder on `created` as it is made (so the
/// caller knows them even when it fails).
pub fn ensure_dirs_into(fs: &dyn Fs, dir: &str, created: &mut Vec<String>) -> io::Result<()> {
    let mut prefix = String::new();
    for part in dir.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        match fs.kind(&prefix)? {
            Some(EntryKind::Dir) => {}
            None => match fs.create_dir(&prefix) {
                Ok(()) => created.push(prefix.clone()),
                // Another process made it in between: fine, it is a folder.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            },
            Some(_) => {
                return Err(io::Error::other(format!(
                    "{prefix} exists and is not a directory"
                )))
            }
        }
    }
    Ok(())
}

/// Remove the folders a failed commit created for its journal (`created`,
/// as [`write_intent`] returned them), innermost first, when empty: what a
/// failed commit made in a workspace that had none is taken away again, and
/// a folder that was there before (a user's, behind a symlink) stays.
pub fn remove_created_dirs(fs: &dyn Fs, created: &[String]) {
    for dir in created.iter().rev() {
        let _ = fs.remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FaultFs, FsOp, RealFs};

    /// What a power cut leaves of a commit with nothing to undo (a torn
    /// intent alone; pre-images and the marker without a record) is
    /// removed, but only in a folder whose name tag verifies and only when
    /// it holds nothing else: anything else stays foreign.
    #[test]
    fn the_remains_of_a_cut_commit_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        let seal = fs.seal().expect("a journal key for the tests").clone();
        let tagged = |base: &str| format!("{base}-{}", seal.name_tag(base));
        /// A folder's name, its files, and whether recovery removes it.
        type Case<'a> = (String, &'a [(&'a str, &'a [u8])], bool);
        let cases: [Case; 6] = [
            (tagged("1700000000000-00000001-0"), &[("intent", b"")], true),
            (
                tagged("1700000000000-00000002-0"),
                &[("intent", b"{\"version\":2,")],
                true,
            ),
            (
                tagged("1700000000000-00000003-0"),
                &[("pre-0", b"old"), ("pre-2", b"old"), ("renaming", b"")],
                true,
            ),
            // Not named by this engine under this key.
            (
                "1700000000000-00000004-0-0123456789abcdef".into(),
                &[("intent", b"")],
                false,
            ),
            // Something else beside the remains.
            (
                tagged("1700000000000-00000005-0"),
                &[("pre-0", b"old"), ("notes", b"x")],
                false,
            ),
            // A whole record that does not verify.
            (
                tagged("1700000000000-00000006-0"),
                &[("intent", b"{}")],
                false,
            ),
        ];
        for (name, files, _) in &cases {
            let folder = dir.path().join(TXN_DIR).join(name);
            std::fs::create_dir_all(&folder).unwrap();
            for (file, bytes) in files.iter() {
                std::fs::write(folder.join(file), bytes).unwrap();
            }
        }
        let done = recover(&fs).unwrap();
        for (name, _, removed) in &cases {
            let there = dir.path().join(TXN_DIR).join(name).exists();
            assert_eq!(there, !removed, "{name}");
            let foreign = done.foreign.iter().any(|f| f.path.ends_with(name.as_str()));
            assert_eq!(foreign, !removed, "{name}: {:?}", done.foreign);
        }
        assert_eq!(done.leftovers, 3);
    }

    /// A failed fsync during an undo is returned, so that the caller keeps
    /// the intent (and the undo runs again) instead of discarding it.
    #[test]
    fn an_undo_whose_fsync_fails_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt.tmp"), b"staged").unwrap();
        let real = RealFs::open(dir.path()).unwrap();
        let intent = Intent::new(
            "t",
            vec![Step::Create {
                path: "a.txt".into(),
                temp: "a.txt.tmp".into(),
            }],
        );
        let failing = FaultFs::new(&real, |op| op == FsOp::SyncDir, Some(0));
        assert!(undo(&failing, &intent, false).is_err());
        assert!(
            !dir.path().join("a.txt.tmp").exists(),
            "the temp is still removed"
        );
        assert_eq!(
            undo(&real, &intent, false).map(|d| d.temps_removed).ok(),
            Some(0)
        );
    }
}
