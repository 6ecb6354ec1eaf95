//! The cost of the failure-path diagnosis (issue 10, clarifications
//! C-diag-bounds), benign and hostile, on 10 MB files.
//!
//! Each case is one file and two envelopes of about the same size: one that
//! applies and one that is refused. Group `diagnose/<case>` times, in memory
//! (no disk, so the diagnosis is not hidden under I/O):
//! - `apply_ok`: parse + apply of the envelope that applies;
//! - `apply_refused`: parse + the refused apply + its diagnosis, what
//!   `apply_patch` does on that failure;
//! - `diagnosis`: the diagnosis alone (the matcher's error given).
//!
//! `apply_refused − apply_ok` is what a refusal costs beyond a success;
//! `diagnosis` is the diagnosis's own share. Target (issue 10): a few tens
//! of milliseconds for the diagnosis on a 10 MB file. Under `cargo test`
//! (criterion's test mode) the files are small and each case runs once and
//! checks the cause the diagnosis names; nothing asserts a duration.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use patchspec_benches::support::RunMode;
use patchspec_engine::diagnose::{self, Diagnosis};
use patchspec_engine::envelope::{self, Hunk, SectionKind};
use patchspec_engine::matching::{apply_hunks, HunkError, HunkFailure};

/// One case: a file, an envelope that applies, one that is refused, and
/// the cause the diagnosis must name.
struct Case {
    name: &'static str,
    file: Vec<u8>,
    ok: String,
    refused: String,
    cause: &'static str,
}

/// The sizes: 10 MB when measuring; small under `cargo test`.
struct Scale {
    bytes: usize,
    /// Lines of the long hunks (10,000 when measuring).
    long: usize,
    /// Lines of the alternating-whitespace hunks (2,000 when measuring).
    alternating: usize,
}

impl Scale {
    fn of(mode: RunMode) -> Scale {
        match mode {
            RunMode::Measure => Scale {
                bytes: 10 * 1024 * 1024,
                long: 10_000,
                alternating: 2_000,
            },
            RunMode::Test => Scale {
                bytes: 256 * 1024,
                long: 1_000,
                alternating: 200,
            },
        }
    }
}

