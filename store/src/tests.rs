//! The store through the engine's dispatch: what a call records, what a
//! reader gets back, and what `open` refuses.

use std::sync::Arc;

use patchspec_engine::dispatch::{call, Session, ToolCall};
use patchspec_engine::hash::sha256_hex;
use serde_json::{json, Value};

use super::*;

pub(crate) fn write_patch(root: &Path, session: &Session, params: Value) -> Value {
    call(&ToolCall {
        tool_name: "workspace_write_patch",
        params: &params,
        workspace_root: root,
        session,
    })
    .result
}

pub(crate) fn session(store: &Arc<SqliteStore>) -> Session {
    Session {
        store: Some(store.clone() as Arc<dyn PatchStore>),
        call_id: Some("call-1".into()),
        ..Session::default()
    }
}

fn batch_for(text: &str) -> Value {
    json!({
        "batchKey": "bk",
        "files": [{
            "docPath": "a.txt", "fileKey": "fk",
            "originalSha256": sha256_hex(text.as_bytes()),
            "changes": [
                {"operation": "insert", "afterLine": 0, "newLines": ["top"], "changeKey": "c0", "description": "add a header"},
                {"operation": "replace", "startLine": 2, "endLine": 2, "expectedOriginalLines": ["two"], "newLines": ["2"]}
            ]
        }]
    })
}

#[test]
fn a_batch_is_stored_with_its_ids_keys_descriptions_and_shas() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let before_ms = now_ms();
    let result = write_patch(&root, &session(&store), batch_for("one\ntwo\n"));
    let after_ms = now_ms();
    assert_eq!(result["success"], true, "{result}");
    let batch_id = result["result"]["batchId"].as_str().unwrap();
    let stored = store.batch(batch_id).unwrap().unwrap();
    assert_eq!(stored.batch_key.as_deref(), Some("bk"));
    assert_eq!(stored.call_id, "call-1");
    assert!(
        (before_ms..=after_ms).contains(&stored.recorded_at_ms),
        "recorded at {} ms, the call ran from {before_ms} to {after_ms} ms",
        stored.recorded_at_ms
    );
    assert!(stored.applied);
    let file = &stored.files[0];
    assert_eq!(
        file.file_patch_id,
        result["result"]["files"][0]["filePatchId"]
    );
    assert_eq!(
        file.new_sha256.as_deref(),
        Some(sha256_hex(b"top\none\n2\n").as_str())
    );
    assert_eq!(file.original_sha256, sha256_hex(b"one\ntwo\n"));
    assert_eq!(file.changes[0].description.as_deref(), Some("add a header"));
    assert_eq!(file.changes[0].change_key.as_deref(), Some("c0"));
    assert_eq!(
        file.changes[1].expected_original_lines,
        Some(vec!["two".to_string()])
    );
    assert_eq!(
        file.changes[1].change_id,
        result["result"]["files"][0]["changes"][1]["changeId"]
    );

    // A refused batch is stored too, not applied, with its error.
    let refused = write_patch(&root, &session(&store), batch_for("stale\n"));
    assert_eq!(refused["success"], false);
    let id = refused["result"]["batchId"].as_str().unwrap();
    let stored = store.batch(id).unwrap().unwrap();
    assert!(!stored.applied && !stored.files[0].applied);
    assert_eq!(
        stored.files[0].error_code.as_deref(),
        Some("sha256_mismatch")
    );

    // A batch that fails validation has no IDs: only its call is recorded.
    let before = store.call_count().unwrap();
    let invalid = write_patch(&root, &session(&store), json!({"files": []}));
    assert!(invalid["result"].is_null());
    assert_eq!(store.call_count().unwrap(), before + 1);
    assert_eq!(
        store
            .batch("batch-00000000000000000000000000000000")
            .unwrap(),
        None
    );
}

#[test]
fn create_file_and_apply_patch_calls_are_recorded_and_reads_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
    let s = session(&store);
    for (tool, params) in [
        (
            "workspace_create_file",
            json!({"path": "n.txt", "content": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: m.txt\n+y\n*** End Patch\n"}),
        ),
        ("workspace.read_file", json!({"path": "n.txt"})),
    ] {
        call(&ToolCall {
            tool_name: tool,
            params: &params,
            workspace_root: dir.path(),
            session: &s,
        });
    }
    assert_eq!(store.call_count().unwrap(), 2);
    let c = store.connection();
    let rows: Vec<(String, bool)> = c
        .prepare("SELECT tool, success FROM calls ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        vec![
            ("workspace_create_file".into(), true),
            ("apply_patch".into(), true)
        ]
    );
}

