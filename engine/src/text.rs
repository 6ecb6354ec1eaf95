//! Line views over file bytes, shared by every tool that edits by line.
//!
//! A *line* is a run of bytes ended by `\n`, or the run after the last `\n`
//! when the file does not end with one (TUL-002 §6: a final line without a
//! newline is still a line). A line's *content* excludes its `\n` and one
//! `\r` before it, so a CRLF file is matched by LF text; its *ending* is
//! `"\r\n"`, `"\n"` or `""` and is kept byte-for-byte wherever a tool does
//! not rewrite the line. A UTF-8 byte-order mark is not part of line 1's
//! content and stays in front of the file.
//!
//! The index is one `Vec<usize>` of line starts, built with memchr: no
//! allocation per line.

/// The UTF-8 byte-order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The line ending a tool writes for lines it adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Newline {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl Newline {
    /// The bytes of this ending.
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Newline::Lf => b"\n",
            Newline::CrLf => b"\r\n",
        }
    }
}

/// A file's bytes split into lines.
#[derive(Clone, Debug)]
pub struct Lines<'a> {
    bytes: &'a [u8],
    bom: bool,
    /// Start offset of every line, then `bytes.len()` as a sentinel.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Index the lines of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        let bom = bytes.starts_with(BOM);
        let body = if bom { BOM.len() } else { 0 };
        let mut starts = Vec::with_capacity(bytes.len() / 40 + 2);
        if body < bytes.len() {
            starts.push(body);
            starts.extend(memchr::memchr_iter(b'\n', &bytes[body..]).map(|i| body + i + 1));
            if starts.last() == Some(&bytes.len()) {
                starts.pop();
            }
        }
        starts.push(bytes.len());
        Lines { bytes, bom, starts }
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// True when the file starts with a UTF-8 byte-order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// The number of lines (an empty file has none; `"a"` and `"a\n"` have one).
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when the file has no lines.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` (0-based) with its ending.
    pub fn full(&self, i: usize) -> &'a [u8] {
        &self.bytes[self.starts[i]..self.starts[i + 1]]
    }

    /// Line `i` (0-based) without its ending.
    pub fn content(&self, i: usize) -> &'a [u8] {
        let full = self.full(i);
        let n = ending_len(full);
        &full[..full.len() - n]
    }

    /// The ending of line `i`: `"\r\n"`, `"\n"` or `""` (last line only).
    pub fn ending(&self, i: usize) -> &'a [u8] {
        let full = self.full(i);
        &full[full.len() - ending_len(full)..]
    }

    /// Byte offset where line `i` starts (`i == len()` gives the end of the file).
    pub fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// True when the last line ends with a newline (an empty file: true, there is nothing to end).
    pub fn ends_with_newline(&self) -> bool {
        self.is_empty() || !self.ending(self.len() - 1).is_empty()
    }

    /// The ending a tool should use for lines it adds: that of the first
    /// line that has one, LF for a file without any.
    pub fn newline(&self) -> Newline {
        (0..self.len())
            .map(|i| self.ending(i))
            .find(|e| !e.is_empty())
            .map_or(Newline::Lf, |e| {
                if e == b"\r\n" {
                    Newline::CrLf
                } else {
                    Newline::Lf
                }
            })
    }
}

fn ending_len(full: &[u8]) -> usize {
    if full.ends_with(b"\r\n") {
        2
    } else if full.ends_with(b"\n") {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(s: &[u8]) -> Vec<&[u8]> {
        let l = Lines::new(s);
        (0..l.len()).map(|i| l.content(i)).collect()
    }

    #[test]
    fn a_final_line_without_newline_is_a_line() {
        assert_eq!(contents(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(contents(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(contents(b""), Vec::<&[u8]>::new());
        assert_eq!(contents(b"\n"), vec![&b""[..]]);
        assert!(!Lines::new(b"a\nb").ends_with_newline());
        assert!(Lines::new(b"a\nb\n").ends_with_newline());
    }

    #[test]
    fn crlf_is_an_ending_not_content() {
        let l = Lines::new(b"a\r\nb\r\n");
        assert_eq!(l.content(0), b"a");
        assert_eq!(l.ending(0), b"\r\n");
        assert_eq!(l.newline(), Newline::CrLf);
        assert_eq!(Lines::new(b"a\nb\r\n").newline(), Newline::Lf);
        // A lone CR is content.
        assert_eq!(Lines::new(b"a\rb\n").content(0), b"a\rb");
    }

    #[test]
    fn a_bom_is_not_content() {
        let l = Lines::new(b"\xEF\xBB\xBFx\n");
        assert!(l.has_bom());
        assert_eq!(l.content(0), b"x");
        assert_eq!(l.start(0), 3);
        let only_bom = Lines::new(BOM);
        assert!(only_bom.is_empty());
    }
}
