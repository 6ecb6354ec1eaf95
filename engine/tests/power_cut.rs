//! Power cuts at every step of every writing tool's commit, and of crash
//! recovery itself, under the durability model of `power_cut/model.rs`
//! (docs/clarifications.md, C-commit-power-loss).
//!
//! For each commit shape the tool runs once per step, the power going at
//! that step; every disk image the model lets that cut leave (all of them
//! when there are at most [`states_per_cut`] ways, else that many drawn
//! with a fixed seed) is then recovered as the next writer would
//! ([`journal::recover`]) and must be exactly the pre-state or exactly the
//! post-state — the post-state whenever the call had reported success —
//! with no temp file, no journal, nothing foreign, and the trash holding
//! exactly the post-state's deleted files or nothing. The same call sent
//! again must then succeed (reaching the post-state) or be refused with
//! nothing changed. The counts of distinct crash states are printed
//! (`cargo test -p patchspec-engine --test power_cut -- --nocapture`);
//! `PATCHSPEC_POWER_CUT_STATES=N` raises the states tried per cut (the
//! larger sweep of `scripts/power-cut-sweep.sh`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use patchspec_engine::dispatch::ToolOutcome;
use patchspec_engine::fs::Subtree;
use patchspec_engine::journal;
use patchspec_engine::layout::{is_temp_name, PRIVATE_DIR};
use patchspec_engine::seal::Seal;
use serde_json::{json, Value};

mod common;
#[path = "power_cut/model.rs"]
mod model;
use model::{Image, PowerCutFs};

