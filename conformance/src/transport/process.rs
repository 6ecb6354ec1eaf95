//! Child processes for the external transports: spawn in a new process
//! group, kill the whole group, and read pipes with a bound.
//!
//! Every executor runs in its own process group (`setpgid(0, 0)` via
//! `process_group(0)`) so a timeout kills the executor *and* anything it
//! started. Reads are bounded: output beyond the bound is drained and
//! discarded so the child never blocks on a full pipe, and the overflow is
//! reported. Unix only, like the rest of the runner.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::workspace::ExecEnv;

/// The most bytes read from an executor's stdout for one message.
pub const STDOUT_LIMIT: usize = 16 * 1024 * 1024;
/// The most bytes of stderr kept (the tail).
pub const STDERR_LIMIT: usize = 64 * 1024;

/// Spawn `argv` in `cwd` with `env` (TMPDIR, HOME), all three pipes
/// captured, in a new process group.
pub fn spawn(argv: &[String], cwd: &Path, env: &ExecEnv) -> io::Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty executor command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    env.apply(&mut cmd);
    cmd.spawn()
}

/// Kill the whole process group led by `pid` (no error if it is gone).
pub fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: killpg has no memory-safety preconditions; the group id is
        // the pid of a child we spawned as a group leader.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// Read everything up to `limit` bytes; drain and drop the rest.
/// Returns the bytes and whether the bound was exceeded.
pub fn read_bounded(mut r: impl Read, limit: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    let mut over = false;
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(out.len());
                if n > room {
                    over = true;
                }
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (out, over)
}

/// Append `chunk` to `tail`, keeping its last [`STDERR_LIMIT`] bytes: the
/// one bounded stderr tail of every transport, sync or async.
pub fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    tail.extend_from_slice(chunk);
    if tail.len() > STDERR_LIMIT {
        let cut = tail.len() - STDERR_LIMIT;
        tail.drain(..cut);
    }
}

/// Read to the end, keeping the last [`STDERR_LIMIT`] bytes.
pub fn read_tail(mut r: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        keep_tail(&mut out, &buf[..n]);
    }
    out
}

/// A tail buffer fed by a thread draining a pipe (stderr).
#[derive(Clone, Debug, Default)]
pub struct Tail(Arc<Mutex<Vec<u8>>>);

impl Tail {
    /// Drain `r` into the tail on a background thread.
    pub fn drain(r: impl Read + Send + 'static) -> Tail {
        let tail = Tail::default();
        let inner = tail.clone();
        std::thread::spawn(move || {
            let mut r = r;
            let mut buf = [0u8; 8192];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                inner.push(&buf[..n]);
            }
        });
        tail
    }

    fn push(&self, bytes: &[u8]) {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        v.extend_from_slice(bytes);
        if v.len() > STDERR_LIMIT {
            let cut = v.len() - STDERR_LIMIT;
            v.drain(..cut);
        }
    }

    /// Total bytes currently held.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take the content, leaving it empty.
    pub fn take(&self) -> String {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&std::mem::take(&mut *v)).into_owned()
    }
}

/// Describe an exit status: `exit code 3` or `killed by signal 11`.
pub fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "unknown exit status".into(),
    }
}