#[test]
fn a_reopened_store_keeps_its_batches_and_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let id = {
        let store = Arc::new(SqliteStore::open(&path).unwrap());
        let r = write_patch(dir.path(), &session(&store), batch_for("one\ntwo\n"));
        r["result"]["batchId"].as_str().unwrap().to_string()
    };
    let again = SqliteStore::open(&path).unwrap();
    assert!(again.batch(&id).unwrap().is_some());
    let version: i64 = again
        .connection()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema_version());
}

/// A store of schema 1 (a row per change) is brought to schema 2 (a file
/// patch's changes as one JSON array) with every change as it was read
/// before: order, absent members, a line above i64::MAX (kept bit for bit
/// in schema 1); a change whose lines were not valid JSON makes its batch
/// an error when read, and only that batch.
#[test]
fn a_schema_1_store_is_migrated_with_its_changes_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;
             INSERT INTO calls VALUES (1, 'call-1', 'workspace_write_patch', 5, 0, 1, NULL, '[]');
             INSERT INTO batches VALUES (1, 'batch-1', 1, 'bk', NULL, 1);
             INSERT INTO batches VALUES (2, 'batch-2', 1, NULL, NULL, 1);
             INSERT INTO file_patches VALUES (1, 1, 0, 'fp-1', 'fk', NULL, 'a.txt', 'a.txt',
                 'old', 'new', 1, NULL, NULL, NULL);
             INSERT INTO file_patches VALUES (2, 1, 1, 'fp-2', NULL, NULL, 'b.txt', NULL,
                 'old', NULL, 0, 'stale_file', 'changed', NULL);
             INSERT INTO file_patches VALUES (3, 2, 0, 'fp-3', NULL, NULL, 'c.txt', NULL,
                 'old', NULL, 0, NULL, NULL, NULL);
             -- inserted out of order: change_index decides
             INSERT INTO changes VALUES (1, 1, 1, 'chg-b', NULL, 'delete', NULL, NULL, 2, 3,
                 '[\"two\",\"three\"]', NULL);
             INSERT INTO changes VALUES (2, 1, 0, 'chg-a', 'ck', 'insert', 'top line', 0, NULL,
                 NULL, NULL, '[\"top\"]');
             INSERT INTO changes VALUES (3, 3, 0, 'chg-c', NULL, 'replace', NULL, NULL,
                 {big}, {big}, 'not json', '[]');",
            big = u64::MAX as i64
        ))
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let version: i64 = store
        .connection()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema_version());
    let batch = store.batch("batch-1").unwrap().unwrap();
    assert_eq!(batch.batch_key.as_deref(), Some("bk"));
    assert_eq!(batch.files.len(), 2);
    let changes = &batch.files[0].changes;
    assert_eq!(
        changes,
        &vec![
            StoredChange {
                change_id: "chg-a".into(),
                change_key: Some("ck".into()),
                operation: "insert".into(),
                description: Some("top line".into()),
                after_line: Some(0),
                start_line: None,
                end_line: None,
                expected_original_lines: None,
                new_lines: Some(vec!["top".into()]),
            },
            StoredChange {
                change_id: "chg-b".into(),
                change_key: None,
                operation: "delete".into(),
                description: None,
                after_line: None,
                start_line: Some(2),
                end_line: Some(3),
                expected_original_lines: Some(vec!["two".into(), "three".into()]),
                new_lines: None,
            },
        ]
    );
    assert!(batch.files[1].changes.is_empty());
    assert_eq!(batch.files[1].error_code.as_deref(), Some("stale_file"));
    // The line above i64::MAX came through; the malformed lines did not.
    let err = store.batch("batch-2").unwrap_err();
    assert!(err.message.contains("changes"), "{err}");
    let big: String = store
        .connection()
        .query_row("SELECT changes FROM file_patches WHERE id = 3", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(
        big.contains(&format!("\"startLine\":{}", u64::MAX)),
        "{big}"
    );
    assert!(!store
        .connection()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'changes'",
            [],
            |r| r.get::<_, i64>(0)
        )
        .map(|n| n > 0)
        .unwrap());
}

