//! The wire boundary: a tool name and its JSON params in, the tool's JSON
//! result document out. The runner's built-in executor and `patchspec exec`
//! call exactly [`call`]; nothing else in the engine sees JSON requests.

use std::cell::OnceCell;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::fs::CommitRecorder;
use crate::fs::Fs;
use crate::tools::OpenFs;

pub use crate::call::{Limits, Session, ToolCall, ToolOutcome};
pub use crate::tools::SUPPORTED_TOOLS;

/// Run one tool call against its workspace.
///
/// The workspace is opened once per call and that one handle serves every
/// step. A tool that may write opens it first, with the writer lock
/// (`crate::tools::open_for_writing`), recovering an interrupted commit a
/// dead writer left, and holds the lock until the call is recorded; a
/// read-only tool opens it when it needs it and writes nothing (see
/// docs/reliability.md).
///
/// Around the tool, it emits the call's events ([`crate::events`]) and,
/// when the session has a store, records every call of a writing tool in
/// it after the tool ran (a store failure is an event and leaves the
/// outcome as the tool made it: C-store-write-failure).
pub fn call(call: &ToolCall<'_>) -> ToolOutcome {
    call_recorded(call, &crate::tools::open_for_writing)
}

/// [`call`], its writing tools opening the workspace with `open_writer`
/// instead of [`crate::tools::open_for_writing`]: everything else — the
/// events, the store's two-step record — as in production (the
/// fault-injection seam for tests of the store beside a dying commit).
#[cfg(feature = "testing")]
pub fn call_through(call: &ToolCall<'_>, open_writer: &OpenFs<'_>) -> ToolOutcome {
    call_recorded(call, open_writer)
}

/// [`call`] with the writing tools' opener given.
fn call_recorded(call: &ToolCall<'_>, open_writer: &OpenFs<'_>) -> ToolOutcome {
    let made_up;
    let call_id = match &call.session.call_id {
        Some(id) => id.as_str(),
        None => {
            made_up = format!("call-{:016x}", fastrand::u64(..));
            made_up.as_str()
        }
    };
    let hooks = crate::tools::find(call.tool_name).map_or(&crate::tools::NO_HOOKS, |t| &t.hooks);
    crate::events::received(call.tool_name, call_id, || {
        (hooks.received)(call.tool_name, call_id, call.params)
    });
    let started = Instant::now();
    let writes = crate::tools::writes(call.tool_name);
    let store = call.session.store.as_ref().filter(|_| writes);
    let recorder = store.map(|store| {
        Arc::new(StoreRecorder {
            store: Arc::clone(store),
            tool: call.tool_name.to_string(),
            call_id: call_id.to_string(),
            began: std::sync::Mutex::new(Vec::new()),
        })
    });
    // Only a writer recovers an interrupted commit (crate::workspace): a
    // read-only call writes nothing.
    let root = call.workspace_root;
    let workspace = if writes {
        let hook = recorder
            .as_ref()
            .map(|r| Arc::clone(r) as Arc<dyn CommitRecorder>);
        CallWorkspace::new(Box::new(move || {
            let fs = open_writer(root)?;
            Ok(match &hook {
                Some(hook) => Box::new(crate::fs::Recorded::new(fs, Arc::clone(hook))),
                None => fs,
            })
        }))
    } else {
        CallWorkspace::new(Box::new(move || open_reader(root)))
    };
    if writes {
        // A writing call takes the lock and recovers before anything else,
        // even when its params will be refused. A failure to open is not
        // reported here: the tool reports it, in its own vocabulary, when
        // it asks for the workspace.
        let opened = workspace.get();
        if let (Ok(fs), Some(recorder)) = (opened, &recorder) {
            // Under the writer lock (and after its recovery): what dead
            // calls left pending is settled before this call begins.
            recorder.settle_pending(fs);
        }
    }
    let outcome = run_tool(call, &|_| workspace.lend());
    let duration = started.elapsed();
    if let (Some(store), Some(recorder)) = (store, &recorder) {
        let finished = FinishedCall {
            call,
            call_id,
            outcome: &outcome,
            duration,
            began: &recorder.began(),
        };
        record(store.as_ref(), &finished, workspace.get().ok(), hooks);
    }
    crate::events::finished(call.tool_name, call_id, &outcome, duration, |code, ms| {
        (hooks.finished)(call.tool_name, call_id, call.params, &outcome, code, ms)
    });
    outcome
}

