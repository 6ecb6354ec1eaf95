//! The checks that keep ARCHITECTURE.md true (`tests/architecture.rs`):
//! the module graphs of the engine, the runner, the store and the
//! generators and the crate graph have no cycle, arrows follow the layer
//! lists ARCHITECTURE.md gives, every file it names exists and every source
//! file is named there, and no source file outside tests passes
//! [`MAX_FILE_LINES`].
//!
//! No dependencies: it reads the tree (`git ls-files`) and parses just
//! enough Rust ([`source`]) to find the paths each file names.

#![deny(missing_docs)]

pub mod graph;
pub mod layers;
pub mod modules;
pub mod names;
pub mod source;

use std::path::{Path, PathBuf};
use std::process::Command;

use graph::{Graph, Site};

/// No source file outside tests is longer (ARCHITECTURE.md, "Size limits").
pub const MAX_FILE_LINES: usize = 1_500;

/// The library crates whose module graphs are checked: their `src/` folders
/// and names.
pub const CRATES: &[(&str, &str)] = &[
    ("engine/src", "engine"),
    ("conformance/src", "conformance"),
    ("store/src", "store"),
    ("gen/src", "gen"),
];

/// The repository's root (this crate sits one folder below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// Every file git tracks, relative to the root, with whether it is
/// executable (`git ls-files -s`: mode 100755).
pub fn tracked_files(repo: &Path) -> Result<Vec<(String, bool)>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["ls-files", "-s", "-z"])
        .output()
        .map_err(|e| format!("git ls-files: {e} (the checks read the tree git tracks)"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            // A file deleted in the work tree but not yet from the index.
            repo.join(path)
                .exists()
                .then(|| (path.to_owned(), meta.starts_with("100755")))
        })
        .collect())
}

/// The crate graph: every package of the tree (a `Cargo.toml` with a
/// `[package]` name) and an arrow for each `patchspec-*` dependency (normal,
/// dev or build) and each `#[path = "…"]` that reaches into another
/// package's folder.
pub fn crate_graph(repo: &Path, files: &[String]) -> std::io::Result<Graph> {
    let mut packages: Vec<(String, String)> = Vec::new(); // (folder, name)
    for f in files.iter().filter(|f| f.ends_with("Cargo.toml")) {
        let text = std::fs::read_to_string(repo.join(f))?;
        if let Some(name) = package_name(&text) {
            let dir = f
                .strip_suffix("Cargo.toml")
                .unwrap_or("")
                .trim_end_matches('/');
            packages.push((dir.to_owned(), name));
        }
    }
    let owner = |file: &str| {
        packages
            .iter()
            .filter(|(dir, _)| dir.is_empty() || file.starts_with(&format!("{dir}/")))
            .max_by_key(|(dir, _)| dir.len())
            .map(|(_, name)| name.clone())
    };
    let mut g = Graph::default();
    for (dir, name) in &packages {
        g.node(name);
        let manifest = if dir.is_empty() {
            "Cargo.toml".to_owned()
        } else {
            format!("{dir}/Cargo.toml")
        };
        let text = std::fs::read_to_string(repo.join(&manifest))?;
        for (line, dep, kind) in patchspec_dependencies(&text) {
            let site = Site {
                file: manifest.clone(),
                line,
                what: format!("{kind} {dep}"),
            };
            g.arrow(name, &dep, site);
        }
    }
    for f in files.iter().filter(|f| f.ends_with(".rs")) {
        let text = std::fs::read_to_string(repo.join(f))?;
        let Some(from) = owner(f) else { continue };
        for (i, line) in text.lines().enumerate() {
            let Some(target) = line
                .trim()
                .strip_prefix("#[path = \"")
                .and_then(|r| r.split('"').next())
            else {
                continue;
            };
            let base = Path::new(f).parent().unwrap_or(Path::new(""));
            let joined = normalize(&base.join(target));
            if let Some(to) = owner(&joined).filter(|to| *to != from) {
                let site = Site {
                    file: f.clone(),
                    line: i + 1,
                    what: format!("#[path = \"{target}\"]"),
                };
                g.arrow(&from, &to, site);
            }
        }
    }
    Ok(g)
}

/// `a/b/../c` → `a/c` (no file system access).
fn normalize(p: &Path) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.iter().filter_map(|c| c.to_str()) {
        match c {
            "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    parts.join("/")
}

fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(v) = line.strip_prefix("name") {
                let v = v.trim_start().strip_prefix('=')?.trim().trim_matches('"');
                return Some(v.to_owned());
            }
        }
    }
    None
}

/// `(line, package, "dependency"|"dev-dependency"|"build-dependency")` for
/// each `patchspec-*` key in a dependency table of a manifest.
fn patchspec_dependencies(manifest: &str) -> Vec<(usize, String, &'static str)> {
    let mut kind = None;
    let mut out = Vec::new();
    for (i, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']');
            let last = table.rsplit('.').next().unwrap_or(table);
            kind = match last {
                "dependencies" => Some("dependency"),
                "dev-dependencies" => Some("dev-dependency"),
                "build-dependencies" => Some("build-dependency"),
                _ => None,
            };
            // `[workspace.dependencies]` declares, it does not depend.
            if table.starts_with("workspace.") {
                kind = None;
            }
            continue;
        }
        let Some(kind) = kind else { continue };
        let key = line.split(['=', '.', ' ']).next().unwrap_or("");
        if key.starts_with("patchspec-") {
            out.push((i + 1, key.to_owned(), kind));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_of_every_kind_are_found() {
        let manifest = "[package]\nname = \"a\"\n[dependencies]\npatchspec-engine.workspace = true\nserde = \"1\"\n\
                        [dev-dependencies]\npatchspec-gen = { path = \"../gen\" }\n[workspace.dependencies]\npatchspec-store = { path = \"store\" }\n";
        assert_eq!(package_name(manifest).as_deref(), Some("a"));
        assert_eq!(
            patchspec_dependencies(manifest),
            [
                (4, "patchspec-engine".to_owned(), "dependency"),
                (7, "patchspec-gen".to_owned(), "dev-dependency")
            ]
        );
    }

    #[test]
    fn paths_are_normalized() {
        assert_eq!(
            normalize(Path::new("engine/tests/../../fuzz/src/oracles/mod.rs")),
            "fuzz/src/oracles/mod.rs"
        );
    }
}
