//! apply_patch through the library API on real temporary workspaces: one
//! `check` helper, a case per behaviour, the fault-injection proof and the
//! generated-envelope property.

use std::collections::BTreeMap;
use std::path::Path;

use patchspec_engine::fs::{FaultFs, Fs, RealFs};
use patchspec_engine::hash::sha256_hex;
use patchspec_engine::tools::tul::apply_patch::{apply, ApplyOptions, ErrorKind};

/// Every file and directory under `root`, byte-exact (symlinks as `name@`).
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(root, None)
}

/// The visible tree: the engine's private `.patchspec/` folder left out.
fn visible(root: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(root, Some(patchspec_engine::layout::PRIVATE_DIR))
}

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }
    dir
}

fn tree(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    let dir = workspace(files);
    visible(dir.path())
}

/// Apply `patch` to a workspace of `files`; compare the error kind (None =
/// success) and the visible tree after (None = unchanged).
fn check(
    files: &[(&str, &str)],
    patch: &str,
    options: ApplyOptions,
    kind: Option<ErrorKind>,
    after: Option<&[(&str, &str)]>,
) -> patchspec_engine::tools::tul::apply_patch::Applied {
    let dir = workspace(files);
    let before = visible(dir.path());
    let fs = RealFs::open(dir.path()).unwrap();
    let applied = apply(&fs, patch, &options);
    assert_eq!(
        applied.as_ref().err().map(|r| r.error.kind),
        kind,
        "{:?}",
        applied
    );
    let expected = match after {
        Some(files) => tree(files),
        None => before,
    };
    assert_eq!(visible(dir.path()), expected);
    assert!(
        snapshot(dir.path())
            .keys()
            .all(|k| !k.ends_with(".apply-patch.tmp")),
        "a temp file was left behind"
    );
    applied
}

fn ok(files: &[(&str, &str)], patch: &str, after: &[(&str, &str)]) {
    let _ = check(files, patch, ApplyOptions::default(), None, Some(after));
}

fn refused(
    files: &[(&str, &str)],
    patch: &str,
    kind: ErrorKind,
) -> serde_json::Map<String, serde_json::Value> {
    check(files, patch, ApplyOptions::default(), Some(kind), None)
        .unwrap_err()
        .error
        .details
}

const FULL: &str = "*** Begin Patch
*** Add File: src/utils/clamp.ts
+export const clamp = (n: number, lo: number, hi: number): number =>
+ Math.min(Math.max(n, lo), hi);
*** Update File: src/index.ts
@@
 import { foo } from \"./foo\";
+import { clamp } from \"./utils/clamp\";
 export { foo };
+export { clamp };
*** Delete File: src/legacy.ts
*** End Patch
";

#[test]
fn the_specs_full_example_applies() {
    let index = "import { foo } from \"./foo\";\nexport { foo };\n";
    ok(
        &[("src/index.ts", index), ("src/legacy.ts", "old\n"), ("src/utils/.keep", "")],
        FULL,
        &[
            ("src/index.ts", "import { foo } from \"./foo\";\nimport { clamp } from \"./utils/clamp\";\nexport { foo };\nexport { clamp };\n"),
            ("src/utils/.keep", ""),
            ("src/utils/clamp.ts", "export const clamp = (n: number, lo: number, hi: number): number =>\n Math.min(Math.max(n, lo), hi);\n"),
        ],
    );
}

#[test]
fn a_failing_section_leaves_every_file_as_it_was() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-missing\n+x\n*** End Patch\n";
    let d = refused(
        &[("a.txt", "a\n"), ("b.txt", "b\n")],
        patch,
        ErrorKind::PatchApplyError,
    );
    assert_eq!(d["path"], "b.txt");
    assert_eq!(d["hunkIndex"], 0);
    assert_eq!(d["reason"], "context_not_found");
}

