//! The one path guard: turns a path from a tool call into a resolved
//! workspace-relative path, or says which safety rule it breaks.
//!
//! Every tool goes through [`resolve`]. The rules, one error variant each:
//! empty, NUL byte, absolute (`/x`, `C:\x`, `C:x`, `\\server\share`, `//x`),
//! `..` that climbs above the root, a symlink (at any component,
//! including a symlinked parent directory) whose target is absolute or
//! leads above the root, and, for a path a tool will write, one inside the
//! engine's private folder `.patchspec/` (directly or through a symlink). In-workspace symlinks are followed, so the result
//! names real directory entries only.
//!
//! The guard reports *why*; it is not the last line of defence. All I/O then
//! goes through [`crate::fs::RealFs`], whose held root handle makes the
//! kernel refuse any escape that a concurrent symlink swap could create after
//! this check (see `docs/clarifications.md`, "Path guard").

use std::path::Component;

use crate::fs::{EntryKind, Fs};
use crate::layout::join;

/// How deep a chain of symlinks may go before the path is refused (as Linux's `ELOOP`).
const MAX_LINKS: usize = 40;

/// Per-tool choices; [`GuardOptions::default`] is the strictest.
#[derive(Clone, Copy, Debug, Default)]
pub struct GuardOptions {
    /// Treat `\` as a separator (TUL-004 normalises separators to `/`).
    /// When false, a `\` in a path is refused as [`PathError::Backslash`].
    pub backslash_is_separator: bool,
    /// The tool will write (or delete, or move) the file: a path inside the
    /// engine's private folder ([`crate::layout::PRIVATE_DIR`]) is refused
    /// as [`PathError::Private`].
    pub writes: bool,
}

impl GuardOptions {
    /// The strict options, for a path the tool will write.
    pub fn for_writing() -> GuardOptions {
        GuardOptions {
            writes: true,
            ..GuardOptions::default()
        }
    }
}

/// A path that passed the guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardedPath {
    /// The path with `.`/`..`/empty components folded, as the caller wrote it
    /// (symlinks not followed): what results report back.
    pub normalized: String,
    /// The parent directory resolved through in-workspace symlinks, plus the
    /// final name unresolved: the directory entry the path names (a delete
    /// removes this, so deleting a link removes the link).
    pub entry: String,
    /// Fully resolved, the final component too: the file whose bytes are
    /// read and replaced.
    pub target: String,
}

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Empty or only whitespace, or naming the workspace root itself.
    #[error("path is empty")]
    Empty,
    /// Contains a NUL byte.
    #[error("path contains a NUL byte")]
    Nul,
    /// Contains `\` where only `/` separates.
    #[error("path {0:?} contains a backslash; paths are '/'-separated")]
    Backslash(String),
    /// Absolute, drive-rooted or UNC.
    #[error("path {0:?} is absolute; paths are workspace-relative")]
    Absolute(String),
    /// `..` climbs above the workspace root.
    #[error("path {0:?} escapes the workspace")]
    Escapes(String),
    /// A symlink on the way leads outside the workspace.
    #[error("path {path:?} leads outside the workspace through the symlink {link:?}")]
    SymlinkEscapes {
        /// The path as given.
        path: String,
        /// The symlink (workspace-relative) whose target leaves.
        link: String,
    },
    /// More than 40 symlinks on the way.
    #[error("path {0:?} goes through too many symlinks")]
    TooManyLinks(String),
    /// A component on the way is a file, not a directory.
    #[error("path {path:?}: {file:?} is not a directory")]
    NotADirectory {
        /// The path as given.
        path: String,
        /// The file standing where a directory was needed.
        file: String,
    },
    /// A path to write inside the engine's private folder `.patchspec/`
    /// (the trash); the same when a symlink leads there.
    #[error("path {0:?} is inside the engine's private folder .patchspec/, which no tool writes")]
    Private(String),
    /// The filesystem could not be asked.
    #[error("path {path:?}: {message}")]
    Io {
        /// The path as given.
        path: String,
        /// The I/O error.
        message: String,
    },
}

impl PathError {
    /// True for the rules that mean "this would reach outside the workspace".
    pub fn is_escape(&self) -> bool {
        matches!(
            self,
            PathError::Escapes(_) | PathError::SymlinkEscapes { .. }
        )
    }
}

/// True when `raw` is absolute on any platform a caller may come from.
fn is_absolute_anywhere(raw: &str) -> bool {
    let b = raw.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    raw.starts_with('/') || raw.starts_with('\\') || drive
}

