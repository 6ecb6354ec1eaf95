//! patchspec-oracles: the fuzz targets' logic and oracles, as plain
//! functions of the input bytes. The cargo-fuzz binaries in
//! `fuzz/fuzz_targets/` call them (through `patchspec-fuzz`), and so does
//! `oracles/tests/fuzz_replay.rs`, replaying every checked-in seed and
//! regression on stable: a bug the fuzzer once found stays guarded without
//! nightly.
//!
//! An oracle fails by panicking with a message that says which property
//! broke and on what input. The models the differential oracles compare
//! against are in [`envelope_model`], [`apply_model`] and
//! [`write_patch_model`]: short, naive, written from `docs/clarifications.md`,
//! sharing no code with the engine but the SHA-256 helper.
#![deny(missing_docs)]

pub mod apply_model;
pub mod case;
pub mod envelope_model;
pub mod external;
pub mod memfs;
pub mod seeds;
pub mod write_patch_model;
mod write_patch_oracles;

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use patchspec_engine::envelope;
use patchspec_engine::fs::{FaultFs, Fs, FsOp, RealFs};
use patchspec_engine::journal;
use patchspec_engine::tools::tul::apply_patch::{apply_bytes, ApplyOptions};
use serde_json::Value;

use envelope_model::MPatch;
use memfs::{same_visible, snapshot, temp_files, visible, MemFs, Node};
use patchspec_gen::envelope::{ApplyInput, Scenario};

pub use write_patch_oracles::{write_patch_apply, write_patch_validate};

/// A target: its name (= the directory under `fuzz/corpus/` and
/// `fuzz/regressions/`) and its function.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, for the replay test and the tooling.
pub const TARGETS: &[Target] = &[
    ("envelope_parse", envelope_parse),
    ("envelope_apply", envelope_apply),
    ("write_patch_validate", write_patch_validate),
    ("write_patch_apply", write_patch_apply),
];

/// Show bytes for a failure message: as text when UTF-8, else escaped.
pub fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("{:?}", bytes.escape_ascii().to_string()),
    }
}

/// `envelope_parse`: raw bytes into the envelope parser.
///
/// Oracles: it never panics; an accepted envelope renders to text that parses
/// back to the same patch (so the text is a fixed point of render∘parse);
/// a rejected one names a line inside the input (at most one past the last);
/// and the engine agrees with the model parser ([`envelope_model::parse`])
/// on acceptance, on every section/hunk/line and its envelope line number,
/// and on the line of the first error.
pub fn envelope_parse(data: &[u8]) {
    let engine = envelope::parse_bytes(data);
    let model = envelope_model::parse(data);
    match (&engine, &model) {
        (Ok(p), Ok(m)) => {
            let got = MPatch::from_engine(p);
            assert_eq!(
                &got,
                m,
                "engine and model parse differently\ninput: {}",
                show(data)
            );
            let text = p.render();
            if text.as_bytes() == data {
                // The input is its own rendering: parsing it again would
                // only repeat the parse above (two accepted inputs in three
                // of a grown corpus).
                return;
            }
            let again = envelope::parse(&text).unwrap_or_else(|e| {
                panic!(
                    "rendered envelope does not parse ({e})\ninput: {}\nrendered: {text:?}",
                    show(data)
                )
            });
            assert_eq!(
                &again,
                p,
                "parse(render(p)) != p\ninput: {}\nrendered: {text:?}",
                show(data)
            );
            // That rendering is a fixed point (render(parse(render(p))) ==
            // render(p)) follows: render reads nothing that patch equality
            // ignores (spans only locate errors), so it is not re-checked.
        }
        (Err(e), Err(line)) => {
            let lines = envelope_model::line_count(data);
            assert!(
                e.line >= 1 && e.line <= lines + 1,
                "error line {} outside the input ({lines} lines): {e}\ninput: {}",
                e.line,
                show(data)
            );
            assert_eq!(
                e.line,
                *line,
                "engine and model place the first error differently (engine: {e})\ninput: {}",
                show(data)
            );
        }
        (Ok(p), Err(line)) => panic!(
            "engine accepts what the model refuses at line {line}\ninput: {}\nengine: {:#?}",
            show(data),
            MPatch::from_engine(p)
        ),
        (Err(e), Ok(m)) => panic!(
            "engine refuses ({e}) what the model accepts\ninput: {}\nmodel: {m:#?}",
            show(data)
        ),
    }
}

