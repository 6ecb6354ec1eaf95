//! Writing a command's output. A reader that goes away early
//! (`patchspec call … | head -1`) is not an error: Rust ignores SIGPIPE, so
//! the write fails with `EPIPE`, and `println!` would panic on it. Commands
//! write through [`Stdout`] instead, which turns a closed pipe into a silent
//! sink (the command finishes and keeps its exit code), and through
//! [`eprintln_quietly`] for messages, which have nowhere to go if standard
//! error is closed too.
//!
//! Every other write error (a full disk behind a redirection) still surfaces
//! from [`Stdout`]'s `write`/`flush`, for the command to report.

use std::io::{self, StdoutLock, Write};

/// True for the error a write gets when the reading end of a pipe is closed.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Standard output, locked, that swallows everything once the reader is gone.
pub struct Stdout {
    lock: StdoutLock<'static>,
    reader_gone: bool,
}

impl Stdout {
    /// Lock standard output for the rest of the command.
    pub fn lock() -> Stdout {
        Stdout {
            lock: io::stdout().lock(),
            reader_gone: false,
        }
    }

    /// True once a write found the pipe closed (the rest was dropped).
    pub fn reader_gone(&self) -> bool {
        self.reader_gone
    }

    fn absorb<T>(&mut self, result: io::Result<T>, gone: T) -> io::Result<T> {
        match result {
            Err(e) if is_broken_pipe(&e) => {
                self.reader_gone = true;
                Ok(gone)
            }
            other => other,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.reader_gone {
            return Ok(buf.len());
        }
        let result = self.lock.write(buf);
        self.absorb(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.reader_gone {
            return Ok(());
        }
        let result = self.lock.flush();
        self.absorb(result, ())
    }
}

/// `eprintln!` that never panics: a message that cannot be written to
/// standard error has nowhere else to go.
pub fn eprintln_quietly(args: std::fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_epipe_counts_as_the_reader_going_away() {
        assert!(is_broken_pipe(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!is_broken_pipe(&io::Error::other("disk full")));
    }
}
