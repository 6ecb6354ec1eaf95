//! The patch store the reference executor records in (docs/protocol.md,
//! "The patch store"): the one `--store PATH` names, opened once at start
//! for the whole process (`call`, `exec` in every transport, `mcp`), or,
//! for a call whose session asks `keepStore` and no `--store` was given,
//! the workspace's own `.patchspec/store.db`, so that the steps of a
//! multi-step case share one store and no two cases do.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use patchspec_engine::store::PatchStore;
use patchspec_store::SqliteStore;

use crate::error::Error;

/// The process's `--store`, set once at start.
static CONFIGURED: OnceLock<Arc<SqliteStore>> = OnceLock::new();

/// The name of the store in a workspace's private folder.
pub const PRIVATE_STORE: &str = ".patchspec/store.db";

/// `--store PATH`: the store every call of this process records in.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct StoreArgs {
    /// Record every call of a writing tool in the SQLite store at PATH (created when
    /// missing; a file that is not a patchspec store is refused and left untouched), and
    /// answer `get_patch_change` from it.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

impl StoreArgs {
    /// Open the store, if one is named, for the rest of the process. A file
    /// that is not a store is a usage error (exit 2) before any call.
    pub fn open(&self) -> Result<(), Error> {
        let Some(path) = &self.store else {
            return Ok(());
        };
        let store = SqliteStore::open(path).map_err(|e| Error::usage(e.message))?;
        // A second open in one process keeps the first (tests, never the CLI).
        let _ = CONFIGURED.set(Arc::new(store));
        Ok(())
    }
}

/// The store a call records in: the process's `--store`, else (when the
/// call's session asks `keepStore`) the workspace's private one, else none.
pub fn for_call(root: &Path, keep_store: bool) -> Option<Arc<dyn PatchStore>> {
    if let Some(store) = CONFIGURED.get() {
        return Some(store.clone() as Arc<dyn PatchStore>);
    }
    if !keep_store {
        return None;
    }
    match private_store(root) {
        Ok(store) => Some(Arc::new(store)),
        Err(message) => {
            tracing::error!(
                target: patchspec_engine::events::TARGET,
                event = "Store.OpenFailed",
                reason = message.as_str()
            );
            None
        }
    }
}

fn private_store(root: &Path) -> Result<SqliteStore, String> {
    let folder = root.join(".patchspec");
    match std::fs::symlink_metadata(&folder) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "{} is not a directory (a symlink is not followed)",
                folder.display()
            ))
        }
        Err(_) => std::fs::create_dir(&folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?,
    }
    SqliteStore::open(&root.join(PRIVATE_STORE)).map_err(|e| e.message)
}