/// A file of about `bytes` bytes made of `line(i)` lines.
fn file_of(bytes: usize, line: impl Fn(usize) -> String) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 256);
    let mut i = 0;
    while out.len() < bytes {
        out.extend_from_slice(line(i).as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out
}

fn lines_of(file: &[u8]) -> Vec<String> {
    file.strip_suffix(b"\n")
        .unwrap_or(file)
        .split(|&b| b == b'\n')
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// An envelope of one hunk: `old` as context, one added line, optionally
/// anchored at the end of the file.
fn envelope_of(old: &[String], end_of_file: bool) -> String {
    let mut p = String::from("*** Begin Patch\n*** Update File: f\n@@\n");
    for l in old {
        p.push(' ');
        p.push_str(l);
        p.push('\n');
    }
    p.push_str("+added\n");
    if end_of_file {
        p.push_str("*** End of File\n");
    }
    p.push_str("*** End Patch\n");
    p
}

/// The envelope that applies to `file`: its last `k` lines as context,
/// anchored at the end (unique even in a file of identical lines).
fn ok_envelope(file: &[u8], k: usize) -> String {
    let lines = lines_of(file);
    let k = k.clamp(1, lines.len());
    envelope_of(&lines[lines.len() - k..], true)
}

fn code_line(i: usize) -> String {
    format!("    let value_{i} = compute(input_{i}, {i}) + offset; // step {i}")
}

fn cases(s: &Scale) -> Vec<Case> {
    let mut out = Vec::new();
    let mut case = |name, file: Vec<u8>, old: Vec<String>, cause| {
        let ok = ok_envelope(&file, old.len());
        out.push(Case {
            name,
            ok,
            refused: envelope_of(&old, false),
            file,
            cause,
        });
    };

    // Realistic code, every line distinct.
    let code = file_of(s.bytes, code_line);
    let n = lines_of(&code).len();
    let at = n - 100;
    let mut old: Vec<String> = (at..at + 5).map(code_line).collect();
    old[2].push(' ');
    case(
        "code_5_lines_trailing_space",
        code.clone(),
        old,
        "trailing_whitespace",
    );
    let typo = vec![code_line(at).replace("compute", "compte")];
    case("code_1_line_typo", code.clone(), typo, "content_differs");
    let unrelated = (0..5).map(|i| format!("fn unrelated_{i}() {{}}")).collect();
    case(
        "code_5_lines_nothing_similar",
        code.clone(),
        unrelated,
        "no_similar_region",
    );
    let off = (0..s.long)
        .map(|i| code_line(i).replace("; //", ";  //"))
        .collect();
    case(
        "code_long_hunk_every_line_off",
        code,
        off,
        "inner_whitespace",
    );

    // Hostile: a file of identical lines.
    let same = file_of(s.bytes, |_| "x = 1".to_string());
    case(
        "identical_long_hunk_trailing_space",
        same.clone(),
        vec!["x = 1 ".to_string(); s.long],
        "trailing_whitespace",
    );
    case(
        "identical_long_hunk_absent",
        same.clone(),
        vec!["y = 2".to_string(); s.long],
        "no_similar_region",
    );
    let mut almost = vec!["x = 1".to_string(); s.long];
    almost[s.long - 1] = "x = 2".into();
    case(
        "identical_long_hunk_last_line_differs",
        same.clone(),
        almost,
        "content_differs",
    );
    case(
        "identical_3_lines_multiple_matches",
        same,
        vec!["x = 1".to_string(); 3],
        "ambiguous_context",
    );

    // Hostile for the 4-gram fallback: every line shares all but one
    // gram with the edit's only line.
    let eight = file_of(s.bytes, |_| "abcdefgh".to_string());
    case(
        "identical_1_line_typo",
        eight,
        vec!["abcdefgX".to_string()],
        "content_differs",
    );

    // Hostile: one-byte lines (5M of them when measuring), and one line.
    let tiny = file_of(s.bytes, |_| "x".to_string());
    case(
        "one_byte_lines_long_hunk_trailing_space",
        tiny,
        vec!["x ".to_string(); s.long],
        "trailing_whitespace",
    );
    let one = vec![b'a'; s.bytes];
    let mut one_line = String::from_utf8(one.clone()).expect("ASCII");
    one_line.push(' ');
    case(
        "one_line_file_trailing_space",
        one,
        vec![one_line],
        "trailing_whitespace",
    );

    // Hostile: whitespace variants of one line alternate, so every start
    // matches loosely; the hunk alternates them the other way.
    let variants = [
        "    total = price * count",
        "\ttotal = price * count",
        "    total = price * count  ",
    ];
    let alternating = file_of(s.bytes, |i| variants[i % 3].to_string());
    // The variants in the other order: no start matches exactly.
    let shifted = (0..s.alternating)
        .map(|i| variants[(2 * i) % 3].to_string())
        .collect();
    case(
        "alternating_whitespace_hunk",
        alternating,
        shifted,
        "indentation",
    );
    let wide = [
        "    total = “price” × count",
        "\ttotal = \u{a0}“price” × count",
        "    total = “price” × count  ",
    ];
    let alternating = file_of(s.bytes, |i| wide[i % 3].to_string());
    let shifted = (0..s.alternating)
        .map(|i| wide[(2 * i) % 3].to_string())
        .collect();
    case(
        "alternating_whitespace_hunk_non_ascii",
        alternating,
        shifted,
        // Rows tie between four causes; the table's order puts this first.
        "unicode_lookalike",
    );

    // Non-ASCII text: accented Latin and CJK.
    let accents = file_of(s.bytes, |i| {
        format!("    // café résumé naïve coöperate {i} “quoted” — dash")
    });
    let na = lines_of(&accents).len();
    let old = (na - 50..na - 46)
        .map(|i| format!("    // café résumé naïve coöperate {i} \"quoted\" - dash"))
        .collect();
    case(
        "accented_4_lines_straight_quotes",
        accents,
        old,
        "unicode_lookalike",
    );
    let cjk = file_of(s.bytes, |i| {
        format!("    // 設定ファイルを読み込む処理 {i} 「引用」（全角）")
    });
    let nc = lines_of(&cjk).len();
    let old = (nc - 50..nc - 46)
        .map(|i| format!("    // 設定ファイルを読み込む処理 {i} 「引用」(全角)"))
        .collect();
    case(
        "cjk_4_lines_full_width_parentheses",
        cjk.clone(),
        old,
        "unicode_lookalike",
    );
    // Both passes over non-ASCII text, nothing found.
    case(
        "cjk_nothing_similar",
        cjk,
        vec!["fn unrelated_thing() {}".to_string()],
        "no_similar_region",
    );
    out
}

/// The hunks of the one Update section of an envelope.
fn hunks<'a>(patch: &'a envelope::Patch<'a>) -> &'a [Hunk<'a>] {
    match &patch.sections[0].kind {
        SectionKind::Update { hunks, .. } => hunks,
        other => panic!("a generated envelope is one Update section, not {other:?}"),
    }
}

/// The diagnosis `apply_patch` computes for a refused hunk.
fn diagnosis(file: &[u8], hunks: &[Hunk<'_>], err: &HunkError) -> Diagnosis {
    match err.failure {
        HunkFailure::MultipleMatches { count: total, .. } => {
            diagnose::multiple_matches(file, hunks, err.hunk_index, total)
        }
        _ => diagnose::hunk_not_found(file, hunks, err.hunk_index, false),
    }
}

/// Parse and apply; on a refusal, diagnose (as `apply_patch` does).
fn apply(file: &[u8], text: &str) -> Result<Vec<u8>, Box<Diagnosis>> {
    let patch = envelope::parse(text).expect("a generated envelope parses");
    let hunks = hunks(&patch);
    apply_hunks(file, hunks).map_err(|e| Box::new(diagnosis(file, hunks, &e)))
}

fn benches(c: &mut Criterion) {
    let mode = RunMode::from_args();
    let scale = Scale::of(mode);
    for case in cases(&scale) {
        // Checked once before timing: the one envelope applies, the other
        // is refused with the expected cause. A mismatch under `cargo test`
        // fails the run; when measuring it is reported and the case timed.
        let applied = apply(&case.file, &case.ok);
        let refused = apply(&case.file, &case.refused);
        let problem = match (&applied, &refused) {
            (Err(d), _) => Some(format!("the envelope that should apply was refused: {d:?}")),
            (_, Ok(_)) => Some("the envelope that should be refused applied".to_string()),
            (_, Err(d)) if d.cause().as_str() != case.cause => Some(format!(
                "cause {} (line {:?}), expected {}",
                d.cause().as_str(),
                d.line,
                case.cause
            )),
            _ => None,
        };
        match (problem, mode) {
            (Some(p), RunMode::Test) => panic!("{}: {p}", case.name),
            (Some(p), RunMode::Measure) => eprintln!("NOTE {}: {p}", case.name),
            (None, _) => {}
        }
        let patch = envelope::parse(&case.refused).expect("a generated envelope parses");
        let refused_hunks = hunks(&patch);
        let Err(error) = apply_hunks(&case.file, refused_hunks) else {
            continue;
        };

        let mut group = c.benchmark_group(format!("diagnose/{}", case.name));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        group.throughput(Throughput::Bytes(case.file.len() as u64));
        let size = patchspec_benches::size_label(case.file.len());
        group.bench_function(BenchmarkId::new("apply_ok", &size), |b| {
            b.iter(|| apply(black_box(&case.file), black_box(&case.ok)))
        });
        group.bench_function(BenchmarkId::new("apply_refused", &size), |b| {
            b.iter(|| apply(black_box(&case.file), black_box(&case.refused)))
        });
        group.bench_function(BenchmarkId::new("diagnosis", &size), |b| {
            b.iter(|| diagnosis(black_box(&case.file), refused_hunks, &error))
        });
        group.finish();
    }
}

/// The agent hint of a `not_found` (docs/diagnostics.md, "Hints on other
/// refusals"): the bounded similar-path walk on a real workspace of
/// `dirs` folders of `files` files each (30,000 files when measuring, more
/// than the walk's 20,000-entry bound), alone and inside the refused apply.
/// The file asked for is in the last folder, under a leading folder the
/// patch left out; when measuring, the walk stops before it.
fn hint_benches(c: &mut Criterion) {
    use patchspec_engine::fs::RealFs;
    use patchspec_engine::hints::{similar_paths, Looking, MAX_WALK_ENTRIES};
    use patchspec_engine::tools::tul::apply_patch::{self, ApplyOptions};

    let mode = RunMode::from_args();
    let (dirs, files) = match mode {
        RunMode::Measure => (100, 300),
        RunMode::Test => (10, 20),
    };
    let dir = tempfile::tempdir().expect("a scratch workspace");
    for d in 0..dirs {
        let folder = dir.path().join(format!("pkg{d:03}"));
        std::fs::create_dir(&folder).expect("create a folder");
        for f in 0..files {
            std::fs::write(folder.join(format!("mod{f:03}.py")), "x = 1\n").expect("write a file");
        }
    }
    let last = format!("pkg{:03}", dirs - 1);
    std::fs::write(dir.path().join(&last).join("app.py"), "x = 1\n").expect("write the target");
    let fs = RealFs::open(dir.path()).expect("open the workspace");
    let patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n";
    let found = similar_paths(&fs, "app.py", Looking::File);
    let entries = dirs * (files + 1);
    match mode {
        RunMode::Test => assert_eq!(
            found.paths.first().map(|p| p.path.clone()),
            Some(format!("{last}/app.py")),
            "the hint names the file under its folder"
        ),
        RunMode::Measure => assert_eq!(
            found.cut_short,
            entries > MAX_WALK_ENTRIES,
            "the walk stops at its bound"
        ),
    }
    let mut group = c.benchmark_group("hints/not_found");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let label = format!("{entries}-entries");
    group.bench_function(BenchmarkId::new("similar_paths", &label), |b| {
        b.iter(|| similar_paths(&fs, black_box("app.py"), Looking::File))
    });
    group.bench_function(BenchmarkId::new("apply_refused", &label), |b| {
        b.iter(|| apply_patch::apply(&fs, black_box(patch), &ApplyOptions::default()))
    });
    group.finish();
}

criterion_group!(diagnose_benches, benches, hint_benches);
criterion_main!(diagnose_benches);
