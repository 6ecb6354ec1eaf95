//! Starting an executor: the one place that turns a transport and an argv
//! into an [`Executor`], for `patchspec check`, `matrix` and `fuzz` alike.
//!
//! Main function: [`launch`]. The command-line checks (which flags go
//! together) stay in the commands; what is started, and how, is decided
//! here. An empty argv is the built-in reference engine: in-process, or for
//! the websocket transport the reference plugin (none with `--listen`: a
//! plugin started elsewhere connects). A start that fails makes the
//! executor unusable (exit code 3).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use super::inprocess::InProcess;
use super::mcp::Mcp;
use super::oneshot::Oneshot;
use super::session::Session;
use super::websocket::{Options, Plugin, WebSocket};
use super::{CallDirs, Declaration, Exchange, Executor, ExecutorInfo, TransportError};
use crate::error::{Error, ErrorKind};
use crate::protocol::ToolCallMsg;
use crate::workspace::RunRoot;

/// The transport to an external executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// One process per call.
    Oneshot,
    /// One long-lived process per worker, HELLO handshake, one message per line.
    Session,
    /// The runner is the websocket protocol's backend; the executor is a plugin that connects to it.
    Websocket,
    /// The executor is an MCP server over stdio, started per case (`{root}` in an argument
    /// becomes the case's workspace, also its working directory); each case is a `tools/call`.
    Mcp,
}

/// A oneshot executor's `HELLO`: asked for before the first case, or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneshotHello {
    /// Ask within this time (one process, as for a call).
    Within(Duration),
    /// Do not ask; the reason is shown as the declaration's absence.
    Skip(String),
}

/// What [`launch`] starts, from the command line's choices.
#[derive(Clone, Debug)]
pub struct Launch<'a> {
    /// The transport.
    pub transport: Transport,
    /// The executor's argv as typed (resolved here, see [`resolve_argv`]);
    /// empty for the built-in engine.
    pub argv: &'a [String],
    /// The per-run root: case directories, the executor's TMPDIR and HOME.
    pub root: &'a RunRoot,
    /// The per-case timeout (a session's handshake gets at least 10 s).
    pub timeout: Duration,
    /// Oneshot: whether and how long to wait for the `HELLO`.
    pub oneshot_hello: OneshotHello,
    /// Parallel workers (a session keeps one process each).
    pub jobs: usize,
    /// Session, websocket: how many times a crashed executor is restarted.
    pub max_restarts: usize,
    /// Websocket: the address to listen on (default `127.0.0.1:0`).
    pub listen: Option<SocketAddr>,
    /// Websocket: how long to wait for the plugin to connect.
    pub connect_timeout: Duration,
    /// Implementation-private path globs from the command line.
    pub ignore_paths: &'a [String],
}

/// Start the executor `launch` describes (`check`): a start that fails is
/// an error, the executor unusable (exit code 3).
pub fn launch(launch: &Launch<'_>) -> Result<Box<dyn Executor>, Error> {
    start(launch).map_err(|failed| match failed {
        Failed::Usage(e) => e,
        Failed::Transport(e) => Error::new(ErrorKind::ExecutorUnusable(e.to_string())),
    })
}

/// Start the executor `launch` describes (`matrix`): one whose start fails
/// becomes an [`Unstarted`] executor, found unusable on its first case, so
/// the other columns still run. Only a usage error is returned.
pub fn launch_or_unstarted(launch: &Launch<'_>) -> Result<Box<dyn Executor>, Error> {
    match start(launch) {
        Ok(executor) => Ok(executor),
        Err(Failed::Usage(e)) => Err(e),
        Err(Failed::Transport(error)) => Ok(Box::new(Unstarted::new(
            launch.argv,
            launch.transport,
            error,
        ))),
    }
}

/// Why [`start`] failed.
enum Failed {
    /// Not the executor's fault (the current directory is unreadable).
    Usage(Error),
    /// The executor did not start.
    Transport(TransportError),
}

