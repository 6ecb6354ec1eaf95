//! A generated call made into a case: its workspace as `given`, and what
//! the reference engine does with it as `expect`.
//!
//! Main functions: [`given_of`] (a [`GenCall`]'s workspace and session in
//! the case format) and [`Reference::case`] (run the call through the
//! engine in-process, in a real workspace, and turn its result document and
//! the tree it leaves into a case). The expectation is the reference's
//! whole result document as a pattern ([`expectation`]), minus what the
//! tools' contract (docs/tools.md) leaves to each implementation: messages
//! (any string), the refusal diagnostics (`diagnosis`, `hint`,
//! `similarPaths`, `looksLike`, `relativePath`: not pinned), fresh random
//! IDs (their format, and unique in the document), and `workspace.read_file`'s
//! error strings (non-empty strings). The tree is the reference's, exactly,
//! with the permission bits of every file that is not `644`.

use std::collections::BTreeMap;

use patchspec_gen::call::GenCall;
use serde_json::{json, Map, Value};

use crate::case::{Case, Content, Expect, ExpectFiles, FileEntry, Given, UnchangedTag};
use crate::engine_call::{run_engine, PRIVATE_PATHS};
use crate::protocol::{Limits, SessionMsg};
use crate::workspace::{materialised_tree, Entry, PrivatePaths, RunRoot, Tree};

/// The mode a file gets when its entry declares none.
const DEFAULT_MODE: u32 = 0o644;

/// A file's content entry, with its mode when it is not the default.
fn content(bytes: &[u8], mode: u32) -> Content {
    let plain = Content::from_bytes(bytes);
    if mode & 0o7777 == DEFAULT_MODE {
        return plain;
    }
    let mode = Some(format!("{:o}", mode & 0o7777));
    match plain {
        Content::Text(text) => Content::Entry(FileEntry {
            text: Some(text),
            mode,
            ..FileEntry::default()
        }),
        Content::Entry(e) => Content::Entry(FileEntry { mode, ..e }),
    }
}

/// The call's workspace and session in the case format.
pub fn given_of(call: &GenCall) -> Given {
    Given {
        files: call
            .files
            .iter()
            .map(|(p, b, m)| (p.clone(), content(b, *m)))
            .collect(),
        dirs: call.dirs.clone(),
        symlinks: call.symlinks.iter().cloned().collect(),
        session: SessionMsg {
            active_files: call.active_files.clone(),
            limits: Limits {
                create_file_max_bytes: call.create_file_max_bytes,
            },
            keep_store: false,
        },
    }
}

/// The clause a found case of each tool cites (the tool's whole contract;
/// the summary says what differed).
pub fn spec_of(tool: &str) -> &'static str {
    match tool {
        "apply_patch" => "patch-envelope#envelope-multi-file",
        "workspace_write_patch" => "tul-002-workspace-write-patch#8.6-verify-and-apply",
        "workspace_create_file" => "tul-004-workspace-create-file#4.3-result",
        _ => "tul-001-workspace-read-file#4-result",
    }
}

/// Members of a result document no implementation is held to.
const FREE_MEMBERS: &[&str] = &[
    "diagnosis",
    "hint",
    "similarPaths",
    "looksLike",
    "relativePath",
];

