//! Which corpus a command uses (a directory, or the copy compiled into the
//! binary: [`crate::corpus_embedded`]), and `patchspec corpus export`.
//!
//! The repository's `corpus/` is compiled into `patchspec` (`build.rs`), so
//! an installed binary works with no clone. A command uses, in order:
//!
//! 1. `--corpus DIR`, as given;
//! 2. the nearest `corpus/` at or above the current directory, when it is a
//!    patchspec corpus (it has a `VERSION` file and a `schema/` folder): a
//!    clone of this repository, or an exported corpus being edited;
//! 3. the embedded corpus. When step 2 found a `corpus/` that is not a
//!    patchspec corpus (a project's own folder of that name), a note on
//!    stderr says it was left alone.
//!
//! The embedded corpus has the same content hash as the directory it was
//! built from (one walk, [`crate::corpus_walk`], one hash,
//! [`Corpus::from_files`]); a test holds it. It is stored deflated
//! (`build.rs`) and inflated once, on first use: a few tens of milliseconds
//! (docs/ci.md, "Cost"). Loading it then parses the ~950 cases from memory,
//! as loading a directory does from disk.

use std::path::{Path, PathBuf};

use crate::case::{Corpus, CorpusRoot};
use crate::corpus_embedded::embedded_files;
use crate::error::{Error, ErrorKind};

/// The corpus location.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CorpusArgs {
    /// The corpus directory (default: the nearest `corpus/` at or above the current directory that has a VERSION file and schema/, else the corpus compiled into this binary).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
}

/// `patchspec corpus export`.
#[derive(Clone, Debug, clap::Args)]
pub struct ExportArgs {
    /// The directory to write (created; must be absent or empty).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// The embedded corpus, loaded.
pub fn embedded() -> Result<Corpus, Error> {
    Corpus::from_files(CorpusRoot::Embedded, embedded_files())
        .map_err(|p| Error::new(ErrorKind::Corpus(p)))
}

/// Does `dir` look like a patchspec corpus (a `VERSION` file and `schema/`)?
pub fn is_patchspec_corpus(dir: &Path) -> bool {
    dir.join("VERSION").is_file() && dir.join("schema").is_dir()
}

/// Where the corpus comes from, and a note for stderr when a `corpus/`
/// folder was found but left alone.
pub fn locate(args: &CorpusArgs, cwd: &Path) -> (CorpusRoot, Option<String>) {
    if let Some(dir) = &args.corpus {
        return (CorpusRoot::Dir(dir.clone()), None);
    }
    let Some(found) = cwd
        .ancestors()
        .map(|dir| dir.join("corpus"))
        .find(|candidate| candidate.is_dir())
    else {
        return (CorpusRoot::Embedded, None);
    };
    if is_patchspec_corpus(&found) {
        return (CorpusRoot::Dir(found), None);
    }
    let note = format!(
        "note: {} is not a patchspec corpus (no VERSION file and schema/ folder): using the corpus embedded in patchspec {} (pass --corpus DIR to choose one)",
        found.display(),
        env!("CARGO_PKG_VERSION")
    );
    (CorpusRoot::Embedded, Some(note))
}

/// Load the corpus the arguments name (see the module doc), printing the
/// note of [`locate`] to stderr.
pub fn load(args: &CorpusArgs) -> Result<Corpus, Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::usage(format!("cannot read the current directory: {e}")))?;
    let (root, note) = locate(args, &cwd);
    if let Some(note) = note {
        use std::io::Write as _;
        // A closed stderr must not stop the command.
        let _ = writeln!(crate::output::stderr(), "{note}");
    }
    match root {
        CorpusRoot::Embedded => embedded(),
        CorpusRoot::Dir(dir) => Corpus::load(&dir).map_err(|p| Error::new(ErrorKind::Corpus(p))),
    }
}

/// `patchspec corpus export DIR`: write the embedded corpus (cases,
/// `VERSION`, `CHANGELOG.md`, `schema/`) to DIR, which must be absent or
/// empty, so tools in other languages can read the cases this binary checks.
pub fn export(args: &ExportArgs) -> Result<i32, Error> {
    let dir = &args.dir;
    if let Ok(mut entries) = std::fs::read_dir(dir) {
        if entries.next().is_some() {
            return Err(Error::usage(format!(
                "{} is not empty: export writes into a new or empty directory",
                dir.display()
            )));
        }
    } else if dir.exists() {
        return Err(Error::usage(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let corpus = embedded()?;
    for (rel, bytes) in embedded_files() {
        let path: PathBuf = crate::rel_path::under(dir, rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| Error::io(format!("cannot write {}: {e}", path.display())))?;
    }
    use std::io::Write as _;
    writeln!(
        crate::output::stdout(),
        "exported the corpus {} sha256:{} ({} cases, {} files) to {}",
        corpus.version.as_deref().unwrap_or("(no VERSION)"),
        corpus.content_hash,
        corpus.cases.len(),
        embedded_files().len(),
        dir.display()
    )
    .map_err(|e| Error::io(format!("cannot write to stdout: {e}")))?;
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_corpus() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
    }

    #[test]
    fn the_embedded_corpus_hashes_as_the_directory_it_was_built_from() {
        let embedded = embedded().expect("the embedded corpus loads");
        let dir = Corpus::load(&repo_corpus()).expect("the corpus directory loads");
        assert_eq!(embedded.content_hash, dir.content_hash);
        assert_eq!(embedded.version, dir.version);
        assert_eq!(embedded.cases.len(), dir.cases.len());
        assert_eq!(embedded.root, CorpusRoot::Embedded);
    }

    #[test]
    fn an_unrelated_corpus_folder_is_left_alone_with_a_note() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("corpus/texts")).expect("mkdir");
        std::fs::create_dir_all(project.join("src")).expect("mkdir");
        let (root, note) = locate(&CorpusArgs::default(), &project.join("src"));
        assert_eq!(root, CorpusRoot::Embedded);
        let note = note.expect("a note names the folder");
        assert!(note.contains("project/corpus"), "{note}");
        assert!(note.contains("not a patchspec corpus"), "{note}");
    }

    #[test]
    fn a_patchspec_corpus_above_the_cwd_is_used() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = tmp.path().join("corpus");
        std::fs::create_dir_all(corpus.join("schema")).expect("mkdir");
        std::fs::write(corpus.join("VERSION"), "9.9.9\n").expect("write");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        let (root, note) = locate(&CorpusArgs::default(), &tmp.path().join("a/b"));
        assert_eq!(root, CorpusRoot::Dir(corpus));
        assert_eq!(note, None);
    }

    #[test]
    fn no_corpus_folder_means_the_embedded_one_silently() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (root, note) = locate(&CorpusArgs::default(), tmp.path());
        // A temp dir has no `corpus/` above it on any sane machine.
        assert_eq!(root, CorpusRoot::Embedded);
        assert_eq!(note, None);
    }

    #[test]
    fn corpus_flag_wins_without_a_check() {
        let args = CorpusArgs {
            corpus: Some(PathBuf::from("/some/where")),
        };
        let (root, note) = locate(&args, Path::new("/"));
        assert_eq!(root, CorpusRoot::Dir(PathBuf::from("/some/where")));
        assert_eq!(note, None);
    }
}
