//! The wire boundary: a tool name and its JSON params in, the tool's JSON
//! result document out. The runner's built-in executor and `patchspec exec`
//! call exactly [`call`]; nothing else in the engine sees JSON requests.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::fs::CommitRecorder;
use crate::fs::Fs;

pub use crate::call::{Limits, Session, ToolCall, ToolOutcome};
pub use crate::tools::SUPPORTED_TOOLS;

/// Run one tool call against its workspace.
///
/// A tool that may write opens the workspace with the writer lock
/// (`crate::tools::open_for_writing`) and first recovers an interrupted
/// commit left by a dead writer; a read-only tool writes nothing (see
/// [`crate::workspace`]).
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
pub fn call_through(call: &ToolCall<'_>, open_writer: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    call_recorded(call, open_writer)
}

/// [`call`] with the writing tools' opener given.
fn call_recorded(call: &ToolCall<'_>, open_writer: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    let made_up;
    let call_id = match &call.session.call_id {
        Some(id) => id.as_str(),
        None => {
            made_up = format!("call-{:016x}", fastrand::u64(..));
            made_up.as_str()
        }
    };
    let hooks = crate::tools::find(call.tool_name).map_or(&crate::tools::NO_EVENTS, |t| &t.events);
    crate::events::received(call.tool_name, call_id, || {
        (hooks.received)(call.tool_name, call_id, call.params)
    });
    let started = Instant::now();
    let store = call
        .session
        .store
        .as_ref()
        .filter(|_| crate::tools::writes(call.tool_name));
    let recorder = store.map(|store| {
        Arc::new(StoreRecorder {
            store: Arc::clone(store),
            tool: call.tool_name.to_string(),
            call_id: call_id.to_string(),
            began: std::sync::Mutex::new(Vec::new()),
        })
    });
    let outcome = match &recorder {
        Some(recorder) => {
            // Under the writer lock (and after its recovery): what dead
            // calls left pending is settled before this call begins.
            if let Ok(fs) = open_writer(call.workspace_root) {
                recorder.settle_pending(fs.as_ref());
            }
            let open = |root: &Path| -> std::io::Result<Box<dyn Fs + '_>> {
                let fs = open_writer(root)?;
                let hook: Arc<dyn CommitRecorder> = Arc::clone(recorder) as Arc<dyn CommitRecorder>;
                Ok(Box::new(crate::fs::Recorded::new(fs, hook)))
            };
            run_with(call, &open)
        }
        None => run_with(call, open_writer),
    };
    let duration = started.elapsed();
    if let (Some(store), Some(recorder)) = (store, &recorder) {
        let began = recorder.began();
        record(
            store.as_ref(),
            call,
            call_id,
            &outcome,
            duration,
            &began,
            hooks,
        );
    }
    crate::events::finished(call.tool_name, call_id, &outcome, duration, |code, ms| {
        (hooks.finished)(call.tool_name, call_id, call.params, &outcome, code, ms)
    });
    outcome
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

fn record(
    store: &dyn crate::store::PatchStore,
    call: &ToolCall<'_>,
    call_id: &str,
    outcome: &ToolOutcome,
    duration: std::time::Duration,
    began: &[String],
    hooks: &crate::tools::ToolEvents,
) {
    let started = Instant::now();
    // What the store keeps: the document without the lines it quotes from
    // the workspace's files (docs/security.md).
    let kept = ToolOutcome {
        result: crate::store::without_file_content(&outcome.result),
        ..outcome.clone()
    };
    // The commits whose fate the outcome tells: applied ones that left
    // their `committed` record, refused ones that left nothing. One whose
    // rollback did not complete (its intent, or its committed record,
    // still there beside a failure) stays pending: the journal settles it
    // once the next writer has recovered it.
    let workspace = crate::fs::RealFs::open(call.workspace_root).ok();
    let settled: Vec<String> = began
        .iter()
        .filter(|transaction| {
            let proof = workspace
                .as_ref()
                .map(|fs| crate::journal::prove(fs, transaction));
            match proof {
                Some(Ok(crate::journal::Proven::Finished { .. })) => outcome.success,
                Some(Ok(crate::journal::Proven::Interrupted(_))) => false,
                Some(Err(_)) => !outcome.success,
                None => false,
            }
        })
        .cloned()
        .collect();
    let recorded = crate::store::RecordedCall {
        transactions: &settled,
        tool: call.tool_name,
        call_id,
        params: call.params,
        outcome: &kept,
        duration,
    };
    match store.record(&recorded) {
        Ok(()) => {
            crate::events::stored(call.tool_name, call_id, started.elapsed(), |ms| {
                (hooks.stored)(call.tool_name, call_id, &outcome.result, ms)
            });
            // The kept `committed` records were the store's evidence; it
            // has the outcome now.
            if let Some(fs) = &workspace {
                for transaction in &settled {
                    let _ = crate::journal::forget(fs, transaction);
                }
            }
        }
        Err(e) => crate::events::store_failed(call.tool_name, call_id, &e.message),
    }
}

/// Run the tool, a writing tool opening its workspace with `open_writer`.
fn run_with(call: &ToolCall<'_>, open_writer: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    // Only a writer recovers an interrupted commit (crate::workspace): a
    // read-only call writes nothing. A writing call recovers first even
    // when its params will be refused before it opens the workspace (one
    // lstat when the workspace is clean); a failure here is not reported
    // here: the tool's own open recovers again and reports it in the
    // tool's vocabulary.
    if !crate::tools::writes(call.tool_name) {
        return run_tool(call, &crate::tools::open_real);
    }
    if let Ok(fs) = crate::fs::RealFs::open(call.workspace_root) {
        if crate::journal::pending(&fs).unwrap_or(false) {
            drop(fs);
            let _ = crate::workspace::open_for_writing(call.workspace_root);
        }
    }
    run_tool(call, open_writer)
}

/// [`call`], opening the workspace with `open` instead of the real
/// filesystem (the fault-injection seam: tests pass a [`crate::fs::FaultFs`]).
#[cfg(feature = "testing")]
pub fn call_with(call: &ToolCall<'_>, open: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    run_tool(call, open)
}

/// The tool of `call`, run with `open`; no events, nothing recorded.
fn run_tool(call: &ToolCall<'_>, open: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    match crate::tools::find(call.tool_name) {
        Some(tool) => (tool.run)(call, open),
        None => unknown_tool(call.tool_name),
    }
}

/// The outcome for a tool name this engine does not implement.
pub fn unknown_tool(name: &str) -> ToolOutcome {
    let message = format!("unknown tool {name:?}");
    ToolOutcome {
        success: false,
        result: serde_json::json!({"success": false, "error": {"kind": "unknown_tool", "message": message}}),
        error: Some(message),
    }
}