/// `envelope_apply`: a workspace plus an envelope, applied by the engine and
/// by the model ([`apply_model`]).
///
/// The input is either case-shaped ([`case`], the seeds extracted from the
/// corpus) or read with `arbitrary` as an [`ApplyInput`]. Oracles: never
/// panics; the error kind (and hunk index), `changedFiles` and the visible
/// tree after the call equal the model's; a refused atomic call leaves the
/// whole tree byte-for-byte unchanged (the private trash included); no
/// `*.apply-patch.tmp` file remains; an injected fault in the commit is
/// `command_failed`, fully rolled back.
pub fn envelope_apply(data: &[u8]) {
    let scenario = match case::parse(data) {
        Some(c) => match scenario_of_case(&c) {
            Some(s) => s,
            None => return,
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

fn scenario_of_case(c: &case::Case) -> Option<Scenario> {
    let params = c.params.as_object()?;
    // A string, or `{"base64": ...}` for envelope bytes that are not UTF-8.
    let patch = case::content_bytes(params.get("patch")?)?;
    let atomic = match params.get("atomic") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return None,
    };
    let mut expected = BTreeMap::new();
    if let Some(map) = params.get("expectedSha256ByPath") {
        for (k, v) in map.as_object()? {
            expected.insert(k.clone(), v.as_str()?.to_string());
        }
    }
    Some(Scenario {
        files: c.files.clone(),
        dirs: c.dirs.clone(),
        patch,
        atomic,
        expected,
        fault: None,
        real_fs: false,
    })
}

/// Materialise a workspace on the real filesystem (under `/dev/shm` when
/// there is one, to keep fsync cheap).
pub fn real_workspace(files: &[(String, Vec<u8>, u32)], dirs: &[String]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::Builder::new()
            .prefix("patchspec-fuzz")
            .tempdir_in(shm)
    } else {
        tempfile::Builder::new().prefix("patchspec-fuzz").tempdir()
    }
    .expect("create a temporary workspace");
    for d in dirs {
        std::fs::create_dir_all(dir.path().join(d)).expect("create a directory");
    }
    for (p, bytes, mode) in files {
        let path = dir.path().join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a parent directory");
        }
        std::fs::write(&path, bytes).expect("write a file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))
            .expect("chmod a file");
    }
    dir
}

/// The workspace an oracle runs the engine on: in memory, or (when the
/// input asks for it) a real temporary folder.
pub enum Workspace {
    /// The in-memory filesystem.
    Mem(MemFs),
    /// A real folder, and the engine's view of it.
    Real(tempfile::TempDir, RealFs),
}

impl Workspace {
    /// `files` and `dirs` as a workspace; `None` when their paths conflict
    /// ([`MemFs::with`] decides, for both kinds).
    pub fn new(files: &[(String, Vec<u8>, u32)], dirs: &[String], real_fs: bool) -> Option<Self> {
        let mem = MemFs::with(files, dirs)?;
        if !real_fs {
            return Some(Workspace::Mem(mem));
        }
        let tmp = real_workspace(files, dirs);
        let real = RealFs::open(tmp.path()).expect("open the temporary workspace");
        Some(Workspace::Real(tmp, real))
    }

    /// The filesystem the engine is given.
    pub fn fs(&self) -> &dyn Fs {
        match self {
            Workspace::Mem(m) => m,
            Workspace::Real(_, r) => r,
        }
    }

    /// The whole tree, byte for byte: a copy of the in-memory one, or a
    /// walk of the real one ([`snapshot`]).
    pub fn snapshot(&self) -> BTreeMap<String, Node> {
        match self {
            Workspace::Mem(m) => m.snapshot(),
            Workspace::Real(_, r) => snapshot(r),
        }
    }
}

/// Under the fuzzer, the engine diagnoses the refused hunks of one input
/// in this many.
///
/// No oracle here reads the diagnosis (docs/diagnostics.md), only its not
/// panicking, and one diagnosis costs more than a whole execution: at one
/// input in 16 the diagnoses still took 40 % of `envelope_apply`'s time
/// (docs/fuzzing.md). At one in 64 they took 7.6 % of its samples, and
/// 5 % since ASCII lines are classified without NFKC; a 60-second run
/// still selects thousands of inputs.
const DIAGNOSE_ONE_IN: u32 = 64;

/// Whether the engine diagnoses the refused hunks of this input: under the
/// fuzzer, one input in [`DIAGNOSE_ONE_IN`], chosen by a hash of the
/// envelope (an input is treated the same way every time it runs); the
/// replay of the seeds and regressions (`cargo test`, not built for
/// fuzzing) diagnoses every input.
fn diagnoses(patch: &[u8]) -> bool {
    !cfg!(fuzzing)
        || patch
            .iter()
            .fold(0u32, |h, &b| h.wrapping_mul(31) ^ u32::from(b))
            .is_multiple_of(DIAGNOSE_ONE_IN)
}

/// Run one scenario through the engine and the model and compare.
pub fn check_apply(s: &Scenario) {
    if s.files
        .iter()
        .any(|(p, _, _)| p == ".patchspec" || p.starts_with(".patchspec/"))
    {
        return;
    }
    let Some(workspace) = Workspace::new(&s.files, &s.dirs, s.real_fs) else {
        return;
    };
    let fs = workspace.fs();
    let before = workspace.snapshot();
    let model = apply_model::apply(&before, &s.patch, s.atomic, &s.expected);
    if let Some(argv) = external::executor() {
        check_external_apply(argv, s, &model);
    }
    let options = ApplyOptions {
        atomic: s.atomic,
        dry_run: false,
        expected_sha256: s.expected.clone(),
        workspace_root: None,
        diagnose: diagnoses(&s.patch),
    };
    let (applied, fired) = match s.fault {
        Some(n) => {
            let faulty = FaultFs::new(fs, FsOp::is_mutation, Some(n));
            let applied = apply_bytes(&faulty, &s.patch, &options);
            // A fault after the commit point is clean-up: the commit stands
            // and nothing is reported (commit.rs, phase 3).
            let fired = faulty.failed_entry().is_some_and(|i| {
                let cleanup = journal::after_commit_point(&faulty.log(), i);
                if cleanup {
                    stat(|| "clean-up fault");
                }
                !cleanup
            });
            (applied, fired)
        }
        None => (apply_bytes(fs, &s.patch, &options), false),
    };
    let (changed_files, error) = match &applied {
        Ok(changed) => (changed.as_slice(), None),
        Err(refusal) => (refusal.changed_files.as_slice(), Some(&refusal.error)),
    };
    let after = workspace.snapshot();
    let ctx = || {
        format!(
            "\npatch: {}\natomic: {} expected: {:?} fault: {:?} real_fs: {}\nworkspace before: {}\nengine: {:?}\nmodel: {:?} {:?}",
            show(&s.patch),
            s.atomic,
            s.expected,
            s.fault,
            s.real_fs,
            show_tree(&before),
            applied,
            model.error,
            model.changed,
        )
    };
    let temps = temp_files(&before, &after);
    assert!(temps.is_empty(), "temp files remain: {temps:?}{}", ctx());
    let engine_changed: Vec<(String, String, Option<String>)> = changed_files
        .iter()
        .map(|c| (c.operation.to_string(), c.path.clone(), c.from.clone()))
        .collect();
    let model_changed: Vec<(String, String, Option<String>)> = model
        .changed
        .iter()
        .map(|(o, p, f)| (o.to_string(), p.clone(), f.clone()))
        .collect();
    if fired {
        let e =
            error.unwrap_or_else(|| panic!("an injected commit fault was not reported{}", ctx()));
        assert_eq!(e.kind.as_str(), "command_failed", "fault kind{}", ctx());
        assert_eq!(
            e.details.get("rolledBack"),
            Some(&Value::Bool(true)),
            "a single fault must roll back completely{}",
            ctx()
        );
        if s.atomic {
            assert!(
                after == before,
                "a failed atomic commit changed the workspace: {}{}",
                show_tree(&after),
                ctx()
            );
        } else {
            let k = engine_changed.len();
            assert!(
                model.committed_sections > k,
                "the fault hit section {k}, which the model does not apply{}",
                ctx()
            );
            assert_eq!(engine_changed, model_changed[..k], "changedFiles{}", ctx());
            let want = apply_model::apply_prefix(&before, &s.patch, &s.expected, k)
                .unwrap_or_else(|| panic!("model prefix {k} fails{}", ctx()));
            assert!(
                same_visible(&after, &want),
                "after a fault in section {k}: {} expected {}{}",
                show_tree(&after),
                show_tree(&want),
                ctx()
            );
        }
        return;
    }
    let engine_err = error.map(|e| {
        (
            e.kind.as_str().to_string(),
            e.details
                .get("hunkIndex")
                .and_then(Value::as_u64)
                .map(|n| n as usize),
        )
    });
    let model_err = model
        .error
        .as_ref()
        .map(|e| (e.kind.to_string(), e.hunk_index));
    assert_eq!(
        engine_err,
        model_err,
        "engine and model disagree on the outcome{}",
        ctx()
    );
    assert_eq!(
        engine_changed,
        model_changed,
        "changedFiles differ{}",
        ctx()
    );
    stat(|| {
        format!(
            "apply {} [{}]",
            model_err.as_ref().map_or("success", |(k, _)| k.as_str()),
            envelope_model::parse(&s.patch).map_or(String::new(), |p| p
                .sections
                .iter()
                .map(|s| match &s.kind {
                    envelope_model::MKind::Add { .. } => "A".to_string(),
                    envelope_model::MKind::Delete { .. } => "D".to_string(),
                    envelope_model::MKind::Update { move_to, hunks, .. } => format!(
                        "{}{}",
                        if move_to.is_some() { "M" } else { "U" },
                        hunks.len()
                    ),
                })
                .collect::<Vec<_>>()
                .join(" "))
        )
    });
    if error.is_some() && s.atomic {
        assert!(
            after == before,
            "a refused atomic call changed the workspace: {}{}",
            show_tree(&after),
            ctx()
        );
    } else {
        assert!(
            same_visible(&after, &model.tree),
            "the workspace differs from the model's\nengine: {}\nmodel:  {}{}",
            show_tree(&visible(&after)),
            show_tree(&visible(&model.tree)),
            ctx()
        );
    }
}

/// With `PATCHSPEC_FUZZ_STATS` set, print one line per execution saying
/// what it exercised (to check that a generator reaches the interesting
/// outcomes: `sort | uniq -c` the output of a corpus replay). The line is
/// built only then: the fuzzer's executions do not pay for it.
pub fn stat<S: std::fmt::Display>(line: impl FnOnce() -> S) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("PATCHSPEC_FUZZ_STATS").is_some()) {
        eprintln!("stat: {}", line());
    }
}

