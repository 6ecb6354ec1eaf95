//! patchspec-store: the engine's [`PatchStore`] on an embedded SQLite file — every writing tool call recorded, `workspace_write_patch` batches read back by ID.
//!
//! One file holds everything (with SQLite's `-wal` and `-shm` beside it).
//! [`SqliteStore::open`] refuses, without writing a byte, a file that is
//! not an SQLite database, an SQLite database of another application, or
//! a store of a newer schema; it creates a missing or empty file and
//! brings an older schema up to date ([`MIGRATIONS`], counted by `PRAGMA
//! user_version`, marked as ours by `PRAGMA application_id`).
//!
//! What is stored (schema in [`MIGRATIONS`]): one `calls` row per call of a
//! writing tool (tool, call id, time, duration, success, the result
//! document); for `workspace_write_patch` the batch (by its canonical ID)
//! and its file patches in their own tables, each file patch's changes one
//! JSON array in its row (schema 2: one insert per file, not per change),
//! appended in rowid order and found through their batch, so recording a
//! batch costs O(its bytes) whatever the store's size. Each call
//! is one `BEGIN IMMEDIATE` transaction; the journal is WAL with
//! `synchronous = NORMAL` (a committed call survives a crash of the
//! process; the last ones may be lost on a power cut) and a busy timeout,
//! so several processes can share one store. The WAL checkpoint runs on a
//! thread of the store's own ([`CHECKPOINT_AFTER_BYTES`]), not in the call
//! that happens to pass SQLite's threshold. Nothing is ever deleted
//! (docs/clarifications.md C-store-retention).
//!
//! Reading never panics on what the file holds: a row of the wrong type, a
//! malformed JSON array or an impossible value is a [`StoreError`] (the
//! proptest in `tests/corrupt.rs` writes such rows).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use patchspec_engine::store::{
    PatchStore, Pending, PendingCommit, RecordedCall, StoreError, StoredBatch, StoredChange,
    StoredFilePatch,
};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;

/// `PRAGMA application_id` of a patchspec store: "PSTR".
pub const APPLICATION_ID: i32 = 0x5053_5452;

/// How long a write waits for another process's transaction to end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The schema, one migration per version: `MIGRATIONS[i]` takes a store
/// from `user_version` i to i + 1. Append only.
pub const MIGRATIONS: &[&str] = &["
CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    success INTEGER NOT NULL,
    -- the params as sent; for a workspace_write_patch batch that passed
    -- validation NULL (the batch tables hold the request)
    params TEXT,
    -- the result document; for a workspace_write_patch batch that passed
    -- validation its `errors` only (the batch tables hold the rest)
    result TEXT NOT NULL
);
-- Rows are appended in rowid order and found through their batch: the one
-- random-keyed index is batches.batch_id, one entry per call. File patch
-- and change IDs are looked up inside their batch (get_patch_change always
-- names it), so a 1,000-change batch dirties a few pages, not 1,000.
CREATE TABLE batches (
    id INTEGER PRIMARY KEY,
    batch_id TEXT NOT NULL UNIQUE,
    call INTEGER NOT NULL REFERENCES calls(id),
    batch_key TEXT,
    batch_label TEXT,
    applied INTEGER NOT NULL
);
CREATE TABLE file_patches (
    id INTEGER PRIMARY KEY,
    batch INTEGER NOT NULL REFERENCES batches(id),
    file_index INTEGER NOT NULL,
    file_patch_id TEXT NOT NULL,
    file_key TEXT,
    file_label TEXT,
    doc_path TEXT NOT NULL,
    path TEXT,
    original_sha256 TEXT NOT NULL,
    new_sha256 TEXT,
    applied INTEGER NOT NULL,
    error_code TEXT,
    error_message TEXT,
    skipped_because TEXT
);
CREATE INDEX file_patches_by_batch ON file_patches(batch, file_index);
CREATE TABLE changes (
    id INTEGER PRIMARY KEY,
    file_patch INTEGER NOT NULL REFERENCES file_patches(id),
    change_index INTEGER NOT NULL,
    change_id TEXT NOT NULL,
    change_key TEXT,
    operation TEXT NOT NULL,
    description TEXT,
    -- line numbers are u64 stored bit for bit in SQLite's i64
    after_line INTEGER,
    start_line INTEGER,
    end_line INTEGER,
    -- JSON arrays of strings
    expected_original_lines TEXT,
    new_lines TEXT
);
CREATE INDEX changes_by_file_patch ON changes(file_patch, change_index);
", "
-- 2: a file patch's changes as one JSON array in its own row (the change
-- objects of the result document, verbatim), not a row per change: a
-- 1,000-change batch is then a few inserts, not a thousand (issue 20's
-- budget). Stored changes move over; a line above i64::MAX (kept bit for
-- bit in version 1) becomes its u64 again, and lines that are not valid
-- JSON stay as text, so that such a row is an error when read, not here.
ALTER TABLE file_patches ADD COLUMN changes TEXT NOT NULL DEFAULT '[]';
UPDATE file_patches SET changes = (
    SELECT json_group_array(json_object(
        'changeId', change_id,
        'changeKey', change_key,
        'operation', operation,
        'description', description,
        'afterLine', CASE WHEN after_line < 0 THEN json(printf('%llu', after_line)) ELSE after_line END,
        'startLine', CASE WHEN start_line < 0 THEN json(printf('%llu', start_line)) ELSE start_line END,
        'endLine', CASE WHEN end_line < 0 THEN json(printf('%llu', end_line)) ELSE end_line END,
        'expectedOriginalLines', CASE WHEN json_valid(expected_original_lines)
            THEN json(expected_original_lines) ELSE expected_original_lines END,
        'newLines', CASE WHEN json_valid(new_lines) THEN json(new_lines) ELSE new_lines END))
    FROM (SELECT * FROM changes WHERE changes.file_patch = file_patches.id ORDER BY change_index));
