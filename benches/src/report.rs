//! Turns criterion's saved estimates into the tables of
//! docs/performance.md: every engine figure next to the floor measured in
//! the same run, the peers as ratios, the scaling ratios, and the targets.
//!
//! Input: `<criterion dir>/**/new/benchmark.json` (the id and throughput of
//! one benchmark) and the `estimates.json` beside it (the median is used:
//! it is the figure least moved by the other work a shared machine does).
//! The benchmark ids are the ones the bench binaries register:
//!
//! | group | function / value | what |
//! |---|---|---|
//! | `floor` | `copy/<size>`, `disk/<size>` | plain copy; read + SHA-256 + write temp + fsync + rename |
//! | `envelope_in_memory` | `<size>/<hunks>` | parse + plan + apply, bytes in, bytes out |
//! | `envelope_plan_only` | `<size>/<hunks>` | plan + apply of a parsed envelope |
//! | `envelope_on_disk` | `<size>/<hunks>` | the whole `apply_patch` on a workspace, with stale check |
//! | `line_patch_in_memory` | `<size>/<changes>` | SHA check + `apply_changes` |
//! | `line_patch_on_disk` | `<size>/<changes>` | the whole `apply_batch` on a workspace |
//! | `parse` | `envelope/<size>`, `case/<size>x<hunks>` | `envelope::parse` of a large multi-section envelope, and of the envelope of one `envelope_*` case |
//! | `validate` | `changes/<n>` | `write_patch::validate` of one batch |
//! | `peers` | `<tool>/<size>x<hunks>` | one whole process: `patchspec`, `floor`, `gnu_patch`, `git_apply`, `codex`, and the peers followed by an fsync (`*_fsync`) |
//!
//! The output is Markdown and human-facing: its layout is not stable.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use serde_json::Value;

/// The peers bench's tools other than `patchspec`, in column order, with
/// their column labels.
const PEER_COLUMNS: [(&str, &str); 7] = [
    ("floor", "floor (read + SHA-256 + write + fsync + rename)"),
    ("gnu_patch", "GNU `patch`"),
    ("gnu_patch_fsync", "`patch` + fsync"),
    ("git_apply", "`git apply`"),
    ("git_apply_fsync", "`git apply` + fsync"),
    ("codex", "codex `apply_patch`"),
    ("codex_fsync", "codex + fsync"),
];

/// Where the `peers` bench records a tool it timed once, not by criterion
/// (inside the criterion directory): `<id with / as __>.json` holding
/// `{"full_id": "...", "seconds": 12.3, "runs": 1}`.
pub const SINGLE_RUNS_DIR: &str = "peers-single-runs";

/// One measured benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Median time of one iteration, in nanoseconds.
    pub median_ns: f64,
    /// The fastest sample's time per iteration, in nanoseconds: the figure
    /// least inflated by other work on a shared machine.
    pub best_ns: f64,
    /// Bytes (decimal throughput) or elements processed per iteration.
    pub throughput: Option<u64>,
    /// Timed once (a tool too slow for criterion's samples), not a median.
    pub single_run: bool,
}

/// Every measurement found, by full id (`group/function/value`).
pub type Measurements = BTreeMap<String, Measurement>;

/// Read every `new/benchmark.json` + `new/estimates.json` pair under `dir`,
/// then the single runs of [`SINGLE_RUNS_DIR`] (which win over an older
/// criterion figure of the same id).
pub fn load(dir: &Path) -> io::Result<Measurements> {
    let mut out = Measurements::new();
    visit(dir, &mut out)?;
    if let Ok(entries) = std::fs::read_dir(dir.join(SINGLE_RUNS_DIR)) {
        for entry in entries {
            let text = std::fs::read(entry?.path())?;
            let Ok(v) = serde_json::from_slice::<Value>(&text) else {
                continue;
            };
            let (Some(id), Some(secs)) = (v["full_id"].as_str(), v["seconds"].as_f64()) else {
                continue;
            };
            out.insert(
                id.to_string(),
                Measurement {
                    median_ns: secs * 1e9,
                    best_ns: secs * 1e9,
                    throughput: None,
                    single_run: true,
                },
            );
        }
    }
    Ok(out)
}

fn visit(dir: &Path, out: &mut Measurements) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            if let Some((id, m)) = read_pair(&path) {
                out.insert(id, m);
            }
        } else {
            visit(&path, out)?;
        }
    }
    Ok(())
}