#[test]
fn non_atomic_stops_at_the_first_failure_and_reports_what_changed() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-missing\n+x\n*** Update File: c.txt\n@@\n-c\n+C\n*** End Patch\n";
    let options = ApplyOptions {
        atomic: false,
        ..ApplyOptions::default()
    };
    let applied = check(
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
        patch,
        options,
        Some(ErrorKind::PatchApplyError),
        Some(&[("a.txt", "A\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]),
    );
    // The refusal names the section that stays applied.
    let refusal = applied.unwrap_err();
    assert_eq!(refusal.changed_files.len(), 1);
    assert_eq!(refusal.changed_files[0].path, "a.txt");
}

#[test]
fn without_the_diagnosis_a_refusal_keeps_its_kind_and_fields_and_drops_only_the_diagnosis() {
    let files: &[(&str, &str)] = &[("a.txt", "one\ntwo\none\n")];
    // The refusal with and without the diagnosis: the same but for
    // `diagnosis` and `hint`.
    let compare = |patch: &str, kind: ErrorKind, options: &dyn Fn(bool) -> ApplyOptions| {
        let details = |diagnose| {
            check(files, patch, options(diagnose), Some(kind), None)
                .unwrap_err()
                .error
                .details
        };
        let (with, without) = (details(true), details(false));
        assert!(with.contains_key("diagnosis"), "{with:?}");
        let mut expected = with.clone();
        expected.remove("diagnosis");
        expected.remove("hint");
        assert_eq!(without, expected, "{kind:?}");
    };
    let plain = |diagnose| ApplyOptions {
        diagnose,
        ..ApplyOptions::default()
    };
    let context_not_found =
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-tow\n+2\n*** End Patch\n";
    compare(context_not_found, ErrorKind::PatchApplyError, &plain);
    compare(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n",
        ErrorKind::MultipleMatches,
        &plain,
    );
    // A stale Update: its hunks are diagnosed against the file as it is.
    let stale = |diagnose| ApplyOptions {
        diagnose,
        expected_sha256: [("a.txt".to_string(), "0".repeat(64))].into(),
        ..ApplyOptions::default()
    };
    compare(context_not_found, ErrorKind::StaleFile, &stale);
}

#[test]
fn moves_in_both_spellings_with_and_without_hunks() {
    let files: &[(&str, &str)] = &[
        ("old.ts", "export const NAME = \"old-name\";\n"),
        ("lib/.keep", ""),
    ];
    let moved: &[(&str, &str)] = &[
        ("lib/.keep", ""),
        ("lib/new.ts", "export const NAME = \"new-name\";\n"),
    ];
    let hunk = "@@\n-export const NAME = \"old-name\";\n+export const NAME = \"new-name\";\n";
    ok(
        files,
        &format!("*** Begin Patch\n*** Move File: old.ts -> lib/new.ts\n{hunk}*** End Patch\n"),
        moved,
    );
    ok(files, &format!("*** Begin Patch\n*** Update File: old.ts\n*** Move to: lib/new.ts\n{hunk}*** End Patch\n"), moved);
    ok(
        files,
        "*** Begin Patch\n*** Move File: old.ts -> lib/plain.ts\n*** End Patch\n",
        &[
            ("lib/.keep", ""),
            ("lib/plain.ts", "export const NAME = \"old-name\";\n"),
        ],
    );
}

#[test]
fn path_rules_give_their_error_kinds() {
    let files: &[(&str, &str)] = &[("a.txt", "a\n"), ("dir/b.txt", "b\n")];
    let add = |p: &str| format!("*** Begin Patch\n*** Add File: {p}\n+x\n*** End Patch\n");
    refused(files, &add("../evil.txt"), ErrorKind::OutsideWorkspace);
    refused(
        files,
        &add("dir/../../evil.txt"),
        ErrorKind::OutsideWorkspace,
    );
    refused(files, &add("/tmp/evil.txt"), ErrorKind::CommandFailed);
    refused(files, &add("C:\\evil.txt"), ErrorKind::CommandFailed);
    refused(files, &add("missing/new.txt"), ErrorKind::NotFound);
    refused(files, &add("a.txt"), ErrorKind::AlreadyExists);
    refused(
        files,
        "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n",
        ErrorKind::NotFound,
    );
    refused(
        files,
        "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch\n",
        ErrorKind::NotFound,
    );
    refused(
        files,
        "*** Begin Patch\n*** Move File: a.txt -> dir/b.txt\n*** End Patch\n",
        ErrorKind::AlreadyExists,
    );
    refused(
        files,
        "*** Begin Patch\n*** Move File: a.txt -> a.txt\n*** End Patch\n",
        ErrorKind::CommandFailed,
    );
    refused(
        files,
        "*** Begin Patch\n*** Move File: a.txt -> ./a.txt\n*** End Patch\n",
        ErrorKind::CommandFailed,
    );
}

#[test]
fn symlinks_that_lead_out_are_refused_and_nothing_outside_is_touched() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let dir = workspace(&[("a.txt", "a\n")]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    let fs = RealFs::open(dir.path()).unwrap();
    for patch in [
        "*** Begin Patch\n*** Add File: out/new.txt\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: out/secret.txt\n@@\n-secret\n+pwned\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: link.txt\n@@\n-secret\n+pwned\n*** End Patch\n",
        "*** Begin Patch\n*** Delete File: out/secret.txt\n*** End Patch\n",
    ] {
        let applied = apply(&fs, patch, &ApplyOptions::default());
        assert_eq!(
            applied.err().map(|r| r.error.kind),
            Some(ErrorKind::OutsideWorkspace),
            "{patch}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[test]
fn stale_checks_use_the_hash_map() {
    let files: &[(&str, &str)] = &[("a.txt", "a\n")];
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n";
    let with = |map: &[(&str, &str)]| ApplyOptions {
        expected_sha256: map
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..ApplyOptions::default()
    };
    let good = sha256_hex(b"a\n");
    let _ = check(
        files,
        patch,
        with(&[("a.txt", &good)]),
        None,
        Some(&[("a.txt", "b\n")]),
    );
    let _ = check(
        files,
        patch,
        with(&[("a.txt", &good.to_uppercase())]),
        None,
        Some(&[("a.txt", "b\n")]),
    );
    let stale = check(
        files,
        patch,
        with(&[("a.txt", &sha256_hex(b"other"))]),
        Some(ErrorKind::StaleFile),
        None,
    );
    assert_eq!(stale.unwrap_err().error.details["path"], "a.txt");
    // Paths not in the patch are not checked; paths not in the map skip the check.
    let _ = check(
        files,
        patch,
        with(&[("other.txt", &sha256_hex(b"x"))]),
        None,
        Some(&[("a.txt", "b\n")]),
    );
    // A malformed hash is a clear error, whatever it names.
    let _ = check(
        files,
        patch,
        with(&[("a.txt", "abc")]),
        Some(ErrorKind::CommandFailed),
        None,
    );
    // The "" sentinel on an Add asserts the file does not exist.
    let add = "*** Begin Patch\n*** Add File: new.txt\n+n\n*** End Patch\n";
    let _ = check(
        files,
        add,
        with(&[("new.txt", "")]),
        None,
        Some(&[("a.txt", "a\n"), ("new.txt", "n\n")]),
    );
    let _ = check(
        files,
        add,
        with(&[("new.txt", &good)]),
        Some(ErrorKind::StaleFile),
        None,
    );
    let add_existing = "*** Begin Patch\n*** Add File: a.txt\n+n\n*** End Patch\n";
    let _ = check(
        files,
        add_existing,
        with(&[("a.txt", "")]),
        Some(ErrorKind::StaleFile),
        None,
    );
}

/// A file large enough to be hashed while it is read (in stretches, on a
/// second thread) and split into lines on several: the stale check still
/// names the file's exact digest, and the edit lands where it belongs.
#[test]
fn a_large_file_is_checked_and_edited_as_a_small_one() {
    let body: String = (0..900_000).map(|i| format!("line {i}\n")).collect();
    assert!(
        body.len() > 8 << 20,
        "past the sizes that stay on one thread"
    );
    let files: &[(&str, &str)] = &[("big.txt", &body)];
    let patch = "*** Begin Patch\n*** Update File: big.txt\n@@\n line 899998\n-line 899999\n+changed\n*** End Patch\n";
    let with = |sha: &str| ApplyOptions {
        expected_sha256: [("big.txt".to_string(), sha.to_string())].into(),
        ..ApplyOptions::default()
    };
    let after = body.replace("line 899999\n", "changed\n");
    let _ = check(
        files,
        patch,
        with(&sha256_hex(body.as_bytes())),
        None,
        Some(&[("big.txt", &after)]),
    );
    let stale = check(
        files,
        patch,
        with(&sha256_hex(b"other")),
        Some(ErrorKind::StaleFile),
        None,
    );
    assert_eq!(
        stale.unwrap_err().error.details["actualSha256"],
        sha256_hex(body.as_bytes())
    );
}

/// Many hunks in a large file: their old sides (more than the 4,096 lines
/// from which they are made ready on a second thread while the file is
/// read) apply as they would one by one, with and without a stale check,
/// and a stale file is still refused.
#[test]
fn many_hunks_made_ready_beside_the_read_apply_as_few_do() {
    let body: String = (0..900_000).map(|i| format!("line {i}\n")).collect();
    let hunks = 2_100;
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.txt\n");
    for h in 0..hunks {
        let k = h * 400;
        patch.push_str(&format!("@@\n line {k}\n-line {}\n+changed {h}\n", k + 1));
    }
    let after: String = (0..900_000)
        .map(|i| match (i % 400, i / 400) {
            (1, h) if h < hunks => format!("changed {h}\n"),
            _ => format!("line {i}\n"),
        })
        .collect();
    patch.push_str("*** End Patch\n");
    assert!(2 * hunks > 4096, "past the threshold");
    let files: &[(&str, &str)] = &[("big.txt", &body)];
    let with = |sha: Option<&str>| ApplyOptions {
        expected_sha256: sha
            .map(|sha| [("big.txt".to_string(), sha.to_string())].into())
            .unwrap_or_default(),
        ..ApplyOptions::default()
    };
    let digest = sha256_hex(body.as_bytes());
    for sha in [Some(digest.as_str()), None] {
        let _ = check(files, &patch, with(sha), None, Some(&[("big.txt", &after)]));
    }
    let _ = check(
        files,
        &patch,
        with(Some(&sha256_hex(b"other"))),
        Some(ErrorKind::StaleFile),
        None,
    );
}

/// `./a.txt` and `a.txt` name one file: with different digests the map
/// contradicts itself and is refused (in either order, naming both keys);
/// the last one winning would silently drop the stale check.
#[test]
fn two_keys_for_one_path_must_agree() {
    let files: &[(&str, &str)] = &[("a.txt", "a\n")];
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n";
    let with = |map: &[(&str, &str)]| ApplyOptions {
        expected_sha256: map
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..ApplyOptions::default()
    };
    let (good, wrong) = (sha256_hex(b"a\n"), sha256_hex(b"other\n"));
    for map in [
        [("./a.txt", wrong.as_str()), ("a.txt", good.as_str())],
        [("./a.txt", good.as_str()), ("a.txt", wrong.as_str())],
    ] {
        let refused = check(
            files,
            patch,
            with(&map),
            Some(ErrorKind::CommandFailed),
            None,
        );
        let e = refused.unwrap_err().error;
        assert_eq!(e.details["reason"], "conflicting_expected_sha256");
        assert_eq!(e.details["path"], "a.txt");
        assert_eq!(e.details["keys"], serde_json::json!(["./a.txt", "a.txt"]));
        assert!(e.message.contains("\"./a.txt\"") && e.message.contains("\"a.txt\""));
    }
    // The same digest under two spellings (and two cases) is one check.
    let upper = good.to_uppercase();
    let _ = check(
        files,
        patch,
        with(&[("./a.txt", &upper), ("a.txt", &good), ("x/../a.txt", &good)]),
        None,
        Some(&[("a.txt", "b\n")]),
    );
    let stale = check(
        files,
        patch,
        with(&[("./a.txt", &wrong), ("a.txt", &wrong)]),
        Some(ErrorKind::StaleFile),
        None,
    );
    assert_eq!(stale.unwrap_err().error.kind, ErrorKind::StaleFile);
}

#[test]
fn add_file_trailing_newline_rule() {
    let add = |body: &str| format!("*** Begin Patch\n*** Add File: n.txt\n{body}*** End Patch\n");
    ok(&[], &add("+a\n+b\n"), &[("n.txt", "a\nb\n")]);
    ok(&[], &add("+a\n+\n"), &[("n.txt", "a\n")]);
    ok(&[], &add("+a\n+\n+\n"), &[("n.txt", "a\n\n")]);
    ok(
        &[],
        &add("+a\n\\ No newline at end of file\n"),
        &[("n.txt", "a")],
    );
    ok(&[], &add(""), &[("n.txt", "")]);
}

#[test]
fn deleted_files_go_to_the_trash() {
    let dir = workspace(&[("gone.txt", "bye\n")]);
    let fs = RealFs::open(dir.path()).unwrap();
    let applied = apply(
        &fs,
        "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n",
        &ApplyOptions::default(),
    );
    assert!(applied.is_ok());
    let trashed: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(k, _)| k.starts_with(".patchspec/trash/") && k.ends_with("gone.txt"))
        .collect();
    assert_eq!(trashed.len(), 1);
    assert_eq!(trashed[0].1, b"bye\n");
}

#[test]
fn executable_bits_survive_an_update() {
    use std::os::unix::fs::PermissionsExt;
    let dir = workspace(&[("run.sh", "#!/bin/sh\necho a\n")]);
    std::fs::set_permissions(
        dir.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let fs = RealFs::open(dir.path()).unwrap();
    let applied = apply(
        &fs,
        "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo b\n*** End Patch\n",
        &ApplyOptions::default(),
    );
    assert!(applied.is_ok());
    let mode = std::fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

/// The fault-injection proof at the tool level: a patch with an add, an
/// update, a delete and a move, failed at every filesystem step in turn.
#[test]
fn a_fault_at_any_step_of_a_multi_file_commit_changes_nothing() {
    let files: &[(&str, &str)] = &[
        ("a.txt", "a\n"),
        ("gone.txt", "bye\n"),
        ("m/old.txt", "m\n"),
        ("n/.keep", ""),
    ];
    let patch = "*** Begin Patch
*** Add File: new.txt
+new
*** Update File: a.txt
@@
-a
+A
*** Delete File: gone.txt
*** Move File: m/old.txt -> n/moved.txt
@@
-m
+M
*** End Patch
";
    let steps = {
        let dir = workspace(files);
        let real = RealFs::open(dir.path()).unwrap();
        let counting = FaultFs::new(&real, |_| true, None);
        assert!(apply(&counting, patch, &ApplyOptions::default()).is_ok());
        counting.count()
    };
    for k in 0..steps {
        let dir = workspace(files);
        let before = snapshot(dir.path());
        let real = RealFs::open(dir.path()).unwrap();
        let faulty = FaultFs::new(&real, |_| true, Some(k));
        let applied = apply(&faulty as &dyn Fs, patch, &ApplyOptions::default());
        if applied.is_err() {
            assert_eq!(
                snapshot(dir.path()),
                before,
                "fault at step {k}: {:?}",
                faulty.log()
            );
        } else {
            // Only a failed read-only probe that was not needed can pass.
            assert_eq!(
                std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
                "A\n",
                "step {k}"
            );
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// A file of distinct lines (some repeated filler, never two in a row),
    /// edits at distinct places, rendered as an envelope with one context
    /// line around each. Every hunk's old side is then unique in the file:
    /// one of two or more lines holds a distinct line, and a one-line old
    /// side is line 0, which is not filler. New lines (`[a-z ]`) never equal
    /// a file line. So every generated envelope must apply.
    /// (file lines, edits as (start, length, new lines), CRLF, final newline)
    type Scenario = (Vec<String>, Vec<(usize, usize, Vec<String>)>, bool, bool);

    fn file_and_edits() -> impl Strategy<Value = Scenario> {
        (3usize..60).prop_flat_map(|n| {
            let lines = Just(
                (0..n)
                    .map(|i| {
                        if i % 7 == 3 {
                            "}".to_string()
                        } else {
                            format!("line {i} of the file")
                        }
                    })
                    .collect::<Vec<_>>(),
            );
            let edits = proptest::collection::vec(
                (
                    0..n,
                    0usize..3,
                    proptest::collection::vec("[a-z ]{0,12}", 0..3),
                ),
                1..6,
            );
            (lines, edits, any::<bool>(), any::<bool>())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn a_generated_envelope_gives_the_expected_file((lines, edits, crlf, final_nl) in file_and_edits()) {
            let n = lines.len();
            // Keep edits that stay apart (two lines of gap so contexts do not overlap).
            let mut chosen: Vec<(usize, usize, Vec<String>)> = Vec::new();
            let mut sorted = edits.clone();
            sorted.sort_by_key(|e| e.0);
            for (start, len, new) in sorted {
                let end = (start + len).min(n);
                if chosen.last().is_none_or(|(s, l, _)| start >= s + l + 3) {
                    chosen.push((start, end - start, new));
                }
            }
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut file = lines.join(nl);
            if final_nl { file.push_str(nl); }
            let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
            for (start, len, new) in &chosen {
                let ctx_before = start.checked_sub(1);
                let ctx_after = (start + len < n).then_some(start + len);
                // The generator's promise, checked: the old side occurs once.
                let from = ctx_before.unwrap_or(*start);
                let to = ctx_after.map_or(start + len, |a| a + 1);
                let old = &lines[from..to];
                if !old.is_empty() {
                    let occurrences = lines.windows(old.len()).filter(|w| *w == old).count();
                    prop_assert_eq!(occurrences, 1, "old side {:?} is not unique", old);
                }
                patch.push_str("@@\n");
                if let Some(c) = ctx_before { patch.push_str(&format!(" {}\n", lines[c])); }
                for l in &lines[*start..start + len] { patch.push_str(&format!("-{l}\n")); }
                for l in new { patch.push_str(&format!("+{l}\n")); }
                if let Some(c) = ctx_after { patch.push_str(&format!(" {}\n", lines[c])); }
                if ctx_before.is_none() && ctx_after.is_none() && *len == 0 {
                    // An empty file-wide edit: nothing anchors it; skip.
                    return Ok(());
                }
            }
            patch.push_str("*** End Patch\n");
            // The model: splice the edits into the line list.
            let mut expected: Vec<String> = Vec::new();
            let mut i = 0;
            for (start, len, new) in &chosen {
                expected.extend(lines[i..*start].iter().cloned());
                expected.extend(new.iter().cloned());
                i = start + len;
            }
            expected.extend(lines[i..].iter().cloned());
            let mut expected_text = expected.join(nl);
            if final_nl && !expected.is_empty() { expected_text.push_str(nl); }

            let dir = workspace(&[("f.txt", &file)]);
            let fs = RealFs::open(dir.path()).unwrap();
            let applied = apply(&fs, &patch, &ApplyOptions::default());
            prop_assert!(applied.is_ok(), "{:?}\n{}", applied, patch);
            prop_assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), expected_text);
        }
    }
}

#[test]
fn a_unified_diff_that_is_not_utf8_is_still_named() {
    // The shape check decodes only the lines it reads, lossily.
    let dir = workspace(&[("a.txt", "a\n")]);
    let fs = RealFs::open(dir.path()).unwrap();
    let mut patch = b"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+\xff\n".to_vec();
    patch.extend(std::iter::repeat_n(b"+x\n".as_slice(), 1000).flatten());
    let applied = patchspec_engine::tools::tul::apply_patch::apply_bytes(
        &fs,
        &patch,
        &ApplyOptions::default(),
    );
    let e = applied.expect_err("refused").error;
    assert_eq!(e.kind, ErrorKind::PatchParseError);
    assert_eq!(e.details["looksLike"], "unified_diff");
    assert!(e
        .hint()
        .is_some_and(|h| h.contains("*** Update File: a.txt")));
    assert_eq!(visible(dir.path()), tree(&[("a.txt", "a\n")]));
}

#[test]
fn the_wire_message_ends_with_the_hint_and_the_bare_message_does_not() {
    let dir = workspace(&[("src/app.py", "x\n")]);
    let root = dir.path().to_str().unwrap().to_string();
    for (patch, relative) in [
        (
            "*** Begin Patch\n*** Delete File: app.py\n*** End Patch\n".to_string(),
            None,
        ),
        (
            format!("*** Begin Patch\n*** Delete File: {root}/src/app.py\n*** End Patch\n"),
            Some("src/app.py"),
        ),
    ] {
        let params = serde_json::json!({ "patch": patch });
        let out = patchspec_engine::dispatch::call(&patchspec_engine::dispatch::ToolCall {
            tool_name: "apply_patch",
            params: &params,
            workspace_root: dir.path(),
            session: &patchspec_engine::dispatch::Session::default(),
        });
        let error = &out.result["error"];
        let hint = error["details"]["hint"].as_str().expect("a hint");
        let message = error["message"].as_str().expect("a message");
        assert!(message.ends_with(&format!("; hint: {hint}")), "{message}");
        assert_eq!(out.error.as_deref(), Some(message));
        assert_eq!(error["details"]["relativePath"].as_str(), relative);
    }
    // The library's error keeps the bare message (the CLI prints the hint apart).
    let applied = check(
        &[("src/app.py", "x\n")],
        "*** Begin Patch\n*** Delete File: app.py\n*** End Patch\n",
        ApplyOptions::default(),
        Some(ErrorKind::NotFound),
        None,
    );
    let e = applied.unwrap_err().error;
    assert_eq!(e.message, "app.py: no such file");
    assert_eq!(e.details["similarPaths"][0]["path"], "src/app.py");
}