/// The same call through an external executor ([`external`]), judged by
/// the same model. (Envelopes that are not UTF-8 cannot be sent.)
fn check_external_apply(argv: &[String], s: &Scenario, model: &apply_model::Outcome) {
    let (Ok(patch), None) = (std::str::from_utf8(&s.patch), s.fault) else {
        return;
    };
    let mut params = serde_json::json!({"patch": patch, "atomic": s.atomic});
    if !s.expected.is_empty() {
        params["expectedSha256ByPath"] = serde_json::json!(s.expected);
    }
    let a = external::call(argv, &s.files, &s.dirs, "apply_patch", &params);
    let what = || {
        format!(
            "\npatch: {patch:?}\nresult: {}\nmodel: {:?}",
            a.result, model.error
        )
    };
    assert_eq!(
        a.success,
        model.error.is_none(),
        "executor success{}",
        what()
    );
    if let Some(e) = &model.error {
        assert_eq!(
            a.result["error"]["kind"],
            e.kind,
            "executor error kind{}",
            what()
        );
    }
    external::assert_tree(&a.tree, &model.tree, &what());
}

/// A tree, compactly, for failure messages.
pub fn show_tree(tree: &BTreeMap<String, Node>) -> String {
    let parts: Vec<String> = tree
        .iter()
        .map(|(p, n)| match n {
            Node::Dir => format!("{p}/"),
            Node::File(b, m) => format!("{p}({m:o})={}", show(b)),
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}