fn read_pair(dir: &Path) -> Option<(String, Measurement)> {
    let read = |name: &str| -> Option<Value> {
        let text = std::fs::read(dir.join(name)).ok()?;
        serde_json::from_slice(&text).ok()
    };
    let bench = read("benchmark.json")?;
    let estimates = read("estimates.json")?;
    let id = bench.get("full_id")?.as_str()?.to_string();
    let median_ns = estimates.get("median")?.get("point_estimate")?.as_f64()?;
    let best_ns = read("sample.json")
        .and_then(|sample| {
            let iters = sample.get("iters")?.as_array()?.clone();
            let times = sample.get("times")?.as_array()?.clone();
            iters
                .iter()
                .zip(&times)
                .filter_map(|(n, t)| Some(t.as_f64()? / n.as_f64()?))
                .reduce(f64::min)
        })
        .unwrap_or(median_ns);
    let throughput = bench
        .get("throughput")
        .and_then(Value::as_object)
        .and_then(|t| t.values().next())
        .and_then(Value::as_u64);
    Some((
        id,
        Measurement {
            median_ns,
            best_ns,
            throughput,
            single_run: false,
        },
    ))
}

/// A duration for humans: `812 µs`, `41.3 ms`, `1.27 s`.
pub fn human_time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.1} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Bytes per second for humans, decimal units: `1.42 GB/s`, `310 MB/s`.
pub fn human_rate(bytes: u64, ns: f64) -> String {
    let per_s = bytes as f64 / (ns / 1e9);
    if per_s >= 1e9 {
        format!("{:.2} GB/s", per_s / 1e9)
    } else {
        format!("{:.0} MB/s", per_s / 1e6)
    }
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}x", a / b)
}

/// The figures of one `<group>/<size>/<count>` family, by (size, count).
fn family(m: &Measurements, group: &str) -> BTreeMap<(u64, u64), (String, Measurement)> {
    let prefix = format!("{group}/");
    m.iter()
        .filter_map(|(id, v)| {
            let rest = id.strip_prefix(&prefix)?;
            let (size, count) = rest.split_once('/')?;
            let bytes = crate::support::parse_size(size)? as u64;
            Some(((bytes, count.parse().ok()?), (rest.to_string(), v.clone())))
        })
        .collect()
}