DROP TABLE changes;
", "
-- 3: a commit is begun here before its first visible change, and the row
-- goes when its call is recorded (in the same transaction). A row left by a
-- call that died is settled from the workspace's journal by the next
-- writing call there (docs/clarifications.md, C-store-what).
CREATE TABLE pending_commits (
    transaction_id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    tool TEXT NOT NULL,
    call_id TEXT NOT NULL,
    begun_at_ms INTEGER NOT NULL
);
CREATE INDEX pending_commits_by_workspace ON pending_commits(workspace);
"];

/// The schema version this build writes.
pub fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// How far the WAL may grow past its last checkpoint before it is
/// checkpointed again: SQLite's own default (1,000 pages of 4 KiB).
pub const CHECKPOINT_AFTER_BYTES: u64 = 4 * 1024 * 1024;

/// The SQLite store. One connection, used by one call at a time (calls of
/// one process are serialized here; other processes by SQLite's locks).
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    connection: Mutex<Connection>,
    checkpointer: Option<Checkpointer>,
}

/// The WAL checkpoint, run on a thread of its own so that no call waits
/// for it: copying a few megabytes into the database and fsyncing it took
/// 45 ms every ~20 large batches, a third of what recording cost a call.
/// A call that finds the WAL past [`CHECKPOINT_AFTER_BYTES`] nudges the
/// thread; opening a store catches up on a WAL that processes which exited
/// left past it, so the WAL stays bounded whoever writes.
#[derive(Debug)]
struct Checkpointer {
    nudge: Option<std::sync::mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// The thread, with a connection of its own; `None` when either cannot
    /// be had (the store then keeps SQLite's checkpoint in the call).
    fn start(path: &Path) -> Option<Checkpointer> {
        let connection = Connection::open(path).ok()?;
        connection.busy_timeout(BUSY_TIMEOUT).ok()?;
        let (nudge, nudged) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("patchspec-store-checkpoint".into())
            .spawn(move || {
                while nudged.recv().is_ok() {
                    // PASSIVE: never waits for a reader or a writer; what it
                    // could not copy now, the next nudge copies.
                    let _ = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .ok()?;
        Some(Checkpointer {
            nudge: Some(nudge),
            thread: Some(thread),
        })
    }

    fn nudge(&self) {
        if let Some(nudge) = &self.nudge {
            // Full: a checkpoint is already asked for.
            let _ = nudge.try_send(());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // The thread ends when its channel closes; wait for a checkpoint
        // under way rather than cut it (it would be safe, only wasted).
        self.nudge = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The size of the store's WAL file (0 when there is none).
fn wal_bytes(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

fn fail(path: &Path, what: impl std::fmt::Display) -> StoreError {
    StoreError {
        message: format!("store {}: {what}", path.display()),
    }
}

/// Why one attempt to open a store failed: busy (another connection holds
/// a lock it would not wait for; retried) or for good.
enum Opening {
    Busy(StoreError),
    Failed(StoreError),
}

impl Opening {
    fn of(path: &Path, e: rusqlite::Error) -> Opening {
        let busy = is_busy(&e);
        let e = fail(path, e);
        if busy {
            Opening::Busy(e)
        } else {
            Opening::Failed(e)
        }
    }
}

/// Why an existing file cannot be used as a store, for people: a file or
/// folder it may not write (a store writes the file and its `-wal` and
/// `-shm` beside it) is not a corrupt store.
fn unusable(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(
            rusqlite::ErrorCode::ReadOnly
            | rusqlite::ErrorCode::CannotOpen
            | rusqlite::ErrorCode::PermissionDenied,
        ) => format!(
            "cannot be written here ({e}): a store needs to write the file and its -wal and -shm \
             files beside it, so its folder must be writable; it was left untouched"
        ),
        _ => format!("not a usable patchspec store ({e}); it was left untouched"),
    }
}

/// SQLite's "busy" or "locked": another connection holds a lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl From<StoreError> for Opening {
    fn from(e: StoreError) -> Opening {
        Opening::Failed(e)
    }
}

/// What an existing file at the store's path is.
fn check_header(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(fail(path, e)),
    };
    if !metadata.is_file() {
        return Err(fail(path, "not a regular file"));
    }
    let mut header = Vec::with_capacity(16);
    std::fs::File::open(path)
        .and_then(|f| f.take(16).read_to_end(&mut header))
        .map_err(|e| fail(path, e))?;
    if !header.is_empty() && header != b"SQLite format 3\0" {
        return Err(fail(
            path,
            "not a patchspec store (not an SQLite database); it was left untouched",
        ));
    }
    Ok(())
}

impl SqliteStore {
    /// Open the store at `path`, creating it when the file is missing or
    /// empty; refuse anything else that is not a patchspec store of this
    /// schema or an older one, leaving it untouched.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        // Several processes may open (and create) one store at once. SQLite
        // waits for a lock inside a statement (the busy timeout), but some
        // steps of opening answer "locked" at once instead (switching a new
        // file to WAL while another connection reads it): those are retried
        // until the same timeout has passed.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::open_once(path) {
                Ok(store) => return Ok(store),
                Err(Opening::Busy(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(Opening::Busy(e) | Opening::Failed(e)) => return Err(e),
            }
        }
    }

    /// One attempt of [`SqliteStore::open`].
    fn open_once(path: &Path) -> Result<SqliteStore, Opening> {
        let sql = |e: rusqlite::Error| Opening::of(path, e);
        check_header(path)?;
        let connection = Connection::open(path).map_err(sql)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Read-only checks first: nothing is written to a file that fails them.
        let corrupt = |e: rusqlite::Error| {
            let busy = is_busy(&e);
            let e = fail(path, unusable(&e));
            if busy {
                Opening::Busy(e)
            } else {
                Opening::Failed(e)
            }
        };
        let identify = |c: &Connection| -> Result<(i32, i64, i64), rusqlite::Error> {
            let app: i32 = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
            let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let tables: i64 =
                c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            Ok((app, version, tables))
        };
        let check = |(app, version, tables): (i32, i64, i64)| -> Result<(), StoreError> {
            if app != APPLICATION_ID && (app != 0 || tables > 0 || version != 0) {
                return Err(fail(
                    path,
                    format!(
                        "an SQLite database of another application (application_id {app:#x}), \
                         not a patchspec store; it was left untouched"
                    ),
                ));
            }
            if version > schema_version() {
                return Err(fail(
                    path,
                    format!(
                        "written by a newer patchspec (schema {version}; this one knows up to {}); \
                         it was left untouched",
                        schema_version()
                    ),
                ));
            }
            Ok(())
        };
        // One read transaction for the three reads: read one by one, they
        // could straddle another process's first migration and see its
        // tables (or version) without its application_id yet, and refuse a
        // store that is being created (found by two_processes_write_one_store_at_once).
        let first = {
            let snapshot = connection.unchecked_transaction().map_err(corrupt)?;
            let identity = identify(&snapshot).map_err(corrupt)?;
            snapshot.rollback().map_err(corrupt)?;
            identity
        };
        check(first)?;
        connection
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .map_err(corrupt)?;
        connection
            .execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(corrupt)?;
        let mut connection = connection;
        // Migrate under the write lock; another process may have done it
        // meanwhile, so look again inside the transaction.
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let identity = identify(&tx).map_err(corrupt)?;
        check(identity)?;
        let version = identity.1;
        if version < schema_version() {
            for migration in &MIGRATIONS[version.max(0) as usize..] {
                tx.execute_batch(migration).map_err(sql)?;
            }
            tx.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {};",
                schema_version()
            ))
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        // The checkpoint moves to its own thread; the WAL is cut back to
        // its bound when it restarts after one (journal_size_limit).
        let checkpointer = Checkpointer::start(path);
        if checkpointer.is_some() {
            connection
                .execute_batch(&format!(
                    "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = {CHECKPOINT_AFTER_BYTES};"
                ))
                .map_err(sql)?;
            if wal_bytes(path) > CHECKPOINT_AFTER_BYTES {
                // Left by writers that exited before their checkpoint.
                let _ = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }
        }
        Ok(SqliteStore {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            checkpointer,
        })
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while the lock was held left no half-done transaction
        // behind (rusqlite rolls back on drop), so the connection is usable.
        self.connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many calls the store holds.
    pub fn call_count(&self) -> Result<u64, StoreError> {
        self.connection()
            .query_row("SELECT count(*) FROM calls", [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(|e| fail(&self.path, e))
    }
}

/// A JSON value as text, through serde_json's writer: `Value`'s `Display`
/// goes through `fmt::Write`, a third slower on a 1,000-change batch.
fn json_text(value: &Value) -> String {
    // Writing a `Value` into a `Vec` cannot fail (its keys are strings).
    serde_json::to_string(value).unwrap_or_default()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn insert_batch(
    tx: &rusqlite::Transaction<'_>,
    call: i64,
    batch: &StoredBatch,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO batches (batch_id, call, batch_key, batch_label, applied) VALUES (?, ?, ?, ?, ?)",
    )?
    .execute(params![
        batch.batch_id,
        call,
        batch.batch_key,
        batch.batch_label,
        batch.applied
    ])?;
    let batch_row = tx.last_insert_rowid();
    let mut file_insert = tx.prepare_cached(
        "INSERT INTO file_patches (file_patch_id, batch, file_index, file_key, file_label, \
         doc_path, path, original_sha256, new_sha256, applied, error_code, error_message, \
         skipped_because, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )?;
    for (i, file) in batch.files.iter().enumerate() {
        file_insert.execute(params![
            file.file_patch_id,
            batch_row,
            i as i64,
            file.file_key,
            file.file_label,
            file.doc_path,
            file.path,
            file.original_sha256,
            file.new_sha256,
            file.applied,
            file.error_code,
            file.error_message,
            file.skipped_because,
            // The changes as one JSON text, in the members of a
            // StoredChange (docs/tools.md).
            serde_json::to_string(&file.changes).unwrap_or_else(|_| "[]".to_string()),
        ])?;
    }
    Ok(())
}

impl PatchStore for SqliteStore {
    fn record(&self, call: &RecordedCall<'_>) -> Result<(), StoreError> {
        let params = call.params.map(json_text);
        let result = json_text(call.result);
        let mut connection = self.connection();
        let write = |connection: &mut Connection| -> rusqlite::Result<()> {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.prepare_cached(
                "INSERT INTO calls (call_id, tool, recorded_at_ms, duration_us, success, params, result) \
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                call.call_id,
                call.tool,
                now_ms(),
                call.duration.as_micros().min(i64::MAX as u128) as i64,
                call.success,
                params,
                result
            ])?;
            if let Some(batch) = call.batch {
                let id = tx.last_insert_rowid();
                insert_batch(&tx, id, batch)?;
            }
            let mut settle =
                tx.prepare_cached("DELETE FROM pending_commits WHERE transaction_id = ?")?;
            for transaction in call.transactions {
                settle.execute(params![transaction])?;
            }
            drop(settle);
            tx.commit()
        };
        write(&mut connection).map_err(|e| fail(&self.path, e))?;
        drop(connection);
        if let Some(checkpointer) = &self.checkpointer {
            if wal_bytes(&self.path) > CHECKPOINT_AFTER_BYTES {
                checkpointer.nudge();
            }
        }
        Ok(())
    }

    fn begin(&self, commit: &PendingCommit<'_>) -> Result<(), StoreError> {
        let connection = self.connection();
        connection
            .prepare_cached(
                "INSERT INTO pending_commits (transaction_id, workspace, tool, call_id, begun_at_ms) \
                 VALUES (?, ?, ?, ?, ?)",
            )
            .and_then(|mut insert| {
                insert.execute(params![
                    commit.transaction,
                    commit.workspace,
                    commit.tool,
                    commit.call_id,
                    now_ms()
                ])
            })
            .map(drop)
            .map_err(|e| fail(&self.path, e))
    }

    fn pending(&self, workspace: &str) -> Result<Vec<Pending>, StoreError> {
        let connection = self.connection();
        let read = || -> rusqlite::Result<Vec<Pending>> {
            let mut query = connection.prepare_cached(
                "SELECT transaction_id, tool, call_id FROM pending_commits \
                 WHERE workspace = ? ORDER BY begun_at_ms, transaction_id",
            )?;
            let rows = query.query_map(params![workspace], |row| {
                Ok(Pending {
                    transaction: row.get(0)?,
                    tool: row.get(1)?,
                    call_id: row.get(2)?,
                })
            })?;
            rows.collect()
        };
        read().map_err(|e| fail(&self.path, e))
    }

    fn settle(&self, pending: &Pending, applied: bool) -> Result<(), StoreError> {
        let result = serde_json::json!({
            "interrupted": true,
            "applied": applied,
            "transaction": pending.transaction,
        });
        let mut connection = self.connection();
        let write = |connection: &mut Connection| -> rusqlite::Result<()> {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Another process may have settled it meanwhile: once only.
            let removed = tx
                .prepare_cached("DELETE FROM pending_commits WHERE transaction_id = ?")?
                .execute(params![pending.transaction])?;
            if removed > 0 {
                tx.prepare_cached(
                    "INSERT INTO calls (call_id, tool, recorded_at_ms, duration_us, success, params, result) \
                     VALUES (?, ?, ?, 0, ?, NULL, ?)",
                )?
                .execute(params![
                    pending.call_id,
                    pending.tool,
                    now_ms(),
                    applied,
                    json_text(&result)
                ])?;
            }
            tx.commit()
        };
        write(&mut connection).map_err(|e| fail(&self.path, e))
    }

    fn batch(&self, batch_id: &str) -> Result<Option<StoredBatch>, StoreError> {
        let connection = self.connection();
        read_batch(&connection, batch_id).map_err(|e| fail(&self.path, e))
    }
}

/// Why a stored row cannot be read back.
#[derive(Debug)]
enum ReadError {
    Sql(rusqlite::Error),
    Bad(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Sql(e) => write!(f, "{e}"),
            ReadError::Bad(what) => write!(f, "a stored row is malformed: {what}"),
        }
    }
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> Self {
        ReadError::Sql(e)
    }
}

/// A file patch's `changes` column: a JSON array of change objects.
fn stored_changes(raw: &str) -> Result<Vec<StoredChange>, ReadError> {
    let changes: Vec<StoredChange> = serde_json::from_str(raw)
        .map_err(|e| ReadError::Bad(format!("changes is not a JSON array of changes: {e}")))?;
    if let Some(odd) = changes
        .iter()
        .find(|c| !matches!(c.operation.as_str(), "insert" | "replace" | "delete"))
    {
        return Err(ReadError::Bad(format!(
            "unknown operation {:?}",
            odd.operation
        )));
    }
    Ok(changes)
}

fn unsigned(n: i64, what: &str) -> Result<u64, ReadError> {
    u64::try_from(n).map_err(|_| ReadError::Bad(format!("{what} is negative ({n})")))
}

fn read_batch(c: &Connection, batch_id: &str) -> Result<Option<StoredBatch>, ReadError> {
    let head = c
        .prepare_cached(
            "SELECT b.id, b.batch_key, b.batch_label, b.applied, c.call_id, c.recorded_at_ms \
             FROM batches b JOIN calls c ON c.id = b.call WHERE b.batch_id = ?",
        )?
        .query_row([batch_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .optional()?;
    let Some((batch_row, batch_key, batch_label, applied, call_id, recorded_at_ms)) = head else {
        return Ok(None);
    };
    let mut files_query = c.prepare_cached(
        "SELECT id, file_patch_id, file_key, file_label, doc_path, path, original_sha256, \
         new_sha256, applied, error_code, error_message, skipped_because, changes \
         FROM file_patches WHERE batch = ? ORDER BY file_index",
    )?;
    let mut files = Vec::new();
    let mut rows = files_query.query([batch_row])?;
    while let Some(r) = rows.next()? {
        let changes = stored_changes(&r.get::<_, String>(12)?)?;
        files.push(StoredFilePatch {
            file_patch_id: r.get(1)?,
            file_key: r.get(2)?,
            file_label: r.get(3)?,
            doc_path: r.get(4)?,
            path: r.get(5)?,
            original_sha256: r.get(6)?,
            new_sha256: r.get(7)?,
            applied: r.get(8)?,
            error_code: r.get(9)?,
            error_message: r.get(10)?,
            skipped_because: r.get(11)?,
            changes,
        });
    }
    Ok(Some(StoredBatch {
        batch_id: batch_id.to_string(),
        batch_key,
        batch_label,
        call_id,
        recorded_at_ms: unsigned(recorded_at_ms, "recorded_at_ms")?,
        applied,
        files,
    }))
}

#[cfg(test)]
mod tests;
