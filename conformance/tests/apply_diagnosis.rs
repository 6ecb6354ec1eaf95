//! The human rendering of a diagnosis by `patchspec apply` (issue 10),
//! through the real binary: what a person sees on standard error when an
//! edit is refused. The format is not stable; these tests pin what it must
//! say (every field of the diagnosis that helps), not its layout.

use std::path::Path;
use std::process::{Command, Stdio};

const PATCHSPEC: &str = env!("CARGO_BIN_EXE_patchspec");

/// Write `files` into a fresh workspace, run `patchspec apply` on `patch`
/// with `extra` arguments; (exit code, stderr). Asserts nothing was written.
fn apply(files: &[(&str, &str)], patch: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).expect("write a file");
    }
    let envelope = dir.path().join("patch.txt");
    std::fs::write(&envelope, patch).expect("write the envelope");
    let out = Command::new(PATCHSPEC)
        .arg("apply")
        .arg(&envelope)
        .arg("--root")
        .arg(dir.path())
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run patchspec apply");
    for (path, text) in files {
        let now = std::fs::read_to_string(dir.path().join(path)).expect("read back");
        assert_eq!(&now, text, "{path} changed though the edit was refused");
    }
    assert_no_temp_files(dir.path());
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_no_temp_files(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the workspace")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "stray files: {names:?}"
    );
}

fn envelope(path: &str, body: &str) -> String {
    format!("*** Begin Patch\n*** Update File: {path}\n@@\n{body}*** End Patch\n")
}

#[test]
fn multiple_matches_print_the_total_and_blank_lines_visibly() {
    // 30 copies of a block; the hunk matches each. Only the first has a
    // blank line below the match: it tells that match apart.
    let mut text = String::new();
    for i in 0..30 {
        let below = if i == 0 { "" } else { "    more();" };
        text.push_str(&format!("fn f{i}() {{\n    step();\n{below}\n}}\n"));
    }
    let (code, err) = apply(
        &[("a.rs", &text)],
        &envelope("a.rs", "-    step();\n+    go();\n"),
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("30 matches (the first 20 listed)"), "{err}");
    assert!(err.contains("… and 10 more"), "{err}");
    assert!(err.contains("below: line 3 (blank)"), "{err}");
    assert!(err.contains("above: line 1 | fn f0() {"), "{err}");
}

#[test]
fn already_applied_does_not_count_found_lines() {
    let text = "def f():\n    return 2\n\n\ndef g():\n    pass\n";
    let patch = envelope("a.py", " def f():\n-    return 1\n+    return 2\n");
    let (code, err) = apply(&[("a.py", text)], &patch, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cause: already_applied"), "{err}");
    assert!(err.contains("already applied at line 1–2"), "{err}");
    assert!(!err.contains("expected lines found"), "{err}");
}

#[test]
fn long_comparisons_say_what_is_left_out_and_the_hash_is_reported() {
    // 60 lines with trailing spaces in the file; the hunk has none.
    let lines: Vec<String> = (0..60).map(|i| format!("    let v{i} = {i};")).collect();
    let text: String = lines.iter().map(|l| format!("{l}  \n")).collect();
    let body: String = lines.iter().map(|l| format!(" {l}\n")).collect::<String>() + "+x\n";
    let sha = patchspec_engine::hash::sha256_hex(text.as_bytes());
    let (code, err) = apply(
        &[("a.rs", &text)],
        &envelope("a.rs", &body),
        &["--expect-sha", &format!("a.rs={sha}")],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cause: trailing_whitespace"), "{err}");
    assert!(err.contains("hash: verified"), "{err}");
    assert!(err.contains("… 20 more rows"), "{err}");
    assert!(!err.contains("1 equal line(s)"), "{err}");
}

#[test]
fn other_candidates_are_listed() {
    // Two near-identical regions; the hunk misquotes one line of both.
    let text = "fn a() {\n    let total = price * quantity;\n    report(total);\n}\n\nfn b() {\n    let total = price * quantity;\n    report(total);\n}\n";
    let patch = envelope(
        "a.rs",
        "     let total = price * quantity;\n-    report(totl);\n+    log(total);\n",
    );
    let (code, err) = apply(&[("a.rs", text)], &patch, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cause: content_differs"), "{err}");
    assert!(err.contains("nearest: line 2–3"), "{err}");
    assert!(err.contains("other candidates: line 7"), "{err}");
}
