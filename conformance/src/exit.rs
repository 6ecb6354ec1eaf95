//! Exit codes of `patchspec check` (and the other commands): a documented,
//! append-only table. CI scripts depend on these numbers; never renumber,
//! only add. Every exit code the `patchspec` binary returns is one of the
//! constants below; no command writes a literal.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every selected case ended as expected (pass, skip, or xfail) |
//! | 1 | unexpected results: a fail, error or xpass, a stale baseline entry, a run-level protocol error or write outside the workspaces, or selected cases left unrun by `--fail-fast`/`--max-fail` |
//! | 2 | usage or corpus error: bad arguments, invalid case files, zero cases selected, every selected case skipped (unless `--allow-empty`), a corpus that is not the pinned one (`--corpus-version`, `--corpus-hash`), unreadable baseline, refused baseline rewrite |
//! | 3 | the executor is unusable: it could not be started, failed the handshake, declared a tool the corpus does not know, or spoke no valid protocol on the first case |
//! | 101 | `patchspec exec`: the engine panicked; nothing was answered, as a crashed executor looks to the runner (the code Rust gives a panicking process) |
//!
//! The engine's own commands (`apply`, `call`, `recover`, `trash`) read the
//! first rows their way: 0 the call succeeded, 1 ([`REFUSED`]) the tool
//! refused the call or recovery failed, 2 a usage error or output that could
//! not be written. `exec --connect` (the WebSocket plugin) exits 0 when the
//! backend closes the connection and 1 ([`REFUSED`]) when it cannot connect
//! or the connection fails.
//!
//! The mapping from an error to its code is the single exhaustive `match` in
//! [`crate::error::Error::exit_code`], with no wildcard arm; a finished
//! run's code is [`crate::event::RunSummary::exit_code`]. This module
//! depends on nothing: every layer may use its constants.

/// Everything ran as expected.
pub const OK: i32 = 0;
/// Unexpected results (the gate fails).
pub const UNEXPECTED: i32 = 1;
/// Usage or corpus error.
pub const USAGE: i32 = 2;
/// The executor is unusable.
pub const EXECUTOR_UNUSABLE: i32 = 3;
/// The engine's commands: the tool refused the call, recovery failed, or
/// (`exec --connect`) the connection to the backend failed. The same number
/// as [`UNEXPECTED`]: to a script, both mean "it did not go through".
pub const REFUSED: i32 = 1;
/// `patchspec exec`: the engine panicked, and the call was left unanswered.
pub const ENGINE_PANIC: i32 = 101;

#[cfg(test)]
mod tests {
    /// Every `.rs` file under `dir`, recursively.
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The table above is the only place an exit code is written: no
    /// `process::exit` or `ExitCode` with a literal in the runner's code.
    /// The purpose-built test executors (`src/bin/`) exit with whatever a
    /// broken executor would, so they are not held to it.
    #[test]
    fn no_command_writes_a_literal_exit_code() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(files.len() > 20, "found only {files:?}");
        let mut literals = Vec::new();
        for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
            let text = std::fs::read_to_string(file).expect("a source file is readable");
            for (n, line) in text.lines().enumerate() {
                for call in ["process::exit(", "ExitCode::from("] {
                    let literal = line.split(call).skip(1).any(|rest| {
                        rest.trim_start()
                            .starts_with(|c: char| c.is_ascii_digit() || c == '-')
                    });
                    if literal {
                        literals.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(literals.is_empty(), "{literals:#?}");
    }
}