/// [`crate::tools::open_real`], as an opener of any lifetime.
fn open_reader<'o>(root: &Path) -> std::io::Result<Box<dyn Fs + 'o>> {
    crate::tools::open_real(root).map(|fs| fs as Box<dyn Fs + 'o>)
}

/// A call's workspace, opened at most once: the first step that needs it
/// (the store's settling, the writer's recovery, the tool) opens it, and
/// every later step borrows that handle — and, for a writing call, the
/// writer lock it holds, until the call is recorded.
struct CallWorkspace<'a, 'o> {
    open: Box<dyn Fn() -> std::io::Result<Box<dyn Fs + 'o>> + 'a>,
    opened: OnceCell<std::io::Result<Box<dyn Fs + 'o>>>,
}

impl<'a, 'o> CallWorkspace<'a, 'o> {
    fn new(open: Box<dyn Fn() -> std::io::Result<Box<dyn Fs + 'o>> + 'a>) -> Self {
        CallWorkspace {
            open,
            opened: OnceCell::new(),
        }
    }

    /// The workspace, opened on first use; the same failure each time when
    /// it could not be opened.
    fn get(&self) -> std::io::Result<&(dyn Fs + 'o)> {
        match self.opened.get_or_init(|| (self.open)()) {
            Ok(fs) => Ok(fs.as_ref()),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        }
    }

    /// The workspace lent to a tool, as its opener returns it.
    fn lend(&self) -> std::io::Result<Box<dyn Fs + '_>> {
        Ok(Box::new(self.get()?))
    }
}

/// The patch store's hook on a writing call's commits (C-store-what): each
/// commit is begun in the store before its first visible change, and what
/// dead calls left pending is settled from the journal first.
struct StoreRecorder {
    store: Arc<dyn crate::store::PatchStore>,
    tool: String,
    call_id: String,
    /// The transactions this call began.
    began: std::sync::Mutex<Vec<String>>,
}

impl StoreRecorder {
    fn began(&self) -> Vec<String> {
        self.began.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// Settle what calls that died left pending in the store for this
    /// workspace, from what its journal shows: a kept `committed` record is
    /// an applied commit, anything else was rolled back (by this writer's
    /// recovery) or never began. The caller holds the writer lock, so no
    /// live call of this workspace is between its begin and its record.
    fn settle_pending(&self, fs: &dyn Fs) {
        // Without a seal nothing can be proven committed: leave it pending
        // rather than record a guess.
        let Some(seal) = fs.seal() else {
            return;
        };
        let Ok(pending) = self.store.pending(seal.root()) else {
            return;
        };
        for commit in &pending {
            let applied = match crate::journal::prove(fs, &commit.transaction) {
                Ok(crate::journal::Proven::Finished { .. }) => true,
                // Not rolled back yet (this writer's recovery failed):
                // undecided, settled by a later call.
                Ok(crate::journal::Proven::Interrupted(_)) => continue,
                // Rolled back by recovery, or never begun on disk.
                Err(_) => false,
            };
            if self.store.settle(commit, applied).is_ok() && applied {
                let _ = crate::journal::forget(fs, &commit.transaction);
            }
        }
        // Records kept for a call whose store entry was already settled
        // (its process died between recording and removing them).
        let Ok(entries) = fs.list_dir(crate::layout::TXN_DIR) else {
            return;
        };
        for (name, _) in entries.iter().take(crate::journal::MAX_TRANSACTIONS) {
            if pending.iter().any(|p| p.transaction == *name) {
                continue;
            }
            if let Ok(crate::journal::Proven::Finished { recorded: true }) =
                crate::journal::prove(fs, name)
            {
                let _ = crate::journal::forget(fs, name);
            }
        }
    }
}

impl CommitRecorder for StoreRecorder {
    fn begin(&self, fs: &dyn Fs, transaction: &str) -> std::io::Result<()> {
        // Settled by the workspace's canonical path; a workspace without a
        // seal cannot prove its commits, so its pending entries are never
        // settled (docs/security.md, "Without a key").
        let workspace = fs.seal().map_or("", |seal| seal.root());
        self.store
            .begin(&crate::store::PendingCommit {
                transaction,
                workspace,
                tool: &self.tool,
                call_id: &self.call_id,
            })
            .map_err(|e| std::io::Error::other(e.message))?;
        if let Ok(mut began) = self.began.lock() {
            began.push(transaction.to_string());
        }
        Ok(())
    }
}

/// A finished call of a writing tool, as the store records it.
struct FinishedCall<'c> {
    call: &'c ToolCall<'c>,
    call_id: &'c str,
    outcome: &'c ToolOutcome,
    duration: std::time::Duration,
    /// The transactions the call began in the store.
    began: &'c [String],
}