/// Crash states tried per cut: all of them up to this many ways to choose.
fn states_per_cut() -> usize {
    std::env::var("PATCHSPEC_POWER_CUT_STATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024)
}

/// The workspace every shape starts from.
fn initial() -> Image {
    Image::with_files(&[
        ("a.txt", b"a\n".as_slice()),
        ("gone.txt", b"bye\n"),
        ("from.txt", b"move me\n"),
        ("p/A.java", b"package p;\nclass A {}\n"),
        ("w/1.txt", b"one\n"),
        ("w/2.txt", b"two\n"),
        ("w/3.txt", b"three\n"),
        ("w/4.txt", b"four\n"),
        ("sub/a.txt", b"a\n"),
        ("sub/gone.txt", b"bye\n"),
    ])
}

/// One commit shape: a writing tool's call.
struct Shape {
    name: &'static str,
    tool: &'static str,
    params: Value,
    /// The folder of a nested workspace the call runs in (its own
    /// `.patchspec`, its journal recovered by the enclosing writer's
    /// commit: `journal::recover_nested`); `None`: the workspace itself.
    nested: Option<&'static str>,
}

fn envelope(body: &str) -> Value {
    json!({"patch": format!("*** Begin Patch\n{body}*** End Patch\n")})
}

fn shapes() -> Vec<Shape> {
    let mut all = vec![
        Shape {
            name: "apply_patch update",
            tool: "apply_patch",
            nested: None,
            params: envelope("*** Update File: a.txt\n@@\n-a\n+b\n"),
        },
        Shape {
            name: "apply_patch add",
            tool: "apply_patch",
            nested: None,
            params: envelope("*** Add File: new.txt\n+new\n"),
        },
        Shape {
            name: "apply_patch delete",
            tool: "apply_patch",
            nested: None,
            params: envelope("*** Delete File: gone.txt\n"),
        },
        Shape {
            name: "apply_patch move",
            tool: "apply_patch",
            nested: None,
            params: envelope(
                "*** Update File: from.txt\n*** Move to: p/to.txt\n@@\n-move me\n+moved\n",
            ),
        },
        Shape {
            name: "apply_patch multi-file",
            tool: "apply_patch",
            nested: None,
            params: envelope(
                "*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n\
                 *** Update File: from.txt\n*** Move to: p/to.txt\n@@\n-move me\n+moved\n\
                 *** Add File: new.txt\n+new\n",
            ),
        },
        Shape {
            name: "apply_patch ten files",
            tool: "apply_patch",
            nested: None,
            params: envelope(
                "*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: w/1.txt\n@@\n-one\n+1\n\
                 *** Delete File: gone.txt\n*** Delete File: w/2.txt\n\
                 *** Update File: from.txt\n*** Move to: p/to.txt\n@@\n-move me\n+moved\n\
                 *** Update File: w/3.txt\n*** Move to: three.txt\n@@\n-three\n+3\n\
                 *** Add File: new.txt\n+new\n*** Add File: p/new.txt\n+p\n\
                 *** Add File: w/new.txt\n+w\n*** Update File: w/4.txt\n@@\n-four\n+4\n",
            ),
        },
        Shape {
            name: "workspace_write_patch",
            tool: "workspace_write_patch",
            nested: None,
            params: common::write_patch_two_files(),
        },
        Shape {
            name: "workspace_create_file",
            tool: "workspace_create_file",
            nested: None,
            params: json!({"path": "n/e/w.txt", "content": "x\n"}),
        },
    ];
    all.push(Shape {
        name: "apply_patch in a nested workspace",
        tool: "apply_patch",
        nested: Some("sub"),
        params: envelope("*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n"),
    });
    if cfg!(feature = "ide") {
        all.push(Shape {
            name: "apply_change",
            tool: "apply_change",
            nested: None,
            params: json!({"relativePath": "a.txt", "searchContent": "a", "replaceContent": "b"}),
        });
    }
    all
}

fn run(fs: &PowerCutFs, root: &Path, shape: &Shape) -> ToolOutcome {
    match shape.nested {
        Some(folder) => {
            let nested = Subtree::new(fs, folder);
            common::call_on(&nested, &root.join(folder), shape.tool, &shape.params)
        }
        None => common::call_on(fs, root, shape.tool, &shape.params),
    }
}

/// Recover as the next writer does: the workspace's own journals, or a
/// nested workspace's before a commit into it.
fn recover(fs: &PowerCutFs, shape: &Shape) -> std::io::Result<Vec<journal::Foreign>> {
    match shape.nested {
        Some(folder) => journal::recover_nested(fs, [format!("{folder}/a.txt").as_str()])
            .map(|(_, foreign)| foreign),
        None => journal::recover(fs).map(|done| done.foreign),
    }
}

/// Whether a journal is left where `shape`'s call journals.
fn pending(fs: &PowerCutFs, shape: &Shape) -> bool {
    match shape.nested {
        Some(folder) => journal::pending(&Subtree::new(fs, folder)).unwrap(),
        None => journal::pending(fs).unwrap(),
    }
}

/// True for a path in an engine's private folder (a nested one's too).
fn is_private(path: &str) -> bool {
    path.split('/').any(|part| part == PRIVATE_DIR)
}

/// The workspace as a user sees it: the engine's folder left out.
fn visible(tree: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.iter()
        .filter(|(p, _)| !is_private(p))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

/// The trashed files, by their path inside their transaction's folder.
fn trashed(tree: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.iter()
        .filter(|(p, _)| !p.ends_with('/'))
        .filter_map(|(p, b)| {
            let rest = &p[p.find(".patchspec/trash/")? + ".patchspec/trash/".len()..];
            let (_, inside) = rest.split_once('/')?;
            Some((inside.to_string(), b.clone()))
        })
        .collect()
}

/// A crash state with the names a run draws at random (the transaction,
/// the temp files) and the seal replaced by placeholders: two cuts that
/// leave the same disk up to those count once.
fn normalized(image: &Image) -> Vec<(String, Vec<u8>)> {
    let tree = image.tree();
    let mut names = BTreeSet::new();
    for path in tree.keys() {
        for folder in [".patchspec/txn/", ".patchspec/trash/"] {
            if let Some(rest) = path.find(folder).map(|at| &path[at + folder.len()..]) {
                if let Some(name) = rest.split('/').next().filter(|n| !n.is_empty()) {
                    names.insert(name.to_string());
                }
            }
        }
    }
    let clean = |text: &str| -> String {
        let mut out = text.to_string();
        for name in &names {
            out = out.replace(name.as_str(), "TXN");
        }
        // `<name>.<16 hex>.apply-patch.tmp`
        while let Some(at) = out.find(".apply-patch.tmp") {
            let start = at.saturating_sub(16);
            out.replace_range(start..at + ".apply-patch.tmp".len(), "RANDOM.staged");
        }
        if let Some(at) = out.find("\"seal\":\"") {
            let start = at + 8;
            let end = (start + 64).min(out.len());
            out.replace_range(start..end, "SEAL");
        }
        out
    };
    tree.iter()
        .map(|(p, b)| {
            let bytes = if p.contains(".patchspec/txn/") {
                clean(&String::from_utf8_lossy(b)).into_bytes()
            } else {
                b.to_vec()
            };
            (clean(p), bytes)
        })
        .collect()
}

/// What recovery must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Pre,
    Post,
}

/// What a shape's checks compare against: its call run whole once.
struct Expected<'a> {
    root: tempfile::TempDir,
    seal: Seal,
    shape: &'a Shape,
    /// Steps the whole call took.
    steps: usize,
    pre: BTreeMap<String, Vec<u8>>,
    post: BTreeMap<String, Vec<u8>>,
    post_trash: BTreeMap<String, Vec<u8>>,
}

