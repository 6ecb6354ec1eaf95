//! The module graph of a library crate and the crate graph of the
//! workspace.
//!
//! A module is a file under `src/` (`src/a/b.rs` and `src/a/b/mod.rs` are
//! `a::b`; `src/lib.rs` is the root); `src/main.rs` and `src/bin/` are crates
//! of their own and are left out. An arrow goes from a module to the module
//! a path it names resolves to (the longest prefix that is a module).
//!
//! Cycles are looked for among siblings: an arrow between `a::x::…` and
//! `a::y::…` counts as `a::x → a::y`, and an arrow between a module and its
//! own ancestor or descendant (a parent's `pub use child::…`, a child's
//! `super::Item`) is how a module and its parts are built, not a layer
//! crossing, and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::graph::{Graph, Site};
use crate::source::{code_only, named_paths};

/// A module's path, `::`-joined (`""` for the crate root).
pub type ModulePath = String;

/// An arrow between two modules of one crate, where a path makes it.
#[derive(Clone, Debug)]
pub struct Arrow {
    /// The module whose file names the path.
    pub from: ModulePath,
    /// The module the path resolves to.
    pub to: ModulePath,
    /// Where.
    pub site: Site,
}

/// One library crate's modules and the arrows between them.
#[derive(Debug, Default)]
pub struct CrateModules {
    /// Every module, and its file relative to the repository root.
    pub modules: BTreeMap<ModulePath, String>,
    /// The arrows between modules that are not ancestor and descendant.
    pub arrows: Vec<Arrow>,
    /// The other crates the library names (`patchspec_engine` …), with where.
    pub crates: Vec<(String, Site)>,
}

/// The module a file under `src/` is (`None` for `main.rs` and `src/bin/`).
pub fn module_of(rel_to_src: &str) -> Option<ModulePath> {
    if rel_to_src == "main.rs" || rel_to_src.starts_with("bin/") {
        return None;
    }
    let stem = rel_to_src.strip_suffix(".rs")?;
    let stem = stem
        .strip_suffix("/mod")
        .or_else(|| (stem == "lib").then_some(""))
        .unwrap_or(stem);
    Some(stem.replace('/', "::"))
}

fn segments(m: &str) -> Vec<&str> {
    if m.is_empty() {
        Vec::new()
    } else {
        m.split("::").collect()
    }
}

/// Whether `a` is `b`, or one is an ancestor of the other.
pub fn in_line(a: &str, b: &str) -> bool {
    let (a, b) = (segments(a), segments(b));
    a.starts_with(&b) || b.starts_with(&a)
}

/// Scan the crate whose `src/` folder is `src` (`files`: its `.rs` files,
/// relative to the repository root `repo`, e.g. `engine/src/fs.rs`).
pub fn scan_crate(repo: &Path, src: &str, files: &[String]) -> std::io::Result<CrateModules> {
    let mut out = CrateModules::default();
    let prefix = format!("{src}/");
    for file in files {
        let Some(rel) = file.strip_prefix(&prefix) else {
            continue;
        };
        if let Some(m) = module_of(rel) {
            out.modules.insert(m, file.clone());
        }
    }
    let modules: BTreeSet<&str> = out.modules.keys().map(String::as_str).collect();
    for (from, file) in &out.modules {
        let text = std::fs::read_to_string(repo.join(file))?;
        let here = segments(from);
        for named in named_paths(&code_only(&text)) {
            let site = Site {
                file: file.clone(),
                line: named.line,
                what: named.segments.join("::"),
            };
            let mut absolute: Vec<&str> = match named.segments[0].as_str() {
                "crate" => Vec::new(),
                "self" => here.clone(),
                "super" => {
                    let ups = named.segments.iter().take_while(|s| *s == "super").count();
                    here[..here.len().saturating_sub(ups)].to_vec()
                }
                other => {
                    out.crates.push((other.to_owned(), site));
                    continue;
                }
            };
            absolute.extend(
                named
                    .segments
                    .iter()
                    .map(String::as_str)
                    .skip_while(|s| matches!(*s, "crate" | "self" | "super")),
            );
            // The longest prefix that is a module (the rest is an item).
            let to = (0..=absolute.len())
                .rev()
                .map(|k| absolute[..k].join("::"))
                .find(|m| modules.contains(m.as_str()))
                .unwrap_or_default();
            if !in_line(from, &to) {
                out.arrows.push(Arrow {
                    from: from.clone(),
                    to,
                    site,
                });
            }
        }
    }
    Ok(out)
}

