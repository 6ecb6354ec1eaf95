//! The run setup `check`, `matrix` and `fuzz` share: their common options
//! ([`ExecutorArgs`], [`JudgingArgs`], each default written once) and the
//! checks made once before the first case — the selection is not empty,
//! the corpus is the pinned one, the `--setup` command succeeded, the
//! executor's declaration names only known tools and leaves something to
//! judge. The commands only turn their arguments into these calls.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::case::{Case, Corpus};
use crate::error::{Error, ErrorKind};
use crate::run::{check_declared_tools, known_tools, nothing_judged, Runner};
use crate::select::Selection;
use crate::workspace::{RunRoot, WorkDir};

/// `--timeout`: how long one call may take.
pub const DEFAULT_TIMEOUT: &str = "5s";
/// `--connect-timeout`: how long a WebSocket plugin has to connect.
pub const DEFAULT_CONNECT_TIMEOUT: &str = "10s";
/// `--max-case-bytes`: the most bytes of files one case may leave
/// ([`crate::workspace::DEFAULT_WORKSPACE_LIMIT`], as `check` spells it).
pub const DEFAULT_MAX_CASE_BYTES: &str = "256M";
/// How many times a crashed session executor (or a plugin that exited) is
/// restarted over a run: `check --max-restarts`, and every column of `matrix`.
pub const DEFAULT_MAX_RESTARTS: usize = 3;

/// How the executor runs: the options `check`, `matrix` and `fuzz` share
/// (one definition, one default each).
#[derive(Clone, Debug, Args)]
pub struct ExecutorArgs {
    /// Parallel workers (default: the number of cores; matrix: per executor run).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Websocket: how long to wait for the plugin to connect, at the start and after a disconnect.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_CONNECT_TIMEOUT)]
    pub connect_timeout: String,
    /// The folder each run's case workspaces are made in (default: $TMPDIR when set, else
    /// /dev/shm when writable, a memory filesystem, else the system temporary folder).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

impl ExecutorArgs {
    /// `--jobs`, or the number of cores; at least 1.
    pub fn jobs(&self) -> usize {
        self.jobs
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .max(1)
    }

    /// `--connect-timeout`, parsed.
    pub fn connect_timeout(&self) -> Result<Duration, Error> {
        parse_duration(&self.connect_timeout).map_err(Error::usage)
    }

    /// Where the run's workspaces go (`--work-dir`, else the first usable default).
    pub fn work_dir(&self) -> WorkDir {
        WorkDir::choose(self.work_dir.as_deref())
    }
}

/// How each answer is judged and what a run leaves out: the options
/// `check`, `matrix` and `fuzz` share (one definition, one meaning).
#[derive(Clone, Debug, Args)]
pub struct JudgingArgs {
    /// How long one call may take: seconds, or with a unit (`500ms`, `5s`).
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TIMEOUT)]
    pub timeout: String,
    /// How answers are judged: `full` (the result document and the tree) or `outcome`
    /// (success or failure and the tree, for executors that report no error kinds).
    #[arg(long, value_enum, default_value = "full")]
    pub judge: crate::judge::Judge,
    /// Leave out cases (fuzz: calls) of this tool, e.g. for an executor that declares no
    /// tools; repeatable.
    #[arg(long, value_name = "NAME")]
    pub skip_tool: Vec<String>,
    /// Leave out cases (fuzz: calls) with this tag (fuzz generates `symlink`, `modes`,
    /// `limits`, `active-files`, `crlf`, `bom`, `non-utf8`); repeatable.
    #[arg(long, value_name = "TAG")]
    pub skip_tag: Vec<String>,
    /// An implementation-private path glob left out of tree comparison; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub ignore_path: Vec<String>,
}

impl JudgingArgs {
    /// `--timeout`, parsed.
    pub fn timeout(&self) -> Result<Duration, Error> {
        parse_duration(&self.timeout).map_err(Error::usage)
    }
}

/// Parse `5`, `2.5`, `500ms`, `5s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(ms) = t.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = t.strip_suffix('s') {
        (s, 1.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(format!("invalid duration {text:?} (e.g. 5, 2.5s, 500ms)")),
    }
}

/// Parse a size: `1048576`, `512K`, `256M`, `1G` (powers of 1024), at least 1.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, scale) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    match num.parse::<u64>().ok().and_then(|n| n.checked_mul(scale)) {
        Some(bytes) if bytes > 0 => Ok(bytes),
        _ => Err(format!(
            "invalid size {text:?} (bytes, or with K, M, G: e.g. 268435456, 256M, 1G)"
        )),
    }
}

