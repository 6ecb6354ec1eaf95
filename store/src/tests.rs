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
        .execute_batch("DROP TABLE changes")
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
