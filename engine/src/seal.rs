//! The journal's proof of origin: an HMAC-SHA256 under a per-user key kept
//! outside every workspace, so the engine acts only on journals it wrote.
//!
//! A workspace is hostile (docs/security.md): a clone can carry any file,
//! `.patchspec/txn/<id>/intent` included, and crash recovery renames and
//! removes what an intent names. So every intent is sealed
//! ([`Seal::tag`]) over its bytes, the workspace's canonical path and the
//! identity (device, inode) of its transaction folder; recovery verifies
//! the seal before it reads a single step ([`crate::journal`]). A clone
//! cannot forge the tag without the key, and cannot replay a genuine one:
//! a checkout makes new folders, with new inodes.
//!
//! The key is 32 bytes from the OS's random source, made once per user at
//! the first place that works of: `$PATCHSPEC_STATE_DIR/journal.key`,
//! `$XDG_STATE_HOME/patchspec/journal.key`,
//! `$HOME/.local/state/patchspec/journal.key`, and
//! `<temp dir>/patchspec-<uid>/journal.key`. The folder must be owned by
//! this user and writable by no one else, the file owned by this user and
//! readable by no one else (0600), exactly 32 bytes; a key inside the
//! workspace being opened is refused (a clone of a dotfiles repository must
//! not bring its own key). Without a key, commits still run, but their
//! journals carry no seal and an interrupted one is never rolled back
//! automatically (`patchspec recover` shows it).
//!
//! Cost: the key is read (or made) once per process; a seal is one HMAC over
//! the intent (a few hundred bytes per planned change).

use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The key's length in bytes.
const KEY_LEN: usize = 32;
/// The key file's name in its folder.
const KEY_FILE: &str = "journal.key";
/// What a tag is computed over first: the format, so a tag of one use can
/// never stand for another.
const DOMAIN: &[u8] = b"patchspec journal seal v1\0";

/// The key and where it lies, or why there is none.
type LoadedKey = Result<(Arc<[u8; KEY_LEN]>, PathBuf), String>;

/// The per-user key, once loaded or made: `Err` says why there is none.
fn process_key() -> &'static LoadedKey {
    static KEY: OnceLock<LoadedKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut why = Vec::new();
        for dir in key_dirs() {
            match load_or_make(&dir) {
                Ok(key) => return Ok((Arc::new(key), dir.join(KEY_FILE))),
                Err(e) => why.push(format!("{}: {e}", dir.display())),
            }
        }
        Err(if why.is_empty() {
            "no folder for the journal key (set PATCHSPEC_STATE_DIR or HOME)".to_string()
        } else {
            why.join("; ")
        })
    })
}

/// Where the key may live, in order of preference.
fn key_dirs() -> Vec<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let mut dirs = Vec::new();
    if let Some(dir) = var("PATCHSPEC_STATE_DIR") {
        dirs.push(dir);
    }
    if let Some(dir) = var("XDG_STATE_HOME") {
        dirs.push(dir.join("patchspec"));
    }
    if let Some(home) = var("HOME") {
        dirs.push(home.join(".local/state/patchspec"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    dirs.push(std::env::temp_dir().join(format!("patchspec-{uid}")));
    dirs
}

/// Read the key in `dir`, or make it (racing processes agree: the key is
/// written aside and linked into place, so exactly one wins).
fn load_or_make(dir: &Path) -> io::Result<[u8; KEY_LEN]> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(io::Error::other(
            "not a folder of this user's that only this user can write",
        ));
    }
    let path = dir.join(KEY_FILE);
    match read_key(&path, uid) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        other => return other,
    }
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| io::Error::other(e.to_string()))?;
    let aside = dir.join(format!("{KEY_FILE}.{:016x}.new", fastrand::u64(..)));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&aside)?;
        file.write_all(&key)?;
        file.sync_all()?;
        match std::fs::hard_link(&aside, &path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            other => other.map(|()| true),
        }
    })();
    let _ = std::fs::remove_file(&aside);
    if !written? {
        // Another process made it first: use that one.
        return read_key(&path, uid);
    }
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(key)
}

