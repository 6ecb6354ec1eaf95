//! Writing to stdout and stderr when the reader may go away
//! (`patchspec list | head -1`).
//!
//! Main type: [`Quiet`], a writer that turns a broken pipe (EPIPE: the
//! reader closed its end) into silence: that write and every later one
//! succeed without writing, so the command finishes normally — same work,
//! same exit code — instead of failing or panicking the way `println!` does.
//! Any other I/O error is returned as usual. Rust ignores SIGPIPE, so EPIPE
//! arrives as an error here rather than killing the process.
//!
//! Every command of this crate that prints (`list`, `show`, `coverage`,
//! `lint`, `repro`, `check`'s reports, `apply` and `call`) writes through
//! [`stdout`], [`stderr`] or [`eprintln_quietly`]. What it leaves out: buffering (the standard handles already
//! buffer by line).

use std::io::{self, Write};

/// A writer that goes quiet once its reader has gone away.
#[derive(Debug)]
pub struct Quiet<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> Quiet<W> {
    /// Wrap a writer.
    pub fn new(inner: W) -> Quiet<W> {
        Quiet {
            inner,
            closed: false,
        }
    }

    /// Has the reader gone away (nothing more will be written)?
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn absorb<T>(&mut self, result: io::Result<T>, quiet: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(quiet)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Quiet<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.absorb(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.absorb(result, ())
    }
}

/// Standard output, quiet on a broken pipe.
pub fn stdout() -> Quiet<io::Stdout> {
    Quiet::new(io::stdout())
}

/// Standard error, quiet on a broken pipe.
pub fn stderr() -> Quiet<io::Stderr> {
    Quiet::new(io::stderr())
}

/// `eprintln!` that never panics: a message that cannot be written to
/// standard error has nowhere else to go, so a failure is dropped.
pub fn eprintln_quietly(args: std::fmt::Arguments<'_>) {
    let mut err = stderr();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone away.
    struct Gone;

    impl Write for Gone {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
    }

    /// A writer that fails otherwise.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_pipe_goes_quiet_and_other_errors_do_not() {
        let mut q = Quiet::new(Gone);
        assert!(writeln!(q, "one").is_ok());
        assert!(q.is_closed());
        assert!(writeln!(q, "two").is_ok() && q.flush().is_ok());
        let mut f = Quiet::new(Full);
        assert!(writeln!(f, "one").is_err());
        assert!(!f.is_closed());
    }
}
