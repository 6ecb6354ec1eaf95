//! `patchspec matrix`: its arguments, parsed into a
//! [`MatrixRequest`] for [`crate::matrix::run_and_write`] (which runs
//! every column and writes the matrix), and a line per column printed.
//!
//! Exit code: 0 when the matrix was written, whatever the pass rates (it is
//! a report, not a gate: use `check` with a baseline for that); 2 on usage
//! or corpus errors; 3 when an executor was unusable (the matrix is still
//! written, that column `not-run`); 1 when an output could not be written.

use std::io::Write as _;
use std::path::PathBuf;

use crate::corpus_source::CorpusArgs;
use crate::error::{Error, ErrorKind};
use crate::matrix::{run_and_write, ExecutorSpec, MatrixRequest, REFERENCE};
use crate::select::FilterArgs;
use crate::setup::{ExecutorArgs, JudgingArgs};
use crate::transport::launch::Transport;

/// `patchspec matrix`.
#[derive(Clone, Debug, clap::Args)]
pub struct MatrixArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// An implementation to check: NAME=CMD, CMD split into argv like a POSIX shell
    /// splits words ('…', "…", backslash) but never run by one; over --transport; repeatable.
    #[arg(long = "executor", value_name = "NAME=CMD")]
    pub executor: Vec<String>,
    /// The transport to every --executor, as in `check` (websocket: `{url}` in CMD becomes
    /// the URL to connect to, also given as $PATCHSPEC_WS_URL; mcp: `{root}` in CMD becomes the
    /// case's workspace). Sessions and plugins are
    /// restarted up to 3 times; a plugin has --connect-timeout to connect.
    #[arg(long, value_enum, default_value = "oneshot")]
    pub transport: Transport,
    /// The directory to write matrix.json, matrix.html and badges/NAME.json into (created).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write the matrix as Markdown (tables by tool and clause, departures) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With `--judge outcome`: also judge every answer in full, without running anything
    /// again, and write that matrix to DIR like --out (and its Markdown as DIR/matrix.md
    /// with --markdown). Not for cases with steps (their step answers are not kept).
    #[arg(long, value_name = "DIR")]
    pub full_out: Option<PathBuf>,
    /// Workers, connection timeout, work folder, the same for every column.
    #[command(flatten)]
    pub executor_args: ExecutorArgs,
    /// Timeout, judge and what is left out, the same for every column.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Do not send oneshot executors a HELLO first (nothing declared: every selected case runs).
    #[arg(long)]
    pub no_hello: bool,
}

/// Parse `NAME=CMD`. CMD is split into words like a POSIX shell would split
/// them — whitespace separates, `'…'` is literal, `"…"` allows `\"` `\\` `\$`
/// `` \` ``, a backslash outside quotes escapes the next character — but
/// nothing is expanded or run: no variables, globs, pipes or redirections.
pub fn parse_executor(text: &str) -> Result<ExecutorSpec, String> {
    let (name, cmd) = text
        .split_once('=')
        .ok_or_else(|| format!("--executor {text:?}: expected NAME=CMD"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || name.starts_with('.')
    {
        return Err(format!(
            "--executor {text:?}: the name {name:?} must be letters, digits, '.', '_' or '-' (and not start with '.')"
        ));
    }
    if name == REFERENCE {
        return Err(format!(
            "--executor {text:?}: {REFERENCE:?} is the built-in engine's column; pick another name"
        ));
    }
    let argv = shlex::split(cmd).ok_or_else(|| {
        format!("--executor {text:?}: unbalanced quotes or a trailing backslash in the command")
    })?;
    if argv.is_empty() {
        return Err(format!("--executor {text:?}: the command is empty"));
    }
    Ok(ExecutorSpec {
        name: name.to_owned(),
        argv,
    })
}

/// Run `patchspec matrix`; returns the exit code.
pub fn matrix(args: &MatrixArgs) -> Result<i32, Error> {
    let specs = args
        .executor
        .iter()
        .map(|e| parse_executor(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::usage)?;
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::usage(format!(
                "two executors are named {:?}",
                s.name
            )));
        }
    }
    if args.no_hello && args.transport != Transport::Oneshot {
        return Err(Error::usage(
            "--no-hello is for oneshot executors (a session or a plugin always shakes hands)",
        ));
    }
    let m = run_and_write(&MatrixRequest {
        corpus: &args.corpus,
        filter: &args.filter,
        executors: &specs,
        transport: args.transport,
        no_hello: args.no_hello,
        executor_args: &args.executor_args,
        judging: &args.judging,
        out: &args.out,
        markdown: args.markdown.as_deref(),
        full_out: args.full_out.as_deref(),
    })?;
    let mut out = crate::output::stdout();
    for (i, c) in m.columns.iter().enumerate() {
        let t = m.tally(i, |_| true);
        let line = match &c.unusable {
            Some(_) => format!("{}: not run (unusable; no badge written)", c.name),
            None => format!(
                "{}: {} passing ({} pass / {} judged, {} skipped)",
                c.name,
                t.percent(),
                t.pass,
                t.judged(),
                t.skip + t.not_run
            ),
        };
        writeln!(out, "{line}").map_err(|e| Error::io(format!("cannot write the summary: {e}")))?;
    }
    let unusable: Vec<String> = m
        .columns
        .iter()
        .filter_map(|c| c.unusable.as_ref().map(|u| format!("{}: {u}", c.name)))
        .collect();
    if !unusable.is_empty() {
        return Err(Error::new(ErrorKind::ExecutorUnusable(format!(
            "the matrix was written, but {}",
            unusable.join("; ")
        ))));
    }
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, want: Result<(&str, &[&str]), &str>) {
        let got = parse_executor(text);
        match want {
            Ok((name, argv)) => assert_eq!(
                got,
                Ok(ExecutorSpec {
                    name: name.into(),
                    argv: argv.iter().map(|s| s.to_string()).collect()
                }),
                "{text}"
            ),
            Err(part) => {
                let e = got.expect_err(text);
                assert!(e.contains(part), "{text}: {e}");
            }
        }
    }

    #[test]
    fn name_equals_command_split_without_a_shell() {
        check("codex=./run --flag", Ok(("codex", &["./run", "--flag"])));
        check(
            "a.b-c_1=python3 'my adapter.py' \"x \\\"y\\\"\" a\\ b",
            Ok(("a.b-c_1", &["python3", "my adapter.py", "x \"y\"", "a b"])),
        );
        check(
            "x=echo $HOME *.txt | cat",
            Ok(("x", &["echo", "$HOME", "*.txt", "|", "cat"])),
        );
        check("k=cmd a=b", Ok(("k", &["cmd", "a=b"])));
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        check("noequals", Err("expected NAME=CMD"));
        check("=cmd", Err("must be letters"));
        check("a/b=cmd", Err("must be letters"));
        check(".hidden=cmd", Err("must be letters"));
        check("reference=cmd", Err("built-in engine"));
        check("x=   ", Err("empty"));
        check("x=cmd 'open", Err("unbalanced"));
    }
}
