//! No panic on any store content: a stored batch whose rows are rewritten
//! with arbitrary values (any SQLite type in any column), or whose file is
//! overwritten with arbitrary bytes, is read back as a batch or an error,
//! through the store and through `get_patch_change`.

use std::sync::Arc;

use patchspec_engine::dispatch::{call, Session, ToolCall};
use patchspec_engine::hash::sha256_hex;
use patchspec_engine::store::PatchStore;
use patchspec_store::SqliteStore;
use proptest::prelude::*;
use rusqlite::types::Value as Sql;
use serde_json::{json, Value};

/// A store holding one applied batch; returns its dir, path and IDs.
fn stored_batch() -> (tempfile::TempDir, std::path::PathBuf, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let path = dir.path().join("s.db");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    let session = Session {
        store: Some(store as Arc<dyn PatchStore>),
        ..Session::default()
    };
    let params = json!({"files": [{
    "docPath": "a.txt", "originalSha256": sha256_hex(b"one\ntwo\n"),
    "changes": [
        {"operation": "insert", "afterLine": 0, "newLines": ["top"]},
        {"operation": "delete", "startLine": 2, "endLine": 2, "expectedOriginalLines": ["two"]}
    ]}]});
    let result = call(&ToolCall {
        tool_name: "workspace_write_patch",
        params: &params,
        workspace_root: dir.path(),
        session: &session,
    })
    .result;
    (dir, path, result["result"].clone())
}

fn fetch_all_ways(path: &std::path::Path, ids: &Value) {
    let Ok(store) = SqliteStore::open(path) else {
        return;
    };
    let batch_id = ids["batchId"].as_str().unwrap_or_default();
    let _ = store.batch(batch_id);
    let session = Session {
        store: Some(Arc::new(store) as Arc<dyn PatchStore>),
        ..Session::default()
    };
    let file = &ids["files"][0];
    for params in [
        json!({"batchId": batch_id}),
        json!({"batchId": batch_id, "filePatchId": file["filePatchId"]}),
        json!({"batchId": batch_id, "changeId": file["changes"][0]["changeId"]}),
        json!({"batchId": batch_id, "changeId": file["changes"][1]["changeId"]}),
    ] {
        let outcome = call(&ToolCall {
            tool_name: "get_patch_change",
            params: &params,
            workspace_root: path.parent().unwrap(),
            session: &session,
        });
        // Never the internal error of a caught panic.
        assert_ne!(
            outcome.result["error"]["kind"], "internal_error",
            "{}",
            outcome.result
        );
    }
}

fn sql_value() -> impl Strategy<Value = Sql> {
    prop_oneof![
        Just(Sql::Null),
        any::<i64>().prop_map(Sql::Integer),
        any::<f64>().prop_map(Sql::Real),
        ".{0,12}".prop_map(Sql::Text),
        prop_oneof![
            Just("insert".to_string()),
            Just("[\"x\"]".to_string()),
            Just("[1,2]".to_string()),
            // The changes column: near misses of a change array.
            Just(r#"[{"changeId":"c","operation":"insert"}]"#.to_string()),
            Just(r#"[{"changeId":"c","operation":"paint"}]"#.to_string()),
            Just(r#"[{"changeId":"c","operation":"insert","afterLine":-1}]"#.to_string()),
            Just(r#"[{"changeId":7,"operation":"delete","newLines":[1]}]"#.to_string()),
            Just(r#"{"changeId":"c"}"#.to_string())
        ]
        .prop_map(Sql::Text),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(Sql::Blob),
    ]
}

const COLUMNS: &[(&str, &str)] = &[
    ("calls", "call_id"),
    ("calls", "recorded_at_ms"),
    ("calls", "success"),
    ("batches", "call"),
    ("batches", "batch_key"),
    ("batches", "applied"),
    ("file_patches", "file_index"),
    ("file_patches", "doc_path"),
    ("file_patches", "applied"),
    ("file_patches", "original_sha256"),
    ("file_patches", "new_sha256"),
    ("file_patches", "batch"),
    ("file_patches", "changes"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rows_rewritten_with_any_values_never_panic(
        edits in proptest::collection::vec((0..COLUMNS.len(), sql_value()), 1..6)
    ) {
        let (_dir, path, ids) = stored_batch();
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            for (column, value) in &edits {
                let (table, column) = COLUMNS[*column];
                // A constraint may refuse a value (NOT NULL, a duplicate key): skip it.
                let _ = c.execute(&format!("UPDATE {table} SET {column} = ?"), [value]);
            }
        }
        fetch_all_ways(&path, &ids);
    }

    #[test]
    fn bytes_overwritten_anywhere_never_panic(
        at in any::<proptest::sample::Index>(),
        bytes in proptest::collection::vec(any::<u8>(), 1..64)
    ) {
        let (_dir, path, ids) = stored_batch();
        // Fold the WAL in so the data is in the main file.
        rusqlite::Connection::open(&path).unwrap()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;").unwrap();
        let mut file = std::fs::read(&path).unwrap();
        let start = at.index(file.len());
        for (i, b) in bytes.iter().enumerate() {
            if let Some(slot) = file.get_mut(start + i) {
                *slot = *b;
            }
        }
        std::fs::write(&path, &file).unwrap();
        fetch_all_ways(&path, &ids);
    }
}
