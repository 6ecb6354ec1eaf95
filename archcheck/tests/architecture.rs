//! ARCHITECTURE.md against the tree: every file it names exists, every
//! source file is named, no source file outside tests is too long, and the
//! module and crate graphs have no cycle and follow the layer lists.

use std::collections::BTreeSet;
use std::path::Path;

use patchspec_archcheck::graph::Cycle;
use patchspec_archcheck::{
    crate_graph, layers, modules, names, repo_root, tracked_files, CRATES, MAX_FILE_LINES,
};

/// The folders whose `.rs` files are source (and must be named).
const RUST_FOLDERS: &[&str] = &[
    "engine/",
    "conformance/",
    "store/",
    "gen/",
    "benches/",
    "fuzz/",
    "archcheck/",
];

/// The folders whose scripts must be named (executables, and files of the
/// script languages).
const SCRIPT_FOLDERS: &[&str] = &["scripts/", "adapters/"];
const SCRIPT_EXTENSIONS: &[&str] = &[".rs", ".py", ".sh", ".mjs", ".js"];

/// Input data that happens to be Rust or a script: the diagnosis tests'
/// files (named as a folder in ARCHITECTURE.md), never compiled.
const FIXTURES: &[&str] = &["engine/tests/diagnostics/base/"];

fn tree() -> (std::path::PathBuf, Vec<(String, bool)>) {
    let repo = repo_root();
    let files = tracked_files(&repo).unwrap_or_else(|e| panic!("{e}"));
    (repo, files)
}

fn is_source(path: &str, executable: bool) -> bool {
    if FIXTURES.iter().any(|f| path.starts_with(f)) {
        return false;
    }
    let rust = path.ends_with(".rs") && RUST_FOLDERS.iter().any(|d| path.starts_with(d));
    let script = SCRIPT_FOLDERS.iter().any(|d| path.starts_with(d))
        && (executable || SCRIPT_EXTENSIONS.iter().any(|e| path.ends_with(e)));
    rust || script
}

/// A test file: under a `tests/` folder, or a module named `tests`.
fn is_test(path: &str) -> bool {
    path.split('/').any(|p| p == "tests") || path.ends_with("/tests.rs")
}

#[test]
fn architecture_md_names_every_source_file_and_only_files_that_exist() {
    let (repo, files) = tree();
    let doc = std::fs::read_to_string(repo.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let found = names::names(&doc, &paths);
    let mut faults = Vec::new();
    for n in found.iter().filter(|n| n.files.is_empty()) {
        faults.push(format!(
            "ARCHITECTURE.md:{}: `{}` names no file or folder of the tree",
            n.line, n.text
        ));
    }
    let named: BTreeSet<&String> = found.iter().flat_map(|n| &n.files).collect();
    for (path, executable) in &files {
        if is_source(path, *executable) && !named.contains(path) {
            faults.push(format!("{path} is not named in ARCHITECTURE.md"));
        }
    }
    assert!(
        faults.is_empty(),
        "{} faults:\n{}",
        faults.len(),
        faults.join("\n")
    );
}

#[test]
fn no_source_file_outside_tests_is_over_the_limit() {
    let (repo, files) = tree();
    let mut faults = Vec::new();
    for (path, _) in files
        .iter()
        .filter(|(p, _)| p.ends_with(".rs") && !is_test(p))
    {
        let text = std::fs::read(repo.join(path)).expect("a tracked file");
        let lines = text.iter().filter(|&&b| b == b'\n').count();
        if lines > MAX_FILE_LINES {
            faults.push(format!("{path}: {lines} lines (at most {MAX_FILE_LINES})"));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

fn report(title: &str, cycles: &[Cycle], out: &mut String) {
    for c in cycles {
        out.push_str(&format!("{title}: {c}"));
    }
}

/// The module graphs (engine, runner, store, generators) and the crate
/// graph: no cycle, and every arrow down a layer list where ARCHITECTURE.md
/// gives one. Prints every cycle, path by path.
#[test]
fn no_cycles_and_arrows_follow_the_layers() {
    let (repo, files) = tree();
    let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let doc = std::fs::read_to_string(repo.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lists = layers::layer_lists(&doc);
    let mut out = String::new();
    let (mut cycles, mut modules_in_cycles, mut arrows_in_cycles) = (0, 0, 0);
    let mut layer_faults = Vec::new();
    for (src, name) in CRATES {
        let m = modules::scan_crate(&repo, src, &paths).expect("the crate's files");
        let found = m.sibling_graph(name).cycles();
        cycles += found.len();
        modules_in_cycles += found.iter().map(|c| c.nodes.len()).sum::<usize>();
        arrows_in_cycles += found.iter().map(|c| c.arrows.len()).sum::<usize>();
        report("module graph", &found, &mut out);
        let dir = Path::new(src)
            .parent()
            .and_then(Path::to_str)
            .unwrap_or(src);
        if let Some(list) = lists.get(dir) {
            layer_faults.extend(layers::layer_faults(name, &m, list));
        }
    }
    let crates = crate_graph(&repo, &paths).expect("the manifests").cycles();
    cycles += crates.len();
    report("crate graph", &crates, &mut out);
    for f in &layer_faults {
        out.push_str(&format!("layers: {f}\n"));
    }
    let summary = format!(
        "{cycles} cycles ({modules_in_cycles} modules, {arrows_in_cycles} arrows in the module graphs; {} in the crate graph), {} layer faults",
        crates.len(),
        layer_faults.len()
    );
    println!("{out}{summary}");
    assert!(
        cycles == 0 && layer_faults.is_empty(),
        "{summary} (each printed above)"
    );
}