fn refused_untouched(bytes: &[u8], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    std::fs::write(&path, bytes).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(err.message.contains(expect), "{err}");
    assert!(err.message.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file was changed");
    assert!(!dir.path().join("s.db-wal").exists());
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_untouched() {
    refused_untouched(b"hello, these are my notes\n", "not an SQLite database");
    refused_untouched(b"SQLite format 3", "not an SQLite database");
    // A valid header followed by garbage.
    let mut garbage = b"SQLite format 3\0".to_vec();
    garbage.extend((0..4096u32).map(|i| (i * 7 + 3) as u8));
    refused_untouched(&garbage, "not a usable patchspec store");
}

#[test]
fn another_applications_database_or_a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (setup, expect) in [
        (
            "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');",
            "another application",
        ),
        ("PRAGMA application_id = 7;", "another application"),
        (
            &*format!("PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 99;"),
            "newer patchspec",
        ),
    ] {
        let path = dir
            .path()
            .join(format!("{}.db", expect.len() + setup.len()));
        Connection::open(&path)
            .unwrap()
            .execute_batch(setup)
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let err = SqliteStore::open(&path).unwrap_err();
        assert!(err.message.contains(expect), "{setup}: {err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{setup}: changed");
    }
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(err.message.contains("not a regular file"), "{err}");
}

#[test]
fn an_empty_file_becomes_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    std::fs::write(&path, b"").unwrap();
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.call_count().unwrap(), 0);
}

#[test]
fn a_failed_store_write_leaves_the_tool_result_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
    // Another writer holds the write lock past the busy timeout? Simpler and
    // deterministic: a table the insert needs is gone.
    store
        .connection()
        .execute_batch("DROP TABLE file_patches")
        .unwrap();
    let r = write_patch(dir.path(), &session(&store), batch_for("one\ntwo\n"));
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "top\none\n2\n"
    );
    // The whole call's transaction was rolled back: no half-recorded batch.
    assert_eq!(store.call_count().unwrap(), 0);
}

/// Many openers racing on one new store: each sees either no store yet or
/// the whole first migration, never its tables without its application_id
/// (the three identifying reads are one snapshot). Before that, an opener
/// could refuse the store another was creating as "another application's".
#[test]
fn openers_racing_on_a_new_store_all_get_it() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("race-{round}.db"));
        let opened: Vec<_> = (0..6)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || SqliteStore::open(&path).map(|_| ()))
            })
            .collect();
        for (i, t) in opened.into_iter().enumerate() {
            let result = t.join().expect("the opener does not panic");
            assert!(result.is_ok(), "round {round}, opener {i}: {result:?}");
        }
    }
}