impl CrateModules {
    /// The graph cycles are looked for in: each arrow lifted to the two
    /// siblings under the modules' deepest common ancestor, named
    /// `crate_name::module`.
    pub fn sibling_graph(&self, crate_name: &str) -> Graph {
        let mut g = Graph::default();
        let name = |m: &str| match m {
            "" => crate_name.to_owned(),
            m => format!("{crate_name}::{m}"),
        };
        for m in self.modules.keys() {
            g.node(&name(m));
        }
        for arrow in &self.arrows {
            let (a, b) = (segments(&arrow.from), segments(&arrow.to));
            let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            let from = a[..=common].join("::");
            let to = b[..=common].join("::");
            g.arrow(&name(&from), &name(&to), arrow.site.clone());
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_map_to_modules() {
        assert_eq!(module_of("lib.rs").as_deref(), Some(""));
        assert_eq!(module_of("fs.rs").as_deref(), Some("fs"));
        assert_eq!(module_of("tools/mod.rs").as_deref(), Some("tools"));
        assert_eq!(
            module_of("tools/tul/apply_patch.rs").as_deref(),
            Some("tools::tul::apply_patch")
        );
        assert_eq!(module_of("main.rs"), None);
        assert_eq!(module_of("bin/x.rs"), None);
    }

    #[test]
    fn ancestors_and_descendants_are_in_line() {
        assert!(in_line("a", "a::b"));
        assert!(in_line("a::b", "a"));
        assert!(in_line("", "a"));
        assert!(!in_line("a::b", "a::c"));
    }

    #[test]
    fn arrows_are_lifted_to_siblings() {
        let dir = std::env::temp_dir().join(format!("archcheck-{}", std::process::id()));
        let src = dir.join("c/src");
        std::fs::create_dir_all(src.join("a")).unwrap();
        std::fs::write(src.join("lib.rs"), "mod a; mod b;").unwrap();
        std::fs::write(src.join("a/mod.rs"), "mod x; mod y; pub use x::X;").unwrap();
        std::fs::write(src.join("a/x.rs"), "use super::y::Y; use crate::b;").unwrap();
        std::fs::write(
            src.join("a/y.rs"),
            "fn f() { super::x::g(); super::super::b::h(); }",
        )
        .unwrap();
        std::fs::write(src.join("b.rs"), "use crate::a::x::X;").unwrap();
        let files: Vec<String> = [
            "c/src/lib.rs",
            "c/src/a/mod.rs",
            "c/src/a/x.rs",
            "c/src/a/y.rs",
            "c/src/b.rs",
        ]
        .map(String::from)
        .to_vec();
        let m = scan_crate(&dir, "c/src", &files).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let arrows: Vec<String> = m
            .arrows
            .iter()
            .map(|a| format!("{} → {}", a.from, a.to))
            .collect();
        assert_eq!(
            arrows,
            [
                "a::x → a::y",
                "a::x → b",
                "a::y → a::x",
                "a::y → b",
                "b → a::x"
            ]
        );
        let cycles = m.sibling_graph("c").cycles();
        let found: Vec<Vec<String>> = cycles.into_iter().map(|c| c.nodes).collect();
        assert_eq!(found, [vec!["c::a", "c::b"], vec!["c::a::x", "c::a::y"]]);
    }
}