/// The cases of `corpus` that `selection` selects; none is an error
/// (exit 2) naming the corpus and the filters.
pub fn select<'c>(corpus: &'c Corpus, selection: &Selection) -> Result<Vec<&'c Case>, Error> {
    let selected = selection.apply(&corpus.cases).map_err(Error::usage)?;
    if selected.is_empty() {
        return Err(Error::new(ErrorKind::NothingSelected(format!(
            "{} case(s) in {}, 0 selected ({})",
            corpus.cases.len(),
            corpus.root.display(),
            selection.describe()
        ))));
    }
    Ok(selected)
}

/// `--corpus-version` / `--corpus-hash`: the corpus must be the one pinned.
pub fn check_pins(corpus: &Corpus, version: Option<&str>, hash: Option<&str>) -> Result<(), Error> {
    let found = || {
        format!(
            "{} is version {} (sha256:{})",
            corpus.root.display(),
            corpus
                .version
                .as_deref()
                .unwrap_or("<none: no VERSION file>"),
            corpus.content_hash
        )
    };
    if let Some(want) = version {
        if corpus.version.as_deref() != Some(want.trim()) {
            return Err(Error::new(ErrorKind::CorpusPin(format!(
                "the corpus is not the pinned version {want}: {}; check out the pinned corpus (its git tag) or update the pin",
                found()
            ))));
        }
    }
    if let Some(want) = hash {
        let hex = want.trim().strip_prefix("sha256:").unwrap_or(want.trim());
        if !hex.eq_ignore_ascii_case(&corpus.content_hash) {
            return Err(Error::new(ErrorKind::CorpusPin(format!(
                "the corpus's content is not the pinned {want}: {}; its cases differ from the pinned ones",
                found()
            ))));
        }
    }
    Ok(())
}

/// `--setup CMD`: run `sh -c CMD` once before the first case (its output
/// on stderr); one that fails makes the executor unusable.
pub fn run_setup_command(cmd: &str) -> Result<(), Error> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| {
            Error::new(ErrorKind::ExecutorUnusable(format!(
                "setup command could not start: {e}"
            )))
        })?;
    if !status.success() {
        return Err(Error::new(ErrorKind::ExecutorUnusable(format!(
            "setup command {cmd:?} failed: {}",
            crate::transport::process::describe_status(status)
        ))));
    }
    Ok(())
}

/// A fresh per-run root in `work_dir`: every case directory, and the
/// executor's TMPDIR and HOME, live under it, watched by the outside check;
/// each case's workspace holds at most `workspace_limit` bytes.
pub fn run_root(work_dir: &WorkDir, workspace_limit: u64) -> Result<Arc<RunRoot>, Error> {
    let mut root = work_dir.run_root().map_err(|e| Error::io(e.to_string()))?;
    root.set_workspace_limit(workspace_limit);
    Ok(Arc::new(root))
}

/// Strict before the first case: a declaration that names a tool nobody
/// knows makes the executor unusable, and one that leaves nothing of the
/// selection to judge is not a green run (unless `allow_empty`).
pub fn check_declaration(
    runner: &Runner<'_>,
    corpus: &Corpus,
    selected: &[&Case],
    allow_empty: bool,
) -> Result<(), Error> {
    check_declared_tools(runner.info(), &known_tools(&corpus.cases))
        .map_err(|why| Error::new(ErrorKind::ExecutorUnusable(why)))?;
    match nothing_judged(runner, selected) {
        Some(why) if !allow_empty => Err(Error::new(ErrorKind::NothingJudged(why))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size(" 2g "), Ok(2 << 30));
        for bad in ["", "0", "M", "-1M", "1.5M", "1T", "99999999999G"] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains("invalid size"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_defaults_parse() {
        assert_eq!(parse_duration(DEFAULT_TIMEOUT), Ok(Duration::from_secs(5)));
        assert_eq!(
            parse_duration(DEFAULT_CONNECT_TIMEOUT),
            Ok(Duration::from_secs(10))
        );
        assert_eq!(
            parse_size(DEFAULT_MAX_CASE_BYTES),
            Ok(crate::workspace::DEFAULT_WORKSPACE_LIMIT)
        );
    }
}
