//! `patchspec mcp` over stdio: newline-delimited JSON-RPC on stdin/stdout,
//! where every message that carries an `id` gets exactly one answer.
//!
//! Main function: [`serve_stdio`]. rmcp's stdio transport drops a line
//! serde rejects and one over its length bound, and its client waits
//! forever for the answer. Here a reader thread frames stdin into lines
//! (at most [`MAX_MESSAGE_BYTES`] each, the HTTP limit too) and reads each
//! through [`framing::read_message`]: a typed message goes to rmcp (the
//! [`ChannelTransport`]), which answers it; one that cannot be read is
//! answered by the reader with its JSON-RPC error. A writer thread owns
//! stdout, so the two kinds of answer never interleave within a line.
//!
//! What it leaves out: a message without an `id` that cannot be read (a
//! broken notification) is dropped, as JSON-RPC answers no notification.
//! Blank lines are skipped; a `\r` before the newline is removed.

use std::io::{self, BufRead, Write};
use std::sync::mpsc as std_mpsc;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::mpsc;

use super::framing::{self, MAX_MESSAGE_BYTES};
use super::{runtime, EngineServer};
use crate::error::Error;

/// How many bytes of an oversized line's end are kept to find its `id`.
const TAIL_BYTES: usize = 4096;

/// rmcp's side of the stdio transport: typed messages in from the reader
/// thread, serialised answers out to the writer thread.
pub struct ChannelTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: std_mpsc::Sender<Vec<u8>>,
}

impl Transport<RoleServer> for ChannelTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(line)
                    .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// One line read by [`read_line`].
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A whole line (without its newline) in the buffer.
    Whole,
    /// A line over the limit: its first [`MAX_MESSAGE_BYTES`] bytes are in
    /// the buffer, its last bytes in the tail; the rest was discarded.
    Oversized,
    /// The end of the input (a last line without a newline is `Whole` first).
    End,
}

/// Read one line of at most `max` bytes into `line`, keeping the end of a
/// longer one in `tail` (its last 4 KiB or more); memory stays bounded by
/// `max` whatever the input.
pub fn read_line(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    tail: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    line.clear();
    tail.clear();
    let mut oversized = false;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (any, oversized) {
                (false, _) => Line::End,
                (true, false) => Line::Whole,
                (true, true) => Line::Oversized,
            });
        }
        any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        if !oversized && line.len() + chunk.len() > max {
            let room = max - line.len();
            line.extend_from_slice(&chunk[..room]);
            oversized = true;
            tail.extend_from_slice(&chunk[room..]);
        } else if oversized {
            tail.extend_from_slice(chunk);
        } else {
            line.extend_from_slice(chunk);
        }
        if tail.len() > 2 * TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
        let used = done.unwrap_or(available.len());
        input.consume(used);
        if done.is_some() {
            return Ok(if oversized {
                Line::Oversized
            } else {
                Line::Whole
            });
        }
    }
}

/// The reader thread: frame stdin, hand typed messages to rmcp, answer the
/// rest. Ends at the end of stdin (or when rmcp is gone).
fn read_stdin(to_rmcp: mpsc::Sender<ClientJsonRpcMessage>, out: std_mpsc::Sender<Vec<u8>>) {
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(1 << 16, stdin.lock());
    let (mut line, mut tail) = (Vec::new(), Vec::new());
    loop {
        let refusal = match read_line(&mut input, &mut line, &mut tail, MAX_MESSAGE_BYTES) {
            Ok(Line::End) | Err(_) => return,
            Ok(Line::Oversized) => framing::too_large(&line, &tail),
            Ok(Line::Whole) => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.trim_ascii().is_empty() {
                    continue;
                }
                match framing::read_message(text) {
                    Ok(message) => {
                        if to_rmcp.blocking_send(message).is_err() {
                            return;
                        }
                        continue;
                    }
                    Err(refusal) => refusal,
                }
            }
        };
        if let Some(answer) = refusal.response() {
            let mut bytes = answer.to_string().into_bytes();
            bytes.push(b'\n');
            if out.send(bytes).is_err() {
                return;
            }
        }
    }
}

/// The writer thread: every answer, one line each, flushed when no other
/// waits; an empty one ends it.
fn write_stdout(answers: std_mpsc::Receiver<Vec<u8>>) {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    while let Ok(first) = answers.recv() {
        let mut last = first.is_empty();
        if out.write_all(&first).is_err() {
            return;
        }
        while !last {
            let Ok(next) = answers.try_recv() else { break };
            last = next.is_empty();
            if out.write_all(&next).is_err() {
                return;
            }
        }
        if out.flush().is_err() || last {
            return;
        }
    }
}

/// Serve `server` over stdin/stdout until the client closes stdin.
pub fn serve_stdio(server: EngineServer) -> Result<(), Error> {
    let (to_rmcp, incoming) = mpsc::channel(16);
    let (out, answers) = std_mpsc::channel();
    let writer = std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || write_stdout(answers))
        .map_err(|e| Error::io(format!("cannot start the stdout thread: {e}")))?;
    let reader_out = out.clone();
    // Not joined: it may sit in a read of stdin when rmcp stops first.
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || read_stdin(to_rmcp, reader_out))
        .map_err(|e| Error::io(format!("cannot start the stdin thread: {e}")))?;
    let finish = out.clone();
    let transport = ChannelTransport { incoming, out };
    let rt = runtime()?;
    let served = rt.block_on(async move {
        let running = server
            .serve(transport)
            .await
            .map_err(|e| Error::io(format!("MCP over stdio: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::io(format!("MCP over stdio: {e}")))?;
        Ok(())
    });
    // Dropping the runtime waits for engine calls still running.
    drop(rt);
    // Every answer rmcp gave is queued before this empty one, which ends the
    // writer once they are written (the reader may still hold a sender).
    let _ = finish.send(Vec::new());
    let _ = writer.join();
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<(Line, Vec<u8>, Vec<u8>)> {
        let mut reader = io::BufReader::with_capacity(3, input);
        let (mut line, mut tail) = (Vec::new(), Vec::new());
        let mut out = Vec::new();
        loop {
            let got = read_line(&mut reader, &mut line, &mut tail, max).unwrap();
            if got == Line::End {
                return out;
            }
            out.push((got, line.clone(), tail.clone()));
        }
    }

    #[test]
    fn lines_are_framed_and_bounded() {
        let got = lines(b"ab\n0123456789\nlast", 5);
        assert_eq!(
            got,
            [
                (Line::Whole, b"ab".to_vec(), vec![]),
                (Line::Oversized, b"01234".to_vec(), b"56789".to_vec()),
                (Line::Whole, b"last".to_vec(), vec![]),
            ]
        );
        assert_eq!(lines(b"", 5), []);
        assert_eq!(lines(b"\n", 5), [(Line::Whole, vec![], vec![])]);
    }
}