/// The key at `path`, checked: a regular file (not followed through a
/// symlink), this user's, private, exactly [`KEY_LEN`] bytes.
fn read_key(path: &Path, uid: u32) -> io::Result<[u8; KEY_LEN]> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private file of this user's",
            path.display()
        )));
    }
    let mut key = [0u8; KEY_LEN];
    file.read_exact(&mut key)?;
    let mut extra = [0u8; 1];
    if file.read(&mut extra)? != 0 {
        return Err(io::Error::other(format!(
            "{} is longer than a key",
            path.display()
        )));
    }
    Ok(key)
}

/// What a name tag is computed over first ([`Seal::name_tag`]).
const NAME_DOMAIN: &[u8] = b"patchspec transaction name v1\0";

/// The sealing context of one workspace: the key and the workspace's
/// canonical path.
#[derive(Clone)]
pub struct Seal {
    key: Arc<[u8; KEY_LEN]>,
    root: String,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Seal").field("root", &self.root).finish()
    }
}

impl Seal {
    /// The seal of the workspace at `root`: `Err` (why) when there is no
    /// usable key, or when the key lies inside this workspace.
    pub fn for_root(root: &Path) -> Result<Seal, String> {
        let (key, key_path) = process_key().as_ref().map_err(Clone::clone)?;
        let root = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let key_path = std::fs::canonicalize(key_path).unwrap_or_else(|_| key_path.clone());
        if key_path.starts_with(&root) {
            return Err(format!(
                "the journal key {} lies inside the workspace",
                key_path.display()
            ));
        }
        Ok(Seal {
            key: Arc::clone(key),
            root: root.to_string_lossy().into_owned(),
        })
    }

    /// A seal with a given key and root, for tests.
    #[cfg(test)]
    fn with_key(key: [u8; KEY_LEN], root: &str) -> Seal {
        Seal {
            key: Arc::new(key),
            root: root.to_string(),
        }
    }

    /// The seal of the workspace nested at `rel` (a `/`-separated path
    /// below this one's root): the same key, that workspace's path.
    pub fn nested(&self, rel: &str) -> Seal {
        Seal {
            key: Arc::clone(&self.key),
            root: format!("{}/{rel}", self.root.trim_end_matches('/')),
        }
    }

    /// The workspace's canonical path, as sealed.
    pub fn root(&self) -> &str {
        &self.root
    }

    fn mac(&self, scope: &str, folder: Option<(u64, u64)>, bytes: &[u8]) -> Hmac<Sha256> {
        // HMAC pads a key shorter than SHA-256's 64-byte block with zeros;
        // padding it here makes the key a block, which `KeyInit::new`
        // takes without a fallible length check.
        let mut block = [0u8; 64];
        block[..KEY_LEN].copy_from_slice(&self.key[..]);
        let mut mac = <Hmac<Sha256> as KeyInit>::new(&block.into());
        let (dev, ino) = folder.unwrap_or((0, 0));
        for part in [
            DOMAIN,
            self.root.as_bytes(),
            b"\0",
            scope.as_bytes(),
            b"\0",
            &dev.to_le_bytes(),
            &ino.to_le_bytes(),
            &(bytes.len() as u64).to_le_bytes(),
            bytes,
        ] {
            mac.update(part);
        }
        mac
    }

    /// The tag (lowercase hex) of `bytes`, written for `scope` (the
    /// transaction) in the folder whose identity is `folder`.
    pub fn tag(&self, scope: &str, folder: Option<(u64, u64)>, bytes: &[u8]) -> String {
        crate::hash::to_hex(&self.mac(scope, folder, bytes).finalize().into_bytes())
    }