/// Record a batch of `changes` changes of about 130 bytes each, as the
/// engine's result document has them.
fn record_big_batch(store: &SqliteStore, n: usize, changes: usize) {
    let line = "x".repeat(100);
    let changes: Vec<StoredChange> = (0..changes)
        .map(|i| StoredChange {
            change_id: format!("chg-{i:032x}"),
            change_key: None,
            operation: "insert".into(),
            description: None,
            after_line: Some(i as u64),
            start_line: None,
            end_line: None,
            expected_original_lines: None,
            new_lines: Some(vec![line.clone()]),
        })
        .collect();
    let batch = StoredBatch {
        batch_id: format!("batch-{n:032x}"),
        batch_key: None,
        batch_label: None,
        call_id: "c".into(),
        recorded_at_ms: 0,
        applied: true,
        files: vec![StoredFilePatch {
            file_patch_id: format!("fp-{n:032x}"),
            file_key: None,
            file_label: None,
            doc_path: "a.txt".into(),
            path: None,
            original_sha256: "0".into(),
            new_sha256: None,
            applied: true,
            error_code: None,
            error_message: None,
            skipped_because: None,
            changes,
        }],
    };
    store
        .record(&RecordedCall {
            transactions: &[],
            tool: "workspace_write_patch",
            call_id: "c",
            params: None,
            success: true,
            result: &json!([]),
            batch: Some(&batch),
            duration: Duration::ZERO,
        })
        .unwrap();
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The checkpoint runs on its own thread, nudged once the WAL passes its
/// bound: while the store stays open, the database file grows (pages were
/// copied into it) and the WAL is cut back to the bound. With the
/// checkpoint off and no thread, the database would stay at one page.
#[test]
fn the_checkpoint_thread_copies_the_wal_into_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.checkpointer.is_some());
    // About 130 KB a batch: 40 of them pass the 4 MiB bound.
    for n in 0..40 {
        record_big_batch(&store, n, 1000);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while file_bytes(&path) < CHECKPOINT_AFTER_BYTES / 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was checkpointed: db {} bytes, WAL {}",
            file_bytes(&path),
            wal_bytes(&path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    record_big_batch(&store, 40, 1000);
    assert!(store.batch(&format!("batch-{:032x}", 0)).unwrap().is_some());
    assert!(store
        .batch(&format!("batch-{:032x}", 40))
        .unwrap()
        .is_some());
    // Dropping the store ends its thread (the test would hang otherwise).
    drop(store);
}

/// A writer that exited before its checkpoint (here: a connection with
/// SQLite's own checkpoint off, closed while a reader keeps the WAL from
/// being folded in at close) leaves the WAL past its bound: the next open
/// checkpoints it before anything else.
#[test]
fn opening_catches_up_on_a_wal_left_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    drop(SqliteStore::open(&path).unwrap());
    let reader = Connection::open(&path).unwrap();
    reader
        .query_row("SELECT count(*) FROM calls", [], |r| r.get::<_, i64>(0))
        .unwrap();
    {
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA wal_autocheckpoint = 0")
            .unwrap();
        let text = "y".repeat(64 * 1024);
        for _ in 0..80 {
            writer
                .execute(
                    "INSERT INTO calls (call_id, tool, recorded_at_ms, duration_us, success, params, result) \
                     VALUES ('w', 'apply_patch', 0, 0, 1, ?, '{}')",
                    [&text],
                )
                .unwrap();
        }
    }
    assert!(wal_bytes(&path) > CHECKPOINT_AFTER_BYTES);
    let before = file_bytes(&path);
    let store = SqliteStore::open(&path).unwrap();
    assert!(
        file_bytes(&path) > before + CHECKPOINT_AFTER_BYTES,
        "db {} bytes before the open, {} after",
        before,
        file_bytes(&path)
    );
    assert_eq!(store.call_count().unwrap(), 80);
    drop(reader);
}

