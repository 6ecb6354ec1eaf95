//! The one SHA-256 helper: every tool hashes file bytes through here, so the
//! lowercase-hex form of a digest is defined in exactly one place
//! ([`to_hex`], which the conformance runner uses too, for the digests it
//! computes incrementally).

use std::io::{self, Read};
use std::sync::mpsc;
use std::thread;

use sha2::{Digest, Sha256};

use crate::parallel;

/// Lowercase hex SHA-256 of `bytes`, the form every tool reports and accepts.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// [`sha256_hex`] of the concatenation of `parts`, hashed part by part
/// (the engine hashes spliced content this way, never assembling it).
pub fn sha256_hex_of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    to_hex(&hasher.finalize())
}

/// Read `reader` to its end and return the bytes with their [`sha256_hex`].
///
/// `size` is the length the caller expects (a file's metadata). A large
/// input is read in stretches of 4 MiB, each hashed on a second thread as
/// soon as it is in, so the SHA-256 of a stale check runs beside the read
/// instead of after it (docs/performance.md: for 100 MB it is as long as
/// the read itself). The digest is always that of the bytes
/// returned: a file that grows or shrinks meanwhile is read to its end, as
/// [`Read::read_to_end`] would, and hashed as read.
pub(crate) fn read_to_end_hashed(
    reader: &mut impl Read,
    size: usize,
) -> io::Result<(Vec<u8>, String)> {
    if size < 2 * HASHED_STRETCH || parallel::cores() < 2 {
        let mut bytes = Vec::with_capacity(size);
        reader.read_to_end(&mut bytes)?;
        let digest = sha256_hex(&bytes);
        return Ok((bytes, digest));
    }
    let mut bytes = vec![0u8; size];
    let (read, mut hasher) = thread::scope(|scope| -> io::Result<(usize, Sha256)> {
        let (to_helper, from_reader) = mpsc::channel::<&[u8]>();
        let helper = thread::Builder::new()
            .spawn_scoped(scope, move || {
                let mut hasher = Sha256::new();
                for stretch in from_reader {
                    hasher.update(stretch);
                }
                hasher
            })
            .ok();
        // Without a second thread (the system refused one), hash here.
        let mut here = Sha256::new();
        let mut read = 0;
        for stretch in bytes.chunks_mut(HASHED_STRETCH) {
            let n = read_full(reader, stretch)?;
            read += n;
            let whole = stretch.len();
            let done: &[u8] = stretch;
            let done = &done[..n];
            match &helper {
                // A send fails only if the helper is gone: its join says so.
                Some(_) => drop(to_helper.send(done)),
                None => here.update(done),
            }
            if n < whole {
                break;
            }
        }
        drop(to_helper);
        let hasher = match helper {
            Some(helper) => helper
                .join()
                .map_err(|_| io::Error::other("the hashing thread failed"))?,
            None => here,
        };
        Ok((read, hasher))
    })?;
    bytes.truncate(read);
    if read == size {
        // The file may have grown since its size was taken.
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest)?;
        hasher.update(&rest);
        bytes.extend_from_slice(&rest);
    }
    Ok((bytes, to_hex(&hasher.finalize())))
}

/// How much [`read_to_end_hashed`] reads before handing it to the hashing
/// thread: large enough that the hand-over costs nothing, small enough that
/// the hash finishes soon after the read.
const HASHED_STRETCH: usize = 4 << 20;

/// Fill `buf` from `reader` as far as it goes; fewer bytes only at the end.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// True when `s` is exactly 64 hex digits (either case).
///
/// Tools compare digests case-insensitively: a caller that copied an
/// upper-case digest from another tool still names the same bytes.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// True when `expected` (already checked with [`is_sha256_hex`]) names `bytes`.
/// The benches' check, so `testing` only: the tools compare digests they
/// already hold (`same_digest`).
#[cfg(any(test, feature = "testing"))]
pub fn matches_sha256(expected: &str, bytes: &[u8]) -> bool {
    same_digest(expected, &sha256_hex(bytes))
}

/// True when two hex digests name the same bytes: the one comparison every
/// tool makes (case-insensitive, see [`is_sha256_hex`]).
pub(crate) fn same_digest(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Lowercase hex of `digest` (two digits a byte): the form of
/// [`sha256_hex`], for a digest computed elsewhere (incrementally, say).
pub fn to_hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(digest.len() * 2);
    for &b in digest {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_has_the_well_known_digest() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn hex_check_accepts_only_64_hex_digits() {
        assert!(is_sha256_hex(&sha256_hex(b"x")));
        assert!(is_sha256_hex(&sha256_hex(b"x").to_uppercase()));
        assert!(!is_sha256_hex(""));
        assert!(!is_sha256_hex(&"g".repeat(64)));
        assert!(!is_sha256_hex(&"a".repeat(63)));
        assert!(!is_sha256_hex(&"a".repeat(65)));
    }

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(to_hex(&[]), "");
        assert_eq!(to_hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    /// A reader that hands out at most `step` bytes a call, so stretches
    /// are filled by several reads.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_hashed_read_returns_the_bytes_read_and_their_digest() {
        let big: Vec<u8> = (0..3 * HASHED_STRETCH + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        for len in [0, 1, 2 * HASHED_STRETCH, 2 * HASHED_STRETCH + 1, big.len()] {
            let bytes = &big[..len];
            // The size the caller expected: right, too small (the file grew),
            // too large (it shrank).
            for size in [len, len / 2, len + 3 * HASHED_STRETCH] {
                let mut reader = Trickle {
                    bytes,
                    step: 1 << 20,
                };
                let (read, digest) = read_to_end_hashed(&mut reader, size).unwrap();
                assert_eq!(read, bytes, "{len} bytes, {size} expected");
                assert_eq!(digest, sha256_hex(bytes), "{len} bytes, {size} expected");
            }
        }
    }

    #[test]
    fn comparison_ignores_case() {
        assert!(matches_sha256(&sha256_hex(b"abc").to_uppercase(), b"abc"));
        assert!(!matches_sha256(&sha256_hex(b"abd"), b"abc"));
    }
}