fn record(
    store: &dyn crate::store::PatchStore,
    done: &FinishedCall<'_>,
    workspace: Option<&dyn Fs>,
    hooks: &crate::tools::ToolHooks,
) {
    let FinishedCall {
        call,
        call_id,
        outcome,
        duration,
        began,
    } = *done;
    let started = Instant::now();
    // What the store keeps: the document without the lines it quotes from
    // the workspace's files (docs/security.md), filed as its tool says.
    let kept = crate::store::without_file_content(&outcome.result);
    let filed = (hooks.filed)(call_id, &kept);
    // The commits whose fate the outcome tells: applied ones that left
    // their `committed` record, refused ones that left nothing. One whose
    // rollback did not complete (its intent, or its committed record,
    // still there beside a failure), or whose folder cannot be read, stays
    // pending: the journal settles it once the next writer has recovered it.
    let settled: Vec<String> = began
        .iter()
        .filter(|transaction| {
            let Some(fs) = workspace else {
                return false;
            };
            match crate::journal::prove(fs, transaction) {
                Ok(crate::journal::Proven::Finished { .. }) => outcome.success,
                Ok(crate::journal::Proven::Interrupted(_)) => false,
                Err(_) => !outcome.success && crate::journal::absent(fs, transaction),
            }
        })
        .cloned()
        .collect();
    let recorded = crate::store::RecordedCall {
        transactions: &settled,
        tool: call.tool_name,
        call_id,
        params: filed.is_none().then_some(call.params),
        success: outcome.success,
        result: filed.as_ref().map_or(&kept, |(_, rest)| rest),
        batch: filed.as_ref().map(|(batch, _)| batch),
        duration,
    };
    match store.record(&recorded) {
        Ok(()) => {
            crate::events::stored(call.tool_name, call_id, started.elapsed(), |ms| {
                (hooks.stored)(call.tool_name, call_id, &outcome.result, ms)
            });
            // The kept `committed` records were the store's evidence; it
            // has the outcome now.
            if let Some(fs) = workspace {
                for transaction in &settled {
                    let _ = crate::journal::forget(fs, transaction);
                }
            }
        }
        Err(e) => crate::events::store_failed(call.tool_name, call_id, &e.message),
    }
}

/// [`call`], opening the workspace with `open` instead of the real
/// filesystem (the fault-injection seam: tests pass a [`crate::fs::FaultFs`]).
#[cfg(feature = "testing")]
pub fn call_with(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    run_tool(call, open)
}