/// Applied ⇔ recorded: a writing call with a store "dies" at every step of
/// its commit (no rollback, no record); the next writing call settles the
/// store from the journal. Then the workspace is the pre-state exactly when
/// the store says the call was not applied (or holds nothing for it), and
/// the post-state exactly when a record says applied; no commit stays pending,
/// nothing is left in `.patchspec/txn`, and `integrity_check` is ok.
#[test]
fn a_call_killed_at_any_step_is_recorded_as_the_workspace_shows() {
    use patchspec_engine::dispatch::call_through;
    use patchspec_engine::fs::{FaultFs, Fs, RealFs};
    let patch = json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** End Patch\n"});
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
        (dir, root, store)
    };
    let apply = |root: &Path, store: &Arc<SqliteStore>, fs: Option<&dyn Fs>, id: &str| {
        let session = Session {
            store: Some(store.clone() as Arc<dyn PatchStore>),
            call_id: Some(id.into()),
            ..Session::default()
        };
        let the_call = ToolCall {
            tool_name: "apply_patch",
            params: &patch,
            workspace_root: root,
            session: &session,
        };
        match fs {
            Some(fs) => {
                let open = |_: &Path| -> std::io::Result<Box<dyn Fs + '_>> { Ok(Box::new(fs)) };
                call_through(&the_call, &open)
            }
            None => call(&the_call),
        }
    };
    let visible = |root: &Path| {
        let mut files: Vec<(String, Option<String>)> = ["a.txt", "gone.txt", "new.txt"]
            .iter()
            .map(|p| (p.to_string(), std::fs::read_to_string(root.join(p)).ok()))
            .collect();
        files.sort();
        files
    };
    let steps = {
        let (_dir, root, store) = fresh();
        let real = RealFs::open(&root).unwrap();
        let counting = FaultFs::new(&real, |_| true, None);
        let out = apply(&root, &store, Some(&counting), "count");
        assert!(out.success, "{}", out.result);
        assert!(
            !root.join(".patchspec/txn").exists(),
            "nothing kept once recorded"
        );
        assert_eq!(store.pending("").unwrap().len(), 0);
        counting.count()
    };
    let (mut applied, mut not_applied) = (0, 0);
    for k in 0..steps {
        let (_dir, root, store) = fresh();
        let pre = visible(&root);
        {
            let real = RealFs::open(&root).unwrap();
            let dying = FaultFs::dying(&real, |_| true, k);
            let _ = apply(&root, &store, Some(&dying), "dead");
        }
        // The next writing call (refused: the file changed or not).
        let session = session(&store);
        let refused = json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+y\n*** End Patch\n"});
        let _ = call(&ToolCall {
            tool_name: "apply_patch",
            params: &refused,
            workspace_root: &root,
            session: &session,
        });
        let connection = store.connection();
        let recorded: Vec<(bool, String)> = connection
            .prepare("SELECT success, result FROM calls WHERE call_id = 'dead'")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let pending: i64 = connection
            .query_row("SELECT count(*) FROM pending_commits", [], |r| r.get(0))
            .unwrap();
        let integrity: String = connection
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        drop(connection);
        assert_eq!(pending, 0, "step {k}");
        assert_eq!(integrity, "ok");
        assert!(
            !root.join(".patchspec/txn").exists(),
            "step {k}: a journal is left: {:?} {:?}",
            std::fs::read_dir(root.join(".patchspec/txn")).map(|d| d
                .flat_map(|e| std::fs::read_dir(e.unwrap().path()).unwrap())
                .map(|e| e.unwrap().file_name())
                .collect::<Vec<_>>()),
            patchspec_engine::journal::recover(&RealFs::open(&root).unwrap()).map(|r| r.foreign)
        );
        let now = visible(&root);
        let says_applied = recorded.iter().any(|(ok, _)| *ok);
        // A call whose rollback did not complete is recorded as it
        // reported (failed, `rolledBack: false`) and once more when the
        // journal settles it: never as applied when it was not.
        assert!(
            !recorded.is_empty() || now == pre,
            "step {k}: applied, no record"
        );
        if now == pre {
            assert!(
                !says_applied,
                "step {k}: recorded as applied, not applied: {recorded:?}"
            );
            not_applied += 1;
        } else {
            assert!(
                says_applied,
                "step {k}: applied, not recorded as applied: {recorded:?}"
            );
            assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "b\n");
            applied += 1;
        }
    }
    assert!(
        applied > 0 && not_applied > 0,
        "{applied} applied, {not_applied} not"
    );
}

/// No file content in the store: a refused batch whose expected line
/// differs from the file's secret line is recorded without that line —
/// neither in the call's result nor in the file patch's error message —
/// while the caller's result still quotes it.
#[test]
fn a_mismatch_does_not_put_the_files_line_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    let text = "NAME=x\nAPI_KEY=sk-live-0123456789\n";
    std::fs::write(root.join(".env"), text).unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
    let result = write_patch(
        &root,
        &session(&store),
        json!({"files": [{
            "docPath": ".env",
            "originalSha256": sha256_hex(text.as_bytes()),
            "changes": [{"operation": "replace", "startLine": 2, "endLine": 2,
                          "expectedOriginalLines": ["API_KEY=old"], "newLines": ["API_KEY=new"]}]
        }]}),
    );
    assert_eq!(result["success"], false, "{result}");
    assert!(
        result.to_string().contains("sk-live-0123456789"),
        "the caller gets the line: {result}"
    );
    let connection = store.connection();
    let mut everything = String::new();
    for query in [
        "SELECT coalesce(params, '') || result FROM calls",
        "SELECT coalesce(error_message, '') || changes FROM file_patches",
    ] {
        let mut statement = connection.prepare(query).unwrap();
        let rows = statement.query_map([], |r| r.get::<_, String>(0)).unwrap();
        for row in rows {
            everything.push_str(&row.unwrap());
        }
    }
    assert!(
        everything.contains("line 2 is not the expected original line"),
        "{everything}"
    );
    assert!(
        !everything.contains("sk-live"),
        "the store holds the file's line: {everything}"
    );
}

/// A store that cannot be written where it lies is not called corrupt.
#[test]
fn a_store_that_cannot_be_written_is_not_called_corrupt() {
    let read_only = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
        None,
    );
    assert!(unusable(&read_only).contains("its folder must be writable"));
    let cannot_open = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
        None,
    );
    assert!(unusable(&cannot_open).contains("its folder must be writable"));
    let corrupt = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
        None,
    );
    assert!(unusable(&corrupt).starts_with("not a usable patchspec store"));
}