fn start(launch: &Launch<'_>) -> Result<Box<dyn Executor>, Failed> {
    match launch.transport {
        Transport::Websocket => {
            let plugin = match (&launch.listen, launch.argv.is_empty()) {
                (_, false) => Plugin::Command(resolve_argv(launch.argv)),
                (Some(_), true) => Plugin::External,
                (None, true) => Plugin::Reference,
            };
            let websocket = WebSocket::start(Options {
                listen: launch
                    .listen
                    .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0))),
                plugin,
                connect_timeout: launch.connect_timeout,
                max_restarts: launch.max_restarts,
                private_paths: launch.ignore_paths.to_vec(),
                project_key: "patchspec".into(),
                env: launch.root.exec_env(),
            })
            .map_err(Failed::Transport)?;
            Ok(Box::new(websocket))
        }
        _ if launch.argv.is_empty() => Ok(Box::new(InProcess::new(launch.ignore_paths))),
        Transport::Mcp => Ok(Box::new(
            Mcp::start(
                resolve_argv(launch.argv),
                launch.root,
                launch.timeout.max(Duration::from_secs(10)),
                launch.ignore_paths,
            )
            .map_err(Failed::Transport)?,
        )),
        Transport::Oneshot => {
            let argv = resolve_argv(launch.argv);
            let private_paths = launch.ignore_paths.to_vec();
            Ok(Box::new(match &launch.oneshot_hello {
                OneshotHello::Within(wait) => {
                    Oneshot::start(argv, launch.root, *wait, private_paths)
                }
                OneshotHello::Skip(why) => Oneshot::new(argv, private_paths, why.clone()),
            }))
        }
        Transport::Session => {
            let cwd = std::env::current_dir().map_err(|e| {
                Failed::Usage(Error::usage(format!(
                    "cannot read the current directory: {e}"
                )))
            })?;
            let mut session = Session::start(
                resolve_argv(launch.argv),
                &cwd,
                launch.root.exec_env(),
                launch.jobs,
                launch.max_restarts,
                launch.timeout.max(Duration::from_secs(10)),
            )
            .map_err(Failed::Transport)?;
            session.extend_info(&[], launch.ignore_paths);
            Ok(Box::new(session))
        }
    }
}

/// An executor that could not be started (a session that failed its
/// handshake, a plugin that never connected): every call fails with
/// [`TransportError::Spawn`] and the reason, so a run finds it unusable on
/// its first case. `matrix` runs it as a column, which is then `not-run`,
/// and goes on with the other columns.
pub struct Unstarted {
    info: ExecutorInfo,
    error: TransportError,
}

impl Unstarted {
    /// `argv` over `transport` failed to start with `error`.
    pub fn new(argv: &[String], transport: Transport, error: TransportError) -> Unstarted {
        Unstarted {
            info: ExecutorInfo {
                transport: match transport {
                    Transport::Oneshot => "oneshot",
                    Transport::Session => "session",
                    Transport::Websocket => "websocket",
                    Transport::Mcp => "mcp",
                },
                command: resolve_argv(argv),
                declared_by: Declaration::Missing(format!("it did not start: {error}")),
                ..ExecutorInfo::default()
            },
            error,
        }
    }
}

impl Executor for Unstarted {
    fn info(&self) -> ExecutorInfo {
        self.info.clone()
    }

    fn call(&self, _msg: &ToolCallMsg, _dirs: &CallDirs<'_>, _timeout: Duration) -> Exchange {
        Exchange {
            answer: Err(self.error.clone()),
            stderr: String::new(),
        }
    }
}

/// The executor's argv with paths made absolute, because the executor runs
/// in the case workspace, not where the user typed the command: a first
/// element with a `/` is resolved against the current directory (a bare
/// name is looked up in `PATH`), and so is every later argument that names
/// an existing file relative to the current directory (`-- python3
/// exec.py`). Options (`-…`), absolute paths and arguments that name no
/// file here are passed as given.
pub fn resolve_argv(argv: &[String]) -> Vec<String> {
    let absolute = |arg: &str| {
        std::path::absolute(arg)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| arg.to_owned())
    };
    argv.iter()
        .enumerate()
        .map(|(i, arg)| {
            let path = Path::new(arg);
            let resolve = if i == 0 {
                arg.contains('/')
            } else {
                !arg.starts_with('-') && path.is_relative() && path.is_file()
            };
            if resolve {
                absolute(arg)
            } else {
                arg.clone()
            }
        })
        .collect()
}