impl<'a> Expected<'a> {
    /// Run `shape`'s call with no cut: its post-state.
    fn of(shape: &'a Shape) -> Expected<'a> {
        let root = tempfile::tempdir().unwrap();
        let seal =
            Seal::for_root(root.path()).expect("a journal key for the tests (docs/security.md)");
        let whole = PowerCutFs::new(initial(), Some(seal.clone()), None);
        let out = run(&whole, root.path(), shape);
        assert!(out.success, "{}: {}", shape.name, out.result);
        let post_tree = whole.live().tree();
        Expected {
            root,
            seal,
            shape,
            steps: whole.steps(),
            pre: visible(&initial().tree()),
            post: visible(&post_tree),
            post_trash: trashed(&post_tree),
        }
    }

    /// `shape`'s call on the initial workspace, the power going at step
    /// `cut`; whether it reported success.
    fn cut_at(&self, cut: usize) -> (PowerCutFs, bool) {
        let fs = PowerCutFs::new(initial(), Some(self.seal.clone()), Some(cut));
        let out = run(&fs, self.root.path(), self.shape);
        (fs, out.success)
    }
}

impl Expected<'_> {
    /// Recover `image` as the next writer would, check what is left (the
    /// module doc), send the call again; the outcome recovery gave.
    fn check(&self, image: Image, what: &str) -> Outcome {
        let fs = PowerCutFs::new(image, Some(self.seal.clone()), None);
        let foreign = recover(&fs, self.shape).unwrap_or_else(|e| panic!("{what}: recovery: {e}"));
        assert!(
            foreign.is_empty(),
            "{what}: foreign after recovery: {foreign:?}"
        );
        let outcome = self.settled(&fs, what);
        // Sent again: done, or refused with nothing changed.
        let before = fs.live().tree();
        let again = run(&fs, self.root.path(), self.shape);
        if again.success {
            assert_eq!(self.settled(&fs, what), Outcome::Post, "{what}: sent again");
        } else {
            assert_eq!(
                fs.live().tree(),
                before,
                "{what}: refused when sent again, yet wrote: {}",
                again.result
            );
        }
        outcome
    }

    /// The workspace after a recovery: pre or post, nothing left over.
    fn settled(&self, fs: &PowerCutFs, what: &str) -> Outcome {
        let tree = fs.live().tree();
        assert!(
            tree.keys().all(|p| !is_temp_name(p.trim_end_matches('/'))),
            "{what}: a temp file is left: {tree:?}"
        );
        assert!(
            !pending(fs, self.shape),
            "{what}: a journal is left: {tree:?}"
        );
        let seen = visible(&tree);
        let outcome = if seen == self.pre {
            Outcome::Pre
        } else if seen == self.post {
            Outcome::Post
        } else {
            panic!(
                "{what}: a mixed tree: {seen:?}\npre: {:?}\npost: {:?}",
                self.pre, self.post
            );
        };
        let trash = trashed(&tree);
        match outcome {
            Outcome::Pre => assert!(trash.is_empty(), "{what}: pre-state, trash {trash:?}"),
            Outcome::Post => assert_eq!(trash, self.post_trash, "{what}: post-state's trash"),
        }
        // Of the engine's folder, only the trash's files and their folders.
        let prefix = self.shape.nested.map_or(String::new(), |f| format!("{f}/"));
        for path in tree.keys().filter(|p| is_private(p)) {
            let own = path.strip_prefix(&prefix).unwrap_or(path);
            let allowed = matches!(own, ".patchspec/" | ".patchspec/trash/")
                || (outcome == Outcome::Post && own.starts_with(".patchspec/trash/"));
            assert!(allowed, "{what}: {path} is left: {tree:?}");
        }
        outcome
    }
}

/// Counts of one sweep.
#[derive(Default)]
struct Counts {
    cuts: usize,
    distinct: BTreeSet<Vec<(String, Vec<u8>)>>,
    checked: usize,
    pre: usize,
    post: usize,
}