/// Render the Markdown tables (engine vs floor, peers, parse/validate,
/// scaling, targets) for the measurements in `m`.
pub fn render(m: &Measurements) -> String {
    let mut out = String::new();
    let floor = |kind: &str, size: u64| {
        m.get(&format!(
            "floor/{kind}/{}",
            crate::size_label(size as usize)
        ))
    };

    let _ = writeln!(out, "### The floor\n");
    let _ = writeln!(
        out,
        "| size | in-memory copy: median | best | read + SHA-256 + write + fsync + rename: median | best |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    let mut sizes: Vec<u64> = family(m, "envelope_in_memory")
        .keys()
        .map(|k| k.0)
        .collect();
    sizes.dedup();
    for &size in &sizes {
        let cell = |kind| {
            floor(kind, size).map_or("– | –".to_string(), |f: &Measurement| {
                format!(
                    "{} ({}) | {}",
                    human_time(f.median_ns),
                    human_rate(size, f.median_ns),
                    human_time(f.best_ns)
                )
            })
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            crate::size_label(size as usize),
            cell("copy"),
            cell("disk")
        );
    }

    let engine_groups = [
        (
            "envelope_in_memory",
            "copy",
            "envelope, in memory (parse + plan + apply)",
        ),
        (
            "envelope_plan_only",
            "copy",
            "envelope, plan + apply only (parsed beforehand)",
        ),
        (
            "envelope_on_disk",
            "disk",
            "envelope, full atomic apply on disk",
        ),
        (
            "line_patch_in_memory",
            "copy",
            "line patch, in memory (SHA check + apply)",
        ),
        (
            "line_patch_on_disk",
            "disk",
            "line patch, full atomic apply on disk",
        ),
    ];
    for (group, floor_kind, title) in engine_groups {
        let fam = family(m, group);
        if fam.is_empty() {
            continue;
        }
        let on_disk = floor_kind == "disk";
        let _ = writeln!(out, "\n### {title} (`{group}`)\n");
        if on_disk && group.starts_with("envelope") {
            let _ = writeln!(
                out,
                "| case | median | best | file throughput | ÷ floor | ÷ floor, best | ÷ GNU patch | ÷ git apply |\n|---|---|---|---|---|---|---|---|"
            );
        } else {
            let _ = writeln!(
                out,
                "| case | median | best | file throughput | ÷ floor | ÷ floor, best |\n|---|---|---|---|---|---|"
            );
        }
        for (&(size, count), (name, v)) in &fam {
            let f =
                floor(floor_kind, size).map_or("–".into(), |f| ratio(v.median_ns, f.median_ns));
            let fb = floor(floor_kind, size).map_or("–".into(), |f| ratio(v.best_ns, f.best_ns));
            let mut row = format!(
                "| {} | {} | {} | {} | {f} | {fb} |",
                name.replace('/', " × "),
                human_time(v.median_ns),
                human_time(v.best_ns),
                human_rate(size, v.median_ns)
            );
            if on_disk && group.starts_with("envelope") {
                for tool in ["gnu_patch", "git_apply"] {
                    let cell = peer(m, tool, size, count)
                        .map_or("–".into(), |p| ratio(v.median_ns, p.median_ns));
                    let _ = write!(row, " {cell} |");
                }
            }
            let _ = writeln!(out, "{row}");
        }
    }

    let _ = writeln!(out, "\n### Parse and validate\n");
    let _ = writeln!(out, "| case | median | throughput |\n|---|---|---|");
    for (id, v) in m
        .iter()
        .filter(|(id, _)| id.starts_with("parse/") || id.starts_with("validate/"))
    {
        let rate = match (id.starts_with("parse/"), v.throughput) {
            (true, Some(b)) => human_rate(b, v.median_ns),
            (false, Some(n)) => format!("{:.2} M changes/s", n as f64 / (v.median_ns / 1e9) / 1e6),
            _ => "–".into(),
        };
        let _ = writeln!(out, "| {id} | {} | {rate} |", human_time(v.median_ns));
    }

    peers_table(m, &mut out);

    let _ = writeln!(out, "\n### Scaling\n");
    let _ = writeln!(
        out,
        "| group | change | time ratio | target |\n|---|---|---|---|"
    );
    for group in ["envelope_in_memory", "envelope_on_disk"] {
        let fam = family(m, group);
        for (&(size, count), (_, v)) in &fam {
            if let Some((_, small)) = fam.get(&(size / 10, count)) {
                let _ = writeln!(
                    out,
                    "| {group} | {} → {} bytes, {count} hunks | {} | ≤ 11x |",
                    crate::size_label(size as usize / 10),
                    crate::size_label(size as usize),
                    ratio(v.median_ns, small.median_ns)
                );
            }
            if let Some((_, few)) = fam.get(&(size, count / 100)) {
                let _ = writeln!(
                    out,
                    "| {group} | {} → {count} hunks, {} | {} | ≤ 1.5x |",
                    count / 100,
                    crate::size_label(size as usize),
                    ratio(v.median_ns, few.median_ns)
                );
            }
        }
    }
    out
}

/// The peers' table: `patchspec apply` and every peer timed on some case,
/// whole processes on the same files.
fn peers_table(m: &Measurements, out: &mut String) {
    let peer_cases: BTreeMap<(u64, u64), ()> = m
        .keys()
        .filter_map(|id| {
            let case = id.strip_prefix("peers/")?.split_once('/')?.1;
            let (size, count) = case.split_once('x')?;
            Some((
                (
                    crate::support::parse_size(size)? as u64,
                    count.parse().ok()?,
                ),
                (),
            ))
        })
        .collect();
    if !peer_cases.is_empty() {
        // Every tool that was timed on some case, in this order; a column
        // for its time and one for `patchspec apply` divided by it.
        let columns: Vec<(&str, &str)> = PEER_COLUMNS
            .iter()
            .copied()
            .filter(|(tool, _)| {
                peer_cases
                    .keys()
                    .any(|&(size, count)| peer(m, tool, size, count).is_some())
            })
            .collect();
        let _ = writeln!(out, "\n### Peers: whole processes on the same files\n");
        let mut header = String::from("| case | `patchspec apply` |");
        let mut rule = String::from("|---|---|");
        for (_, label) in &columns {
            let _ = write!(header, " {label} |");
            rule.push_str("---|");
        }
        for (_, label) in &columns {
            let _ = write!(header, " ÷ {label} |");
            rule.push_str("---|");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for &(size, count) in peer_cases.keys() {
            let get = |tool| peer(m, tool, size, count);
            let t = |v: Option<&Measurement>| {
                v.map_or("–".into(), |v| match v.single_run {
                    true => format!("{} (1 run)", human_time(v.median_ns)),
                    false => human_time(v.median_ns),
                })
            };
            let ours = get("patchspec");
            let r = |b: Option<&Measurement>| match (ours, b) {
                (Some(a), Some(b)) => ratio(a.median_ns, b.median_ns),
                _ => "–".into(),
            };
            let mut row = format!(
                "| {} × {count} | {} |",
                crate::size_label(size as usize),
                t(ours)
            );
            for (tool, _) in &columns {
                let _ = write!(row, " {} |", t(get(tool)));
            }
            for (tool, _) in &columns {
                let _ = write!(row, " {} |", r(get(tool)));
            }
            let _ = writeln!(out, "{row}");
        }
    }
}

/// A peer's measurement of the case of `count` edits to a file of `size` bytes.
fn peer<'m>(m: &'m Measurements, tool: &str, size: u64, count: u64) -> Option<&'m Measurement> {
    m.get(&format!(
        "peers/{tool}/{}x{count}",
        crate::size_label(size as usize)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ns: f64, bytes: u64) -> Measurement {
        Measurement {
            median_ns: ns,
            best_ns: ns * 0.9,
            throughput: Some(bytes),
            single_run: false,
        }
    }

    #[test]
    fn ratios_are_taken_against_the_floor_and_the_peers() {
        let mut ms = Measurements::new();
        ms.insert("floor/copy/10MB".into(), m(1e6, 10_000_000));
        ms.insert("floor/disk/10MB".into(), m(1e8, 10_000_000));
        ms.insert("envelope_in_memory/10MB/100".into(), m(5e6, 10_000_000));
        ms.insert("envelope_on_disk/10MB/100".into(), m(1.5e8, 10_000_000));
        ms.insert("peers/gnu_patch/10MBx100".into(), m(3e8, 0));
        ms.insert("peers/patchspec/10MBx100".into(), m(1.5e8, 0));
        ms.insert("peers/floor/10MBx100".into(), m(1e8, 0));
        ms.insert("peers/codex/10MBx100".into(), m(3e8, 0));
        let text = render(&ms);
        assert!(
            text.contains("| 10MB × 100 | 5.0 ms | 4.5 ms | 2.00 GB/s | 5.00x | 5.00x |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| 10MB × 100 | 150.0 ms | 135.0 ms | 67 MB/s | 1.50x | 1.50x | 0.50x | – |"
            ),
            "{text}"
        );
        // Only the tools that were timed get columns: floor, patch, codex.
        assert!(
            text.contains("| 10MB × 100 | 150.0 ms | 100.0 ms | 300.0 ms | 300.0 ms | 1.50x | 0.50x | 0.50x |"),
            "{text}"
        );
        assert!(!text.contains("`git apply`"), "{text}");
    }

    #[test]
    fn criterion_output_is_read_with_its_best_sample() {
        let dir = crate::support::scratch_dir().expect("temp dir");
        let new = dir.path().join("floor/copy/1MB/new");
        std::fs::create_dir_all(&new).expect("mkdir");
        let write = |name: &str, text: &str| std::fs::write(new.join(name), text).expect("write");
        write(
            "benchmark.json",
            r#"{"group_id":"floor","function_id":"copy","value_str":"1MB","throughput":{"BytesDecimal":1000000},"full_id":"floor/copy/1MB"}"#,
        );
        write("estimates.json", r#"{"median":{"point_estimate":2000.0}}"#);
        write(
            "sample.json",
            r#"{"sampling_mode":"Flat","iters":[2.0,4.0],"times":[5000.0,6000.0]}"#,
        );
        let ms = load(dir.path()).expect("load");
        assert_eq!(
            ms["floor/copy/1MB"],
            Measurement {
                median_ns: 2000.0,
                best_ns: 1500.0,
                throughput: Some(1_000_000),
                single_run: false,
            }
        );
    }

    #[test]
    fn single_runs_are_loaded_and_marked() {
        let dir = crate::support::scratch_dir().expect("temp dir");
        let runs = dir.path().join(SINGLE_RUNS_DIR);
        std::fs::create_dir_all(&runs).expect("mkdir");
        std::fs::write(
            runs.join("peers__git_apply__10MBx100.json"),
            r#"{"full_id": "peers/git_apply/10MBx100", "seconds": 57.5, "runs": 1}"#,
        )
        .expect("write");
        let ms = load(dir.path()).expect("load");
        let git = &ms["peers/git_apply/10MBx100"];
        assert!(git.single_run);
        assert_eq!(git.median_ns, 57.5e9);
        assert!(render(&ms).contains("57.50 s (1 run)"), "{}", render(&ms));
    }

    #[test]
    fn durations_and_rates_read_naturally() {
        assert_eq!(human_time(812_000.0), "812 µs");
        assert_eq!(human_time(41_300_000.0), "41.3 ms");
        assert_eq!(human_time(1_270_000_000.0), "1.27 s");
        assert_eq!(human_rate(100_000_000, 50e6), "2.00 GB/s");
        assert_eq!(human_rate(1_000_000, 10e6), "100 MB/s");
    }
}