/// The reference's result document as a pattern (see the module doc).
pub fn expectation(tool: &str, document: &Value) -> Value {
    fn walk(tool: &str, key: Option<&str>, in_errors: bool, v: &Value) -> Value {
        let id = |prefix: &str, group: &str, unique: bool| {
            let format = json!({"$regex": format!("^{prefix}-[0-9a-f]{{32}}$")});
            if unique {
                json!({"$all": [format, {"$unique": group}]})
            } else {
                format
            }
        };
        match (key, v) {
            (Some("message"), Value::String(_)) => json!({"$type": "string"}),
            (Some("batchId"), Value::String(_)) => id("batch", "batch", !in_errors),
            (Some("filePatchId"), Value::String(_)) => id("fp", "fp", !in_errors),
            (Some("changeId"), Value::String(_)) => id("chg", "chg", !in_errors),
            (Some("errors"), Value::Array(_)) if tool == "workspace.read_file" => json!({"$all": [
                {"$nonEmpty": true},
                {"$each": {"$all": [{"$type": "string"}, {"$nonEmpty": true}]}}
            ]}),
            (_, Value::Object(map)) => {
                let mut out = Map::new();
                for (k, item) in map {
                    if FREE_MEMBERS.contains(&k.as_str()) {
                        continue;
                    }
                    let errors = in_errors || k == "errors" || k == "error";
                    out.insert(k.clone(), walk(tool, Some(k), errors, item));
                }
                // A one-member object whose key starts with `$` would read as
                // a matcher: say it literally.
                if out.len() == 1 && out.keys().any(|k| k.starts_with('$')) {
                    return json!({"$exact": Value::Object(map.clone())});
                }
                Value::Object(out)
            }
            (_, Value::Array(items)) => Value::Array(
                items
                    .iter()
                    .map(|i| walk(tool, None, in_errors, i))
                    .collect(),
            ),
            (_, other) => other.clone(),
        }
    }
    walk(tool, None, false, document)
}

/// The expected tree of a case from the tree the reference left: its
/// files (with non-default modes), empty directories and symlinks, or
/// `"unchanged"` when it equals the tree before the call.
fn expect_tree(
    before: &Tree,
    after: &Tree,
) -> (ExpectFiles, Vec<String>, BTreeMap<String, String>) {
    if before == after {
        return (
            ExpectFiles::Unchanged(UnchangedTag::Unchanged),
            Vec::new(),
            BTreeMap::new(),
        );
    }
    let mut files = BTreeMap::new();
    let mut dirs = Vec::new();
    let mut links = BTreeMap::new();
    for (path, entry) in after {
        match entry {
            Entry::File(bytes, mode) => {
                files.insert(path.clone(), content(bytes, mode.unwrap_or(DEFAULT_MODE)));
            }
            Entry::Dir => {
                let prefix = format!("{path}/");
                if !after.keys().any(|p| p.starts_with(&prefix)) {
                    dirs.push(path.clone());
                }
            }
            Entry::Symlink(target) => {
                links.insert(path.clone(), target.clone());
            }
            // Generated workspaces are small and hold no special files.
            Entry::Large { .. } | Entry::Other => {}
        }
    }
    (ExpectFiles::Tree(files), dirs, links)
}

/// Why the reference could not judge a call (the engine panicked, or the
/// workspace could not be written or read): the call is left out of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceError(pub String);

/// The reference engine, in this process, in workspaces of its own.
pub struct Reference {
    root: RunRoot,
    private: PrivatePaths,
    /// The mode a materialised file without a declared one gets here.
    file_mode: u32,
}

impl Reference {
    /// A reference with a fresh per-run directory of its own.
    pub fn new() -> std::io::Result<Reference> {
        let private: Vec<String> = PRIVATE_PATHS.iter().map(|s| s.to_string()).collect();
        let root = crate::workspace::WorkDir::choose(None).run_root()?;
        // Read once, by materialising and snapshotting one file, so that the
        // tree before each call can be computed instead of walked.
        let probe: Given = serde_json::from_value(json!({"files": {"probe.txt": ""}}))
            .map_err(std::io::Error::other)?;
        let file_mode = {
            let dir = root.workspace_only(&probe)?;
            match crate::workspace::snapshot(dir.root())?.get("probe.txt") {
                Some(Entry::File(_, Some(mode))) => *mode,
                _ => return Err(std::io::Error::other("the probe file was not read back")),
            }
        };
        Ok(Reference {
            root,
            private: PrivatePaths::new(&private).map_err(std::io::Error::other)?,
            file_mode,
        })
    }

