//! The `workspace_write_patch` targets: the validator alone
//! ([`write_patch_validate`]) and validator + applier over a workspace, with
//! the envelope engine as a second applier ([`write_patch_apply`]).

use arbitrary::{Arbitrary, Unstructured};
use patchspec_engine::envelope;
use patchspec_engine::fs::{FaultFs, FsOp};
use patchspec_engine::hash::sha256_hex;
use patchspec_engine::journal;
use patchspec_engine::matching;
use patchspec_engine::tools::tul::write_patch::{
    apply_batch, apply_changes, validate, ApplyError, FileStatus, LineOp, ValidatedBatch,
    SKIPPED_BECAUSE_COMMIT, SKIPPED_BECAUSE_OTHER,
};
use serde_json::{Map, Value};

use super::envelope_model;
use super::memfs::{same_visible, temp_files, valid_rel, MemFs, Node};
use super::write_patch_model::{self as wm, MApplyErr, MBatch, MChange, MFile};
use super::{case, external, show, show_tree, stat, Workspace};
use patchspec_gen::write_patch::{ApplyInput, BatchGen, Scenario};

/// The engine's validated batch in model form (IDs dropped).
fn to_model(b: &ValidatedBatch) -> MBatch {
    MBatch {
        key_label: (b.batch_key.clone(), b.batch_label.clone()),
        files: b
            .files
            .iter()
            .map(|f| MFile {
                doc_path: f.doc_path.clone(),
                sha: f.original_sha256.clone(),
                key_label: (f.file_key.clone(), f.file_label.clone()),
                changes: f
                    .changes
                    .iter()
                    .map(|c| {
                        let op = match &c.op {
                            LineOp::Insert {
                                after_line,
                                new_lines,
                            } => MChange::Insert {
                                after: *after_line,
                                lines: new_lines.clone(),
                            },
                            LineOp::Replace {
                                start_line,
                                end_line,
                                expected_original_lines,
                                new_lines,
                            } => MChange::Range {
                                start: *start_line,
                                end: *end_line,
                                expected: expected_original_lines.clone(),
                                new: Some(new_lines.clone()),
                            },
                            LineOp::Delete {
                                start_line,
                                end_line,
                                expected_original_lines,
                            } => MChange::Range {
                                start: *start_line,
                                end: *end_line,
                                expected: expected_original_lines.clone(),
                                new: None,
                            },
                        };
                        (op, c.change_key.clone(), c.description.clone())
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The validator's answer with the random IDs taken out and the errors in
/// a canonical order: what must not depend on chance or on field order.
fn normal(
    r: &Result<ValidatedBatch, Vec<patchspec_engine::tools::tul::write_patch::ValidationError>>,
) -> Value {
    match r {
        Ok(b) => {
            let mut v = b.to_json();
            strip_ids(&mut v);
            serde_json::json!({"ok": v})
        }
        Err(errors) => {
            let mut e: Vec<String> = errors.iter().map(|e| e.to_json().to_string()).collect();
            e.sort();
            serde_json::json!({"err": e})
        }
    }
}

fn strip_ids(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for k in ["batchId", "filePatchId", "changeId"] {
                o.remove(k);
            }
            o.values_mut().for_each(strip_ids);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_ids),
        _ => {}
    }
}

/// The same JSON with every object's keys in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, x) in o.iter().rev() {
                out.insert(k.clone(), reversed(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// `write_patch_validate`: a batch into the TUL-002 validator — raw bytes
/// when they are JSON, else a [`BatchGen`] read with `arbitrary`.
///
/// Oracles: never panics; validating twice gives the same answer (IDs
/// aside); reversing every object's field order gives the same answer
/// (errors compared as a set); the engine accepts exactly what the model
/// ([`wm::validate`]) accepts, with the same content; an accepted batch's
/// echo validates again to the same batch, with or without its IDs; and an
/// accepted batch applied to a file built to match its expected lines
/// applies (with its own hash) or fails only with `sha256_mismatch` (with
/// the batch's hash), equal to the model's bytes; on any other file it
/// applies or fails only with a line mismatch or an out-of-range line.
pub fn write_patch_validate(data: &[u8]) {
    let v: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(_) => {
            let mut u = Unstructured::new(data);
            match BatchGen::arbitrary(&mut u) {
                Ok(g) => g.get(),
                Err(_) => return,
            }
        }
    };
    check_validate(&v);
}

fn check_validate(v: &Value) {
    let first = validate(v);
    let n1 = normal(&first);
    assert_eq!(
        n1,
        normal(&validate(v)),
        "validation is not deterministic\nbatch: {v}"
    );
    let rev = reversed(v);
    assert_eq!(
        n1,
        normal(&validate(&rev)),
        "validation depends on field order\nbatch: {v}\nreversed: {rev}"
    );
    let model = wm::validate(v);
    let batch = match (&first, &model) {
        (Ok(b), Some(m)) => {
            assert_eq!(
                &to_model(b),
                m,
                "engine and model read the batch differently\nbatch: {v}"
            );
            b
        }
        (Err(errors), None) => {
            assert!(!errors.is_empty(), "refused without an error\nbatch: {v}");
            stat(|| format!("validate refused {}", errors[0].code.as_str()));
            return;
        }
        (Ok(b), None) => {
            panic!("engine accepts a batch the model refuses\nbatch: {v}\nengine: {b:?}")
        }
        (Err(e), Some(_)) => panic!(
            "engine refuses a batch the model accepts\nbatch: {v}\nerrors: {:?}",
            e.iter().map(|e| &e.message).collect::<Vec<_>>()
        ),
    };
    stat(|| "validate accepted");
    // The echo is a valid request for the same edits (C-wp-echo).
    let echo = batch.to_json();
    let again = validate(&echo)
        .unwrap_or_else(|e| panic!("the echo does not validate: {e:?}\necho: {echo}"));
    assert_eq!(
        to_model(&again),
        to_model(batch),
        "the echo means something else\necho: {echo}"
    );
    let mut bare = echo.clone();
    strip_ids(&mut bare);
    let again =
        validate(&bare).unwrap_or_else(|e| panic!("the echo without IDs does not validate: {e:?}"));
    assert_eq!(
        to_model(&again),
        to_model(batch),
        "the echo without IDs means something else"
    );
    let m = to_model(batch);
    for (fp, mf) in batch.files.iter().zip(&m.files) {
        let changes: Vec<MChange> = mf.changes.iter().map(|(c, _, _)| c.clone()).collect();
        // Any file: the changes apply or fail for a reason of the file.
        for other in [&b""[..], b"a\nb\n", b"x\r\ny\r\nz"] {
            let got = apply_changes(other, &fp.changes);
            let want = wm::apply(other, &changes);
            compare_apply(&got, &want, other, v);
        }
        if let Some(file) = matching_file(&changes) {
            let got = apply_changes(&file, &fp.changes);
            let want = wm::apply(&file, &changes);
            assert!(
                got.is_ok(),
                "a file matching every expected line is refused: {got:?}\nfile: {}\nbatch: {v}",
                show(&file)
            );
            compare_apply(&got, &want, &file, v);
        }
    }
    // Over a workspace: a file at each docPath matching its expected lines.
    let mut files = Vec::new();
    for f in &m.files {
        let changes: Vec<MChange> = f.changes.iter().map(|(c, _, _)| c.clone()).collect();
        match (valid_rel(&f.doc_path), matching_file(&changes)) {
            (true, Some(bytes)) => files.push((f.doc_path.clone(), bytes, 0o644)),
            _ => return,
        }
    }
    let Some(fs) = MemFs::with(&files, &[]) else {
        return;
    };
    let before = fs.snapshot();
    // Only docPaths that name their file plainly (the path guard's other
    // rules are write_patch_apply's business).
    if m.files
        .iter()
        .any(|f| wm::locate(&before, &f.doc_path).as_deref() != Ok(f.doc_path.as_str()))
    {
        return;
    }
    let report = apply_batch(&fs, batch);
    for (i, f) in report.files.iter().enumerate() {
        match &f.status {
            FileStatus::Failed(e) => assert_eq!(
                e.code(),
                "sha256_mismatch",
                "file {i} of a matching workspace fails: {e:?}\nbatch: {v}"
            ),
            FileStatus::Skipped(_) => {}
            FileStatus::Applied { .. } => {}
        }
    }
    assert!(
        report.success() || fs.snapshot() == before,
        "a failed batch changed files"
    );
    let mut with_hashes = batch.clone();
    for (fp, (_, bytes, _)) in with_hashes.files.iter_mut().zip(&files) {
        fp.original_sha256 = sha256_hex(bytes);
    }
    let fs = MemFs::with(&files, &[]).expect("same workspace as above");
    let report = apply_batch(&fs, &with_hashes);
    assert!(
        report.success(),
        "a batch with matching hashes and lines fails: {report:?}\nbatch: {v}"
    );
    let tree = fs.snapshot();
    for (f, (path, bytes, _)) in m.files.iter().zip(&files) {
        let changes: Vec<MChange> = f.changes.iter().map(|(c, _, _)| c.clone()).collect();
        let want = wm::apply(bytes, &changes).expect("the model applies a matching file");
        assert_eq!(
            tree.get(path),
            Some(&Node::File(want.clone(), 0o644)),
            "{path} after the batch, expected {}\nbatch: {v}",
            show(&want)
        );
    }
    stat(|| "validate applied");
}

fn compare_apply(
    got: &Result<Vec<u8>, ApplyError>,
    want: &Result<Vec<u8>, MApplyErr>,
    file: &[u8],
    batch: &Value,
) {
    let same = match (got, want) {
        (Ok(a), Ok(b)) => a == b,
        (
            Err(ApplyError::RangeOutOfBounds { change_index, .. }),
            Err(MApplyErr::OutOfBounds(i)),
        ) => change_index == i,
        (
            Err(ApplyError::LineMismatch {
                change_index, line, ..
            }),
            Err(MApplyErr::Mismatch(i, l)),
        ) => change_index == i && line == l,
        _ => false,
    };
    assert!(
        same,
        "apply_changes and the model differ on {}\nengine: {got:?}\nmodel:  {want:?}\nbatch: {batch}",
        show(file)
    );
}

/// A file in which every range's lines are its expected lines (and other
/// lines are filler), long enough for every change; `None` when that would
/// be too long to bother.
fn matching_file(changes: &[MChange]) -> Option<Vec<u8>> {
    let n = changes
        .iter()
        .map(|c| match c {
            MChange::Insert { after, .. } => *after,
            MChange::Range { end, .. } => *end,
        })
        .max()
        .unwrap_or(0);
    if n > 5000 {
        return None;
    }
    let mut lines: Vec<String> = (1..=n).map(|i| format!("~{i}")).collect();
    for c in changes {
        if let MChange::Range {
            start, expected, ..
        } = c
        {
            for (j, e) in expected.iter().enumerate() {
                lines[(*start as usize) - 1 + j] = e.clone();
            }
        }
    }
    let mut out = Vec::new();
    if lines.first().is_some_and(|l| l.starts_with('\u{feff}')) {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    for l in &lines {
        out.extend_from_slice(l.as_bytes());
        // A line whose content ends in `\r` needs a CRLF ending to keep it.
        out.extend_from_slice(if l.ends_with('\r') { b"\r\n" } else { b"\n" });
    }
    Some(out)
}

/// `write_patch_apply`: a workspace and a batch planned against it
/// (case-shaped seeds, or an [`ApplyInput`] read with `arbitrary`).
///
/// Oracles: never panics; validation agrees with the model; every file's
/// outcome (applied with its new SHA-256 / failed with its code / skipped)
/// and the tree after equal the model's ([`wm::apply_batch`]); a failed
/// batch leaves the tree byte-for-byte unchanged, an injected commit fault
/// too (every file skipped, `rolledBack`); no temp file remains; and each
/// applied file's edit, written as an envelope (one whole-file hunk, and
/// hunks with `context` lines around each change), gives the same bytes
/// through the envelope engine (or, when the envelope form is not unique,
/// the same refusal as the envelope model).
pub fn write_patch_apply(data: &[u8]) {
    let scenario = match case::parse(data) {
        Some(c) => Scenario {
            files: c.files,
            dirs: c.dirs,
            batch: c.params,
            fault: None,
            real_fs: false,
            context: 1,
        },
        None => {
            let mut u = Unstructured::new(data);
            match ApplyInput::arbitrary(&mut u) {
                Ok(input) => input.scenario(),
                Err(_) => return,
            }
        }
    };
    check_apply(&scenario);
}

fn check_apply(s: &Scenario) {
    let engine = validate(&s.batch);
    let model = wm::validate(&s.batch);
    if let Some(argv) = external::executor() {
        check_external(argv, s, model.as_ref());
    }
    let (batch, mbatch) = match (engine, model) {
        (Ok(b), Some(m)) => {
            assert_eq!(
                to_model(&b),
                m,
                "engine and model read the batch differently\nbatch: {}",
                s.batch
            );
            (b, m)
        }
        (Err(e), None) => {
            stat(|| format!("apply invalid {}", e[0].code.as_str()));
            return;
        }
        (e, m) => panic!(
            "validation differs\nbatch: {}\nengine: {:?}\nmodel: {m:?}",
            s.batch,
            e.map_err(|e| e.iter().map(|e| e.message.clone()).collect::<Vec<_>>())
        ),
    };
    let Some(workspace) = Workspace::new(&s.files, &s.dirs, s.real_fs) else {
        return;
    };
    let fs = workspace.fs();
    let before = workspace.snapshot();
    let (want, want_tree) = wm::apply_batch(&before, &mbatch);
    let (report, fired) = match s.fault {
        Some(n) => {
            let faulty = FaultFs::new(fs, FsOp::is_mutation, Some(n));
            let r = apply_batch(&faulty, &batch);
            // A fault after the commit point is clean-up: the commit stands
            // and nothing is reported (commit.rs, phase 3).
            let fired = faulty.failed_entry().is_some_and(|i| {
                let cleanup = journal::after_commit_point(&faulty.log(), i);
                if cleanup {
                    stat(|| "clean-up fault");
                }
                !cleanup
            });
            (r, fired)
        }
        None => (apply_batch(fs, &batch), false),
    };
    let after = workspace.snapshot();
    let ctx = || {
        format!(
            "\nbatch: {}\nworkspace: {}\nengine: {report:?}\nmodel: {want:?}",
            s.batch,
            show_tree(&before)
        )
    };
    let temps = temp_files(&before, &after);
    assert!(temps.is_empty(), "temp files remain: {temps:?}{}", ctx());
    if fired {
        let c = report
            .commit_failure
            .as_ref()
            .unwrap_or_else(|| panic!("an injected fault was not reported{}", ctx()));
        assert!(c.rolled_back, "a single fault must roll back{}", ctx());
        assert!(
            report
                .files
                .iter()
                .all(|f| f.status == FileStatus::Skipped(SKIPPED_BECAUSE_COMMIT)),
            "after a commit failure every file is skipped{}",
            ctx()
        );
        assert!(
            want.iter().all(Result::is_ok),
            "the model fails where the engine got to commit{}",
            ctx()
        );
        assert!(
            after == before,
            "a failed commit changed the workspace: {}{}",
            show_tree(&after),
            ctx()
        );
        stat(|| "apply fault");
        return;
    }
    assert!(
        report.commit_failure.is_none(),
        "commit failure without a fault{}",
        ctx()
    );
    let all_ok = want.iter().all(Result::is_ok);
    assert_eq!(
        report.files.len(),
        want.len(),
        "one outcome per file{}",
        ctx()
    );
    for (i, (got, want)) in report.files.iter().zip(&want).enumerate() {
        let same = match (&got.status, want) {
            (FileStatus::Applied { new_sha256 }, Ok((path, bytes))) => {
                all_ok
                    && *new_sha256 == sha256_hex(bytes)
                    && got.path.as_deref() == Some(path.as_str())
            }
            (FileStatus::Skipped(why), Ok(_)) => !all_ok && *why == SKIPPED_BECAUSE_OTHER,
            (FileStatus::Failed(f), Err(code)) => f.code() == *code,
            _ => false,
        };
        assert!(
            same,
            "file {i}: engine {:?}, model {want:?}{}",
            got.status,
            ctx()
        );
    }
    if all_ok {
        assert!(
            same_visible(&after, &want_tree),
            "tree after: {}\nexpected:   {}{}",
            show_tree(&after),
            show_tree(&want_tree),
            ctx()
        );
        stat(|| format!("apply success files={}", want.len()));
        for (f, r) in mbatch.files.iter().zip(&want) {
            let Ok((path, bytes)) = r else { continue };
            if let Some(Node::File(original, _)) = before.get(path) {
                let changes: Vec<MChange> = f.changes.iter().map(|(c, _, _)| c.clone()).collect();
                envelope_differential(original, &changes, bytes, s.context, path);
            }
        }
    } else {
        assert!(
            after == before,
            "a refused batch changed the workspace: {}{}",
            show_tree(&after),
            ctx()
        );
        let code = want
            .iter()
            .find_map(|r| r.as_ref().err())
            .copied()
            .unwrap_or_default();
        stat(|| format!("apply refused {code}"));
    }
}

/// The same batch through an external executor ([`external`]), judged by
/// the same model: `success`, each failing file's `code` by `fileIndex`,
/// `result: null` exactly when validation failed, and the tree.
fn check_external(argv: &[String], s: &Scenario, model: Option<&MBatch>) {
    if s.fault.is_some() {
        return;
    }
    let Some(mem) = MemFs::with(&s.files, &s.dirs) else {
        return;
    };
    let before = mem.snapshot();
    let a = external::call(argv, &s.files, &s.dirs, "workspace_write_patch", &s.batch);
    let what = || format!("\nbatch: {}\nresult: {}", s.batch, a.result);
    let Some(batch) = model else {
        assert!(!a.success, "executor accepts an invalid batch{}", what());
        assert!(
            a.result["result"].is_null(),
            "an invalid batch has result: null{}",
            what()
        );
        external::assert_tree(&a.tree, &before, &what());
        return;
    };
    let (want, tree) = wm::apply_batch(&before, batch);
    let ok = want.iter().all(Result::is_ok);
    assert_eq!(a.success, ok, "executor success{}\nmodel: {want:?}", what());
    for (i, w) in want.iter().enumerate() {
        if let Err(code) = w {
            let found = a.result["errors"].as_array().is_some_and(|errors| {
                errors
                    .iter()
                    .any(|e| e["fileIndex"] == i && e["code"] == *code)
            });
            assert!(
                found,
                "executor does not report {code} for file {i}{}",
                what()
            );
        }
    }
    external::assert_tree(&a.tree, &tree, &what());
}

/// One line of an envelope hunk: prefix and text.
type HLine = (char, String);

/// The hunk lines of the changes, over original lines `lo..=hi` (1-based)
/// and the inserts after lines `lo - 1..=hi`; `None` when a line in the
/// window is not UTF-8 (an envelope cannot name it).
fn hunk_lines(
    orig: &[String],
    valid: &[bool],
    changes: &[&MChange],
    lo: u64,
    hi: u64,
) -> Option<Vec<HLine>> {
    let mut out = Vec::new();
    for k in lo.saturating_sub(1)..=hi {
        if k >= lo && k >= 1 {
            let i = (k - 1) as usize;
            if !valid[i] {
                return None;
            }
            let range = changes.iter().find_map(|c| match c {
                MChange::Range {
                    start, end, new, ..
                } if (*start..=*end).contains(&k) => Some((*start, new)),
                _ => None,
            });
            match range {
                Some((start, new)) => {
                    out.push(('-', orig[i].clone()));
                    if start == k {
                        out.extend(new.iter().flatten().map(|l| ('+', l.clone())));
                    }
                }
                None => out.push((' ', orig[i].clone())),
            }
        }
        for c in changes {
            if let MChange::Insert { after, lines } = c {
                if *after == k {
                    out.extend(lines.iter().map(|l| ('+', l.clone())));
                }
            }
        }
    }
    Some(out)
}

fn render(hunks: &[Vec<HLine>]) -> String {
    let mut text = String::from("*** Begin Patch\n*** Update File: f\n");
    for h in hunks {
        text.push_str("@@\n");
        for (p, l) in h {
            text.push(*p);
            text.push_str(l);
            text.push('\n');
        }
    }
    text.push_str("*** End Patch\n");
    text
}

/// The same edit through the envelope engine: a whole-file hunk must give
/// `expected`; hunks with `context` lines of context must too when the
/// envelope model says they locate uniquely, else be refused alike.
fn envelope_differential(
    original: &[u8],
    changes: &[MChange],
    expected: &[u8],
    context: usize,
    path: &str,
) {
    let file = envelope_model::split_lines(original);
    let n = file.lines.len() as u64;
    let orig: Vec<String> = file
        .lines
        .iter()
        .map(|(c, _)| String::from_utf8_lossy(c).into_owned())
        .collect();
    let valid: Vec<bool> = file
        .lines
        .iter()
        .map(|(c, _)| std::str::from_utf8(c).is_ok())
        .collect();
    let all: Vec<&MChange> = changes.iter().collect();
    let run = |hunks: &[Vec<HLine>]| {
        let text = render(hunks);
        let patch = envelope::parse(&text)
            .unwrap_or_else(|e| panic!("envelope form does not parse: {e}\n{text}"));
        let Some(envelope::SectionKind::Update { hunks: h, .. }) =
            patch.sections.first().map(|s| &s.kind)
        else {
            panic!("envelope form has no update section\n{text}");
        };
        let engine = matching::apply_hunks(original, h);
        let model = envelope_model::parse(text.as_bytes()).ok().and_then(|m| {
            match m.sections.into_iter().next() {
                Some(envelope_model::MSection {
                    kind: envelope_model::MKind::Update { hunks, .. },
                    ..
                }) => Some(envelope_model::apply_hunks(original, &hunks)),
                _ => None,
            }
        });
        (text, engine, model)
    };
    let ctx = |text: &str| {
        format!(
            "\nfile {path}: {}\nchanges: {changes:?}\nwrite_patch result: {}\nenvelope:\n{text}",
            show(original),
            show(expected)
        )
    };
    // One hunk over the whole file.
    if let Some(whole) = hunk_lines(&orig, &valid, &all, 1, n) {
        let (text, engine, model) = run(std::slice::from_ref(&whole));
        assert_eq!(
            model,
            Some(Ok(expected.to_vec())),
            "envelope model differs from the write_patch result{}",
            ctx(&text)
        );
        assert_eq!(
            engine.as_deref().ok(),
            Some(expected),
            "envelope engine ({engine:?}) differs from write_patch{}",
            ctx(&text)
        );
        stat(|| "apply envelope whole-file agrees");
    }
    // Hunks with `context` lines around each group of changes.
    let c = context as u64;
    let window = |ch: &MChange| match ch {
        MChange::Insert { after, .. } => ((after + 1).saturating_sub(c).max(1), (after + c).min(n)),
        MChange::Range { start, end, .. } => (start.saturating_sub(c).max(1), (end + c).min(n)),
    };
    let mut groups: Vec<(u64, u64, Vec<&MChange>)> = Vec::new();
    for ch in changes {
        let (lo, hi) = window(ch);
        match groups.last_mut() {
            Some((_, ghi, members)) if lo <= *ghi + 1 => {
                *ghi = (*ghi).max(hi);
                members.push(ch);
            }
            _ => groups.push((lo, hi, vec![ch])),
        }
    }
    let mut hunks = Vec::new();
    for (lo, hi, members) in &groups {
        match hunk_lines(&orig, &valid, members, *lo, *hi) {
            Some(h) => hunks.push(h),
            None => return,
        }
    }
    let (text, engine, model) = run(&hunks);
    match model {
        Some(Ok(bytes)) => {
            assert_eq!(
                bytes,
                expected,
                "envelope model (context {c}) differs from the write_patch result{}",
                ctx(&text)
            );
            assert_eq!(
                engine.as_deref().ok(),
                Some(expected),
                "envelope engine ({engine:?}, context {c}) differs from write_patch{}",
                ctx(&text)
            );
            stat(|| "apply envelope context agrees");
        }
        Some(Err((i, kind))) => {
            let e = engine.as_ref().err().unwrap_or_else(|| {
                panic!(
                    "envelope engine applies what its model refuses ({kind:?}){}",
                    ctx(&text)
                )
            });
            let same = e.hunk_index == i
                && matches!(
                    (&e.failure, kind),
                    (
                        matching::HunkFailure::ContextNotFound,
                        envelope_model::HunkErr::NotFound
                    ) | (
                        matching::HunkFailure::MultipleMatches { .. },
                        envelope_model::HunkErr::Multiple
                    ) | (
                        matching::HunkFailure::Overlapping { .. },
                        envelope_model::HunkErr::Overlapping
                    )
                );
            assert!(
                same,
                "envelope engine {e:?} vs model {kind:?} at hunk {i}{}",
                ctx(&text)
            );
            stat(|| "apply envelope context refused alike");
        }
        None => panic!(
            "the envelope model cannot parse the envelope form{}",
            ctx(&text)
        ),
    }
}