    /// A short tag (16 hex digits) of a transaction's name, bound to the key
    /// only: the trash keeps its folders under these names, and prunes only
    /// the ones it can verify ([`crate::trash`]). Not bound to the
    /// workspace's path, so a workspace that is moved or renamed still
    /// prunes its own trash.
    pub fn name_tag(&self, name: &str) -> String {
        let mut block = [0u8; 64];
        block[..KEY_LEN].copy_from_slice(&self.key[..]);
        let mut mac = <Hmac<Sha256> as KeyInit>::new(&block.into());
        mac.update(NAME_DOMAIN);
        mac.update(name.as_bytes());
        let full = crate::hash::to_hex(&mac.finalize().into_bytes());
        full[..16].to_string()
    }

    /// True when `name` ends in `-<tag>`, the [`Seal::name_tag`] of what
    /// comes before it: a name this engine gave under this key.
    pub fn is_tagged_name(&self, name: &str) -> bool {
        name.rsplit_once('-')
            .is_some_and(|(base, tag)| tag.len() == 16 && self.name_tag(base) == tag)
    }

    /// True when `tag` is [`Seal::tag`] of the same inputs (compared in
    /// constant time).
    pub fn verify(&self, scope: &str, folder: Option<(u64, u64)>, bytes: &[u8], tag: &str) -> bool {
        let Some(raw) = from_hex(tag) else {
            return false;
        };
        self.mac(scope, folder, bytes).verify_slice(&raw).is_ok()
    }
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_verifies_only_with_its_own_key_root_scope_folder_and_bytes() {
        let seal = Seal::with_key([7; KEY_LEN], "/ws");
        let tag = seal.tag("t1", Some((1, 2)), b"intent");
        assert!(seal.verify("t1", Some((1, 2)), b"intent", &tag));
        assert!(!seal.verify("t1", Some((1, 2)), b"intent!", &tag));
        assert!(!seal.verify("t2", Some((1, 2)), b"intent", &tag));
        assert!(!seal.verify("t1", Some((1, 3)), b"intent", &tag));
        assert!(!seal.verify("t1", None, b"intent", &tag));
        assert!(!Seal::with_key([7; KEY_LEN], "/other").verify(
            "t1",
            Some((1, 2)),
            b"intent",
            &tag
        ));
        assert!(!Seal::with_key([8; KEY_LEN], "/ws").verify("t1", Some((1, 2)), b"intent", &tag));
        assert!(!seal.verify("t1", Some((1, 2)), b"intent", "zz"));
        assert!(!seal.verify("t1", Some((1, 2)), b"intent", &"g".repeat(64)));
        assert_eq!(seal.nested("sub").root(), "/ws/sub");
    }

    #[test]
    fn a_key_is_made_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("state");
        let made = load_or_make(&home).unwrap();
        let again = load_or_make(&home).unwrap();
        assert_eq!(made, again);
        let meta = std::fs::metadata(home.join(KEY_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_dir(&home).unwrap().count(),
            1,
            "nothing aside is left"
        );
    }

    #[test]
    fn a_key_others_can_read_or_that_is_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("state");
        load_or_make(&home).unwrap();
        let key = home.join(KEY_FILE);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_or_make(&home).is_err());
        std::fs::remove_file(&key).unwrap();
        std::fs::write(dir.path().join("planted"), [0u8; KEY_LEN]).unwrap();
        std::os::unix::fs::symlink(dir.path().join("planted"), &key).unwrap();
        assert!(load_or_make(&home).is_err());
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(load_or_make(&open).is_err(), "a folder others can write");
    }

    #[test]
    fn a_key_inside_the_workspace_is_refused() {
        if let Ok((_, key_path)) = process_key() {
            let folder = key_path.parent().unwrap();
            assert!(Seal::for_root(folder).is_err());
            if let Some(above) = folder.parent() {
                assert!(Seal::for_root(above).is_err());
            }
        }
    }
}