    /// The case of one call: `given` and `call` as generated (or shrunk),
    /// `expect` what the reference does. `id` and `summary` are the caller's.
    pub fn case(
        &self,
        id: String,
        summary: String,
        tool: &str,
        tags: Vec<String>,
        given: Given,
        call: Map<String, Value>,
    ) -> Result<Case, ReferenceError> {
        let io = |e: std::io::Error| ReferenceError(format!("the reference's workspace: {e}"));
        let dir = self.root.workspace_only(&given).map_err(io)?;
        let snapshot = |root: &std::path::Path| {
            crate::workspace::snapshot(root)
                .map(|t| self.private.filter(&t))
                .map_err(io)
        };
        let session = SessionMsg {
            active_files: given.session.active_files.clone(),
            limits: given.session.limits,
            keep_store: false,
        };
        let outcome = run_engine(
            tool,
            &Value::Object(call.clone()),
            dir.root(),
            &session,
            None,
        )
        .map_err(ReferenceError)?;
        let after = snapshot(dir.root())?;
        // The tree before the call, computed: a snapshot of it would be one
        // more walk per call (a test holds the two equal).
        let before = materialised_tree(&given, self.file_mode);
        let (files, dirs, symlinks) = expect_tree(&before, &after);
        let mut result = expectation(tool, &outcome.result);
        if let Value::Object(m) = &mut result {
            // The literal `success` outcome judging needs (the document's own
            // member, as every tool has; data.success when it has none).
            m.entry("success").or_insert(json!(outcome.success));
        }
        Ok(Case {
            id,
            summary,
            steps: Vec::new(),
            spec: vec![spec_of(tool).to_string()],
            tool: tool.to_string(),
            tags,
            given,
            call,
            expect: Expect {
                result,
                files,
                dirs,
                symlinks,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_diagnostics_and_ids_are_left_free() {
        let doc = json!({"success": false, "error": {"kind": "patch_apply_error", "message": "m",
            "details": {"path": "a.txt", "hunkIndex": 0, "diagnosis": {"x": 1}, "hint": "h"}},
            "data": {"changedFiles": [], "atomic": true}});
        assert_eq!(
            expectation("apply_patch", &doc),
            json!({"success": false, "error": {"kind": "patch_apply_error", "message": {"$type": "string"},
                "details": {"path": "a.txt", "hunkIndex": 0}},
                "data": {"changedFiles": [], "atomic": true}})
        );
        let doc = json!({"success": true, "result": {"batchId": "batch-0", "files": [
            {"filePatchId": "fp-1", "changes": [{"changeId": "chg-2"}]}]},
            "errors": [{"code": "x", "changeId": "chg-2", "message": "m"}]});
        let got = expectation("workspace_write_patch", &doc);
        assert_eq!(
            got["result"]["batchId"]["$all"][1],
            json!({"$unique": "batch"})
        );
        assert_eq!(
            got["result"]["files"][0]["changes"][0]["changeId"]["$all"][1],
            json!({"$unique": "chg"})
        );
        assert_eq!(
            got["errors"][0]["changeId"],
            json!({"$regex": "^chg-[0-9a-f]{32}$"})
        );
        let doc = json!({"success": false, "errorCode": "NOT_FOUND", "errors": ["no"]});
        assert!(expectation("workspace.read_file", &doc)["errors"]["$all"].is_array());
    }

    #[test]
    fn a_reference_case_passes_against_the_reference() {
        let call =
            patchspec_gen::call::generate(5, 0, &["apply_patch"], &|_| true).expect("a call");
        let reference = Reference::new().expect("a run directory");
        let case = reference
            .case(
                "fuzz/apply_patch/0".into(),
                "s".into(),
                call.tool,
                Vec::new(),
                given_of(&call),
                call.params.clone(),
            )
            .expect("the reference judges it");
        assert!(case.expect.result["success"].is_boolean());
        let json = serde_json::to_vec(&case).expect("serialises");
        crate::case::parse_case(&json, None).expect("a valid case");
    }
}