/// Fold `.`, empty and `..` components; `Err` when `..` climbs above the root.
fn fold<'a>(parts: impl Iterator<Item = &'a str>, base: &mut Vec<String>) -> Result<(), ()> {
    for part in parts {
        match part {
            "" | "." => {}
            ".." => {
                if base.pop().is_none() {
                    return Err(());
                }
            }
            name => base.push(name.to_string()),
        }
    }
    Ok(())
}

/// Check `raw` against every rule and resolve it inside the workspace of `fs`.
pub fn resolve(fs: &dyn Fs, raw: &str, opts: GuardOptions) -> Result<GuardedPath, PathError> {
    if raw.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if raw.contains('\0') {
        return Err(PathError::Nul);
    }
    if is_absolute_anywhere(raw) {
        return Err(PathError::Absolute(raw.to_string()));
    }
    if raw.contains('\\') && !opts.backslash_is_separator {
        return Err(PathError::Backslash(raw.to_string()));
    }
    let separators: &[char] = if opts.backslash_is_separator {
        &['/', '\\']
    } else {
        &['/']
    };
    let mut lexical = Vec::new();
    fold(raw.split(separators), &mut lexical).map_err(|()| PathError::Escapes(raw.to_string()))?;
    let Some(final_name) = lexical.last().cloned() else {
        return Err(PathError::Empty);
    };
    let normalized = lexical.join("/");
    let parent = resolve_components(fs, raw, &lexical[..lexical.len() - 1])?;
    let entry = join(&parent, &final_name);
    let target = resolve_components(fs, raw, &lexical)?;
    let private = |p: &str| p.split('/').next() == Some(crate::layout::PRIVATE_DIR);
    if opts.writes && (private(&normalized) || private(&entry) || private(&target)) {
        return Err(PathError::Private(raw.to_string()));
    }
    Ok(GuardedPath {
        normalized,
        entry,
        target,
    })
}