/// The tool of `call`, run with `open`; no events, nothing recorded.
fn run_tool(call: &ToolCall<'_>, open: &OpenFs<'_>) -> ToolOutcome {
    match crate::tools::find(call.tool_name) {
        Some(tool) => (tool.run)(call, open),
        None => unknown_tool(call.tool_name),
    }
}

/// The outcome for a tool name this engine does not implement.
pub(crate) fn unknown_tool(name: &str) -> ToolOutcome {
    let message = format!("unknown tool {name:?}");
    ToolOutcome {
        success: false,
        result: serde_json::json!({"success": false, "error": {"kind": "unknown_tool", "message": message}}),
        error: Some(message),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::store::{PatchStore, Pending, PendingCommit, RecordedCall, StoreError, StoredBatch};

    /// A store that keeps the calls it records and the commits begun.
    #[derive(Debug, Default)]
    struct KeptStore {
        begun: Mutex<Vec<String>>,
        recorded: Mutex<Vec<(String, bool, usize)>>,
        /// Per call: whether its params were kept, and its batch.
        filed: Mutex<Vec<(bool, Option<StoredBatch>)>>,
    }

    impl PatchStore for KeptStore {
        fn record(&self, call: &RecordedCall<'_>) -> Result<(), StoreError> {
            let entry = (call.tool.to_string(), call.success, call.transactions.len());
            self.recorded.lock().unwrap().push(entry);
            let filed = (call.params.is_some(), call.batch.cloned());
            self.filed.lock().unwrap().push(filed);
            Ok(())
        }
        fn begin(&self, commit: &PendingCommit<'_>) -> Result<(), StoreError> {
            self.begun.lock().unwrap().push(commit.transaction.into());
            Ok(())
        }
        fn pending(&self, _: &str) -> Result<Vec<Pending>, StoreError> {
            Ok(Vec::new())
        }
        fn settle(&self, _: &Pending, _: bool) -> Result<(), StoreError> {
            Ok(())
        }
        fn batch(&self, _: &str) -> Result<Option<StoredBatch>, StoreError> {
            Ok(None)
        }
    }

    /// Run `tool` with `params` on `root` through [`call_recorded`], with
    /// a writer opener that counts its calls; the outcome and the count.
    fn counted(
        root: &Path,
        tool: &str,
        params: &serde_json::Value,
        session: &Session,
    ) -> (ToolOutcome, usize) {
        let opens = AtomicUsize::new(0);
        let open_writer = |root: &Path| -> std::io::Result<Box<dyn Fs>> {
            opens.fetch_add(1, Ordering::SeqCst);
            crate::tools::open_for_writing(root)
        };
        let call = ToolCall {
            tool_name: tool,
            params,
            workspace_root: root,
            session,
        };
        let outcome = call_recorded(&call, &open_writer);
        (outcome, opens.load(Ordering::SeqCst))
    }

    #[test]
    fn a_writing_call_opens_its_workspace_once_with_or_without_a_store() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let store = Arc::new(KeptStore::default());
        let with_store = Session {
            store: Some(Arc::clone(&store) as Arc<dyn crate::store::PatchStore>),
            ..Session::default()
        };
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n";
        let (applied, opens) = counted(
            dir.path(),
            "apply_patch",
            &json!({"patch": patch}),
            &with_store,
        );
        assert!(applied.success, "{}", applied.result);
        assert_eq!(opens, 1, "settle, recover, apply and record share one open");
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"b\n");
        // The commit was begun in the store through the lent handle, and
        // the record settled it.
        assert_eq!(store.begun.lock().unwrap().len(), 1);
        assert_eq!(
            *store.recorded.lock().unwrap(),
            [("apply_patch".to_string(), true, 1)]
        );

        let (refused, opens) = counted(
            dir.path(),
            "apply_patch",
            &json!({"patch": patch}),
            &with_store,
        );
        assert!(!refused.success);
        assert_eq!(opens, 1);

        let (invalid, opens) = counted(
            dir.path(),
            "workspace_create_file",
            &json!({}),
            &Session::default(),
        );
        assert!(!invalid.success);
        assert_eq!(
            opens, 1,
            "a writing call locks and recovers even when refused"
        );
        let created = json!({"path": "b.txt", "content": "b\n"});
        let (created, opens) = counted(
            dir.path(),
            "workspace_create_file",
            &created,
            &Session::default(),
        );
        assert!(created.success, "{}", created.result);
        assert_eq!(opens, 1);
    }

    #[test]
    fn the_store_files_a_batch_typed_and_every_other_call_as_it_came() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let store = Arc::new(KeptStore::default());
        let session = Session {
            store: Some(Arc::clone(&store) as Arc<dyn crate::store::PatchStore>),
            ..Session::default()
        };
        let batch = |sha: &str| {
            json!({"batchKey": "k", "files": [{"docPath": "a.txt", "originalSha256": sha,
                "changes": [{"operation": "replace", "startLine": 1, "endLine": 1,
                             "expectedOriginalLines": ["a"], "newLines": ["b"]}]}]})
        };
        let sha = crate::hash::sha256_hex(b"a\n");
        let (applied, _) = counted(dir.path(), "workspace_write_patch", &batch(&sha), &session);
        assert!(applied.success, "{}", applied.result);
        let (stale, _) = counted(dir.path(), "workspace_write_patch", &batch(&sha), &session);
        assert!(!stale.success);
        let (invalid, _) = counted(dir.path(), "workspace_write_patch", &json!({}), &session);
        assert!(!invalid.success);
        let (created, _) = counted(
            dir.path(),
            "workspace_create_file",
            &json!({"path": "c.txt", "content": ""}),
            &session,
        );
        assert!(created.success);

        let filed = store.filed.lock().unwrap();
        let (kept_params, Some(first)) = &filed[0] else {
            panic!("the applied batch is filed as a batch: {filed:?}");
        };
        assert!(!kept_params, "the batch holds the request");
        assert_eq!(first.batch_id, applied.result["result"]["batchId"]);
        assert_eq!(first.batch_key.as_deref(), Some("k"));
        assert!(first.applied && first.files[0].applied);
        assert_eq!(
            first.files[0].new_sha256.as_deref(),
            Some(&*crate::hash::sha256_hex(b"b\n"))
        );
        assert_eq!(first.files[0].changes[0].operation, "replace");
        assert_eq!(
            first.files[0].changes[0].new_lines,
            Some(vec!["b".to_string()])
        );
        let (_, Some(second)) = &filed[1] else {
            panic!("the stale batch is filed as a batch: {filed:?}");
        };
        assert!(!second.applied && !second.files[0].applied);
        assert_eq!(
            second.files[0].error_code.as_deref(),
            stale.result["result"]["files"][0]["error"]["code"].as_str()
        );
        assert!(second.files[0].error_message.is_some());
        assert!(
            matches!(&filed[2], (true, None)),
            "a batch refused before it had IDs is kept as it came"
        );
        assert!(matches!(&filed[3], (true, None)), "create_file as it came");
    }

    #[test]
    fn a_reading_call_never_uses_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let (read, opens) = counted(
            dir.path(),
            "workspace.read_file",
            &json!({"path": "a.txt"}),
            &Session::default(),
        );
        assert!(read.success, "{}", read.result);
        assert_eq!(opens, 0);
    }

    #[test]
    fn a_workspace_that_cannot_be_opened_is_the_tools_own_error_each_time() {
        let missing = Path::new("/nonexistent/patchspec/workspace");
        let (outcome, opens) = counted(
            missing,
            "workspace_create_file",
            &json!({"path": "a.txt", "content": "a"}),
            &Session::default(),
        );
        assert_eq!(opens, 1, "the failed open is not retried");
        assert_eq!(outcome.result["errorCode"], "UnhandledException");
        let message = outcome.error.unwrap();
        assert!(message.contains("could not be opened"), "{message}");
        assert!(message.contains("No such file"), "{message}");
    }
}