/// The ten-file shape's cuts have far more states than the others': a
/// quarter of the limit keeps the default run near 30 s of CPU.
fn limit_for(shape: &Shape, limit: usize) -> usize {
    if shape.name == "apply_patch ten files" {
        limit / 4
    } else {
        limit
    }
}

/// Cut the power at every step of `shape`'s call; check every crash state.
fn sweep(shape: &Shape, limit: usize) -> Counts {
    let expected = Expected::of(shape);
    let limit = limit_for(shape, limit);
    let mut counts = Counts::default();
    let mut rng = fastrand::Rng::with_seed(44);
    let mut outcomes: BTreeMap<Vec<(String, Vec<u8>)>, Outcome> = BTreeMap::new();
    for cut in 0..=expected.steps {
        let (fs, reported) = expected.cut_at(cut);
        counts.cuts += 1;
        for image in fs.crash_states(limit, &mut rng) {
            let key = normalized(&image);
            let what = format!("{}: power cut at step {cut}", shape.name);
            let outcome = match outcomes.get(&key) {
                Some(known) => *known,
                None => {
                    let outcome = expected.check(image, &what);
                    outcomes.insert(key.clone(), outcome);
                    counts.checked += 1;
                    outcome
                }
            };
            if reported {
                assert_eq!(outcome, Outcome::Post, "{what}: success was reported");
            }
            match outcome {
                Outcome::Pre => counts.pre += 1,
                Outcome::Post => counts.post += 1,
            }
            counts.distinct.insert(key);
        }
    }
    counts
}

fn report(name: &str, counts: &Counts) {
    eprintln!(
        "{name}: {} cuts, {} distinct crash states ({} pre, {} post over all cuts), 0 mixed",
        counts.cuts,
        counts.distinct.len(),
        counts.pre,
        counts.post
    );
}

#[test]
fn a_power_cut_at_any_step_of_any_commit_leaves_the_pre_or_the_post_state() {
    let limit = states_per_cut();
    for shape in shapes() {
        let counts = sweep(&shape, limit);
        report(shape.name, &counts);
        assert!(counts.pre > 0 && counts.post > 0, "{}", shape.name);
    }
}

/// The power goes again while the next writer recovers a cut commit (at
/// every step of that recovery), for every shape: recovering once more
/// still gives the one outcome the uninterrupted recovery gives.
#[test]
fn a_power_cut_during_recovery_then_recovery_again_gives_the_same_state() {
    let limit = states_per_cut();
    for shape in shapes() {
        let counts = sweep_recovery(&shape, limit);
        report(&format!("recovery of {}", shape.name), &counts);
        assert!(counts.checked > 0, "{}", shape.name);
    }
}

/// For the journals a cut of `shape` may leave (`limit / 32` of them at
/// most), cut the power at every step of their recovery; check the crash
/// states of that (`limit / 16` per cut at most).
fn sweep_recovery(shape: &Shape, limit: usize) -> Counts {
    let limit = limit_for(shape, limit);
    let expected = Expected::of(shape);
    let seal = &expected.seal;
    let mut rng = fastrand::Rng::with_seed(4444);
    let mut counts = Counts::default();
    // Every distinct crash state of the commit that holds a journal.
    let mut journals: Vec<Image> = Vec::new();
    let mut seen = BTreeSet::new();
    for cut in 0..=expected.steps {
        let (fs, _) = expected.cut_at(cut);
        for image in fs.crash_states(limit, &mut rng) {
            let probe = PowerCutFs::new(image.clone(), None, None);
            if pending(&probe, shape) && seen.insert(normalized(&image)) {
                journals.push(image);
            }
        }
    }
    // A sample of them (a fixed seed), and of each recovery cut's states:
    // the ten-file shape alone leaves about 10,000 journals.
    rng.shuffle(&mut journals);
    journals.truncate(limit / 32);
    let limit = limit / 16;
    for (n, journaled) in journals.iter().enumerate() {
        let whole = PowerCutFs::new(journaled.clone(), Some(seal.clone()), None);
        recover(&whole, shape).unwrap();
        let settled = expected.settled(&whole, "uninterrupted recovery");
        for cut in 0..whole.steps() {
            let fs = PowerCutFs::new(journaled.clone(), Some(seal.clone()), Some(cut));
            let _ = recover(&fs, shape);
            counts.cuts += 1;
            for image in fs.crash_states(limit, &mut rng) {
                let key = normalized(&image);
                let what = format!(
                    "{}: journal {n}: power cut at recovery step {cut}",
                    shape.name
                );
                if counts.distinct.insert(key) {
                    let outcome = expected.check(image, &what);
                    assert_eq!(outcome, settled, "{what}");
                    counts.checked += 1;
                    match outcome {
                        Outcome::Pre => counts.pre += 1,
                        Outcome::Post => counts.post += 1,
                    }
                }
            }
        }
    }
    counts
}