/// Walk `components` from the root, following in-workspace symlinks.
fn resolve_components(fs: &dyn Fs, raw: &str, components: &[String]) -> Result<String, PathError> {
    let mut resolved: Vec<String> = Vec::new();
    let mut pending: Vec<String> = components.iter().rev().cloned().collect();
    let mut links = 0;
    let mut exists = true;
    while let Some(name) = pending.pop() {
        if name == ".." {
            // Only reachable through a symlink target; the lexical pass removed the caller's.
            if resolved.pop().is_none() {
                return Err(PathError::Escapes(raw.to_string()));
            }
            continue;
        }
        resolved.push(name);
        if !exists {
            continue;
        }
        let here = resolved.join("/");
        let kind = fs.kind(&here).map_err(|e| PathError::Io {
            path: raw.to_string(),
            message: e.to_string(),
        })?;
        match kind {
            None => exists = false,
            Some(EntryKind::Symlink) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(PathError::TooManyLinks(raw.to_string()));
                }
                let target = fs.read_link(&here).map_err(|e| PathError::Io {
                    path: raw.to_string(),
                    message: e.to_string(),
                })?;
                let escape = || PathError::SymlinkEscapes {
                    path: raw.to_string(),
                    link: here.clone(),
                };
                // An absolute target is treated as leaving even when it happens
                // to point back inside: the kernel-side guard refuses it too.
                if target.is_absolute() {
                    return Err(escape());
                }
                resolved.pop();
                let mut target_parts = Vec::new();
                for c in target.components() {
                    match c {
                        Component::Normal(s) => match s.to_str() {
                            Some(s) => target_parts.push(s.to_string()),
                            None => return Err(escape()),
                        },
                        Component::ParentDir => target_parts.push("..".to_string()),
                        Component::CurDir => {}
                        Component::RootDir | Component::Prefix(_) => return Err(escape()),
                    }
                }
                // Resolve `..` in the target against `resolved` right away, so
                // that an escape is blamed on this link.
                let mut base = resolved.clone();
                let mut rest = Vec::new();
                for part in target_parts {
                    if part == ".." && rest.is_empty() {
                        if base.pop().is_none() {
                            return Err(escape());
                        }
                    } else {
                        rest.push(part);
                    }
                }
                resolved = base;
                pending.extend(rest.into_iter().rev());
            }
            Some(EntryKind::File) | Some(EntryKind::Other) if !pending.is_empty() => {
                return Err(PathError::NotADirectory {
                    path: raw.to_string(),
                    file: here,
                });
            }
            Some(_) => {}
        }
    }
    Ok(resolved.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::RealFs;
    use std::os::unix::fs::symlink;

    fn ws() -> (tempfile::TempDir, RealFs) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/inner")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), "a").unwrap();
        symlink("/etc", dir.path().join("abs")).unwrap();
        symlink("../..", dir.path().join("src/up")).unwrap();
        symlink("inner", dir.path().join("src/alias")).unwrap();
        symlink("a.txt", dir.path().join("src/link.txt")).unwrap();
        let fs = RealFs::open(dir.path()).unwrap();
        (dir, fs)
    }

    fn check(raw: &str) -> Result<GuardedPath, PathError> {
        let (_dir, fs) = ws();
        resolve(&fs, raw, GuardOptions::default())
    }

    #[test]
    fn plain_paths_resolve_to_themselves() {
        let p = check("src/a.txt").unwrap();
        assert_eq!(
            (p.normalized.as_str(), p.target.as_str()),
            ("src/a.txt", "src/a.txt")
        );
        assert_eq!(check("src/./new.txt").unwrap().normalized, "src/new.txt");
        assert_eq!(check("src/inner/../a.txt").unwrap().target, "src/a.txt");
    }

    #[test]
    fn each_rule_has_its_own_error() {
        assert_eq!(check(""), Err(PathError::Empty));
        assert_eq!(check("  "), Err(PathError::Empty));
        assert_eq!(check("."), Err(PathError::Empty));
        assert_eq!(check("a\0b"), Err(PathError::Nul));
        assert!(matches!(check("/etc/passwd"), Err(PathError::Absolute(_))));
        assert!(matches!(check("C:\\x"), Err(PathError::Absolute(_))));
        assert!(matches!(check("c:x"), Err(PathError::Absolute(_))));
        assert!(matches!(
            check("\\\\server\\share"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(check("src\\a.txt"), Err(PathError::Backslash(_))));
        assert!(matches!(check("../x"), Err(PathError::Escapes(_))));
        assert!(matches!(check("src/../../x"), Err(PathError::Escapes(_))));
        assert!(matches!(
            check("src/a.txt/b"),
            Err(PathError::NotADirectory { .. })
        ));
    }

    #[test]
    fn symlinks_that_leave_are_refused_at_any_component() {
        assert!(matches!(
            check("abs/hostname"),
            Err(PathError::SymlinkEscapes { .. })
        ));
        assert!(matches!(
            check("abs"),
            Err(PathError::SymlinkEscapes { .. })
        ));
        assert!(matches!(
            check("src/up/x"),
            Err(PathError::SymlinkEscapes { .. })
        ));
    }

    #[test]
    fn symlinks_inside_are_followed() {
        let p = check("src/alias/new.txt").unwrap();
        assert_eq!(p.target, "src/inner/new.txt");
        let p = check("src/link.txt").unwrap();
        assert_eq!(p.entry, "src/link.txt");
        assert_eq!(p.target, "src/a.txt");
    }

    #[test]
    fn backslashes_separate_when_the_tool_says_so() {
        let (_dir, fs) = ws();
        let opts = GuardOptions {
            backslash_is_separator: true,
            ..GuardOptions::default()
        };
        assert_eq!(
            resolve(&fs, "src\\a.txt", opts).unwrap().normalized,
            "src/a.txt"
        );
    }

    #[test]
    fn the_private_folder_is_refused_for_writing_only() {
        let (dir, fs) = ws();
        std::fs::create_dir_all(dir.path().join(".patchspec/trash")).unwrap();
        symlink(".patchspec/trash", dir.path().join("bin")).unwrap();
        for raw in [
            ".patchspec/trash/x",
            "./.patchspec",
            "src/../.patchspec/y",
            "bin/z",
        ] {
            assert_eq!(
                resolve(&fs, raw, GuardOptions::for_writing()),
                Err(PathError::Private(raw.to_string())),
                "{raw}"
            );
            assert!(resolve(&fs, raw, GuardOptions::default()).is_ok(), "{raw}");
        }
        // Only the top-level folder is private.
        assert!(resolve(&fs, "src/.patchspec", GuardOptions::for_writing()).is_ok());
        assert!(resolve(&fs, ".patchspecs", GuardOptions::for_writing()).is_ok());
    }

    #[test]
    fn a_symlink_loop_is_refused() {
        let (dir, fs) = ws();
        symlink("loop2", dir.path().join("loop1")).unwrap();
        symlink("loop1", dir.path().join("loop2")).unwrap();
        assert!(matches!(
            resolve(&fs, "loop1/x", GuardOptions::default()),
            Err(PathError::TooManyLinks(_))
        ));
    }
}