/// The model's rules (C-commit-power-loss), each on the smallest case: what
/// a cut may keep and lose, so the sweeps above test against the rules the
/// docs state and not a stronger filesystem.
mod rules {
    use super::*;
    use patchspec_engine::fs::Fs;

    /// The trees every crash state of `fs` leaves, as sets of paths with
    /// their bytes.
    fn outcomes(fs: &PowerCutFs) -> BTreeSet<BTreeMap<String, Vec<u8>>> {
        let mut rng = fastrand::Rng::with_seed(1);
        fs.crash_states(1 << 12, &mut rng)
            .iter()
            .map(Image::tree)
            .collect()
    }

    fn empty() -> PowerCutFs {
        PowerCutFs::new(Image::with_files(&[]), None, None)
    }

    fn tree(entries: &[(&str, &[u8])]) -> BTreeMap<String, Vec<u8>> {
        entries
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect()
    }

    #[test]
    fn a_file_fsynced_but_not_its_folder_may_be_lost_but_never_torn() {
        let fs = empty();
        fs.write_new("x", b"data", None).unwrap();
        assert_eq!(outcomes(&fs), [tree(&[]), tree(&[("x", b"data")])].into());
        fs.sync_dir("").unwrap();
        assert_eq!(outcomes(&fs), [tree(&[("x", b"data")])].into());
    }

    #[test]
    fn data_not_yet_fsynced_may_be_absent_whole_or_torn() {
        // The power goes at the write's own fsync (step 2 of write_new).
        let fs = PowerCutFs::new(Image::with_files(&[]), None, Some(2));
        assert!(fs.write_new("x", b"data", None).is_err());
        assert_eq!(
            outcomes(&fs),
            [
                tree(&[]),
                tree(&[("x", b"")]),
                tree(&[("x", b"da")]),
                tree(&[("x", b"data")]),
            ]
            .into()
        );
    }

    #[test]
    fn a_rename_between_folders_is_whole_and_durable_once_both_are_synced() {
        let fs = PowerCutFs::new(
            Image::with_files(&[("a/x", b"1".as_slice()), ("b/keep", b"k")]),
            None,
            None,
        );
        fs.rename("a/x", "b/y").unwrap();
        let before = tree(&[("a/", b""), ("a/x", b"1"), ("b/", b""), ("b/keep", b"k")]);
        let after = tree(&[("a/", b""), ("b/", b""), ("b/keep", b"k"), ("b/y", b"1")]);
        assert_eq!(outcomes(&fs), [before.clone(), after.clone()].into());
        fs.sync_dir("b").unwrap();
        assert_eq!(outcomes(&fs), [before, after.clone()].into(), "one folder");
        fs.sync_dir("a").unwrap();
        assert_eq!(outcomes(&fs), [after].into());
    }

    #[test]
    fn a_file_synced_into_a_folder_whose_entry_is_not_durable_may_vanish_with_it() {
        let fs = empty();
        fs.create_dir("d").unwrap();
        fs.write_new("d/x", b"1", None).unwrap();
        fs.sync_dir("d").unwrap();
        assert_eq!(
            outcomes(&fs),
            [tree(&[]), tree(&[("d/", b""), ("d/x", b"1")])].into()
        );
    }

    #[test]
    fn unsynced_operations_are_lost_independently_in_one_folder() {
        let fs = PowerCutFs::new(Image::with_files(&[("old", b"o".as_slice())]), None, None);
        fs.write_new("new", b"n", None).unwrap();
        fs.remove_file("old").unwrap();
        // Either, both or neither: no order between two names.
        assert_eq!(outcomes(&fs).len(), 4);
    }

    #[test]
    fn a_folder_keeps_its_identity_across_a_cut() {
        let fs = empty();
        fs.create_dir("d").unwrap();
        fs.sync_dir("").unwrap();
        let before = fs.identity("d").unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        for image in fs.crash_states(16, &mut rng) {
            let after = PowerCutFs::new(image, None, None);
            assert_eq!(after.identity("d").unwrap(), before);
        }
    }
}
