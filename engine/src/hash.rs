//! The one SHA-256 helper: every tool hashes file bytes through here, so the
//! lowercase-hex form of a digest is defined in exactly one place
//! ([`to_hex`], which the conformance runner uses too, for the digests it
//! computes incrementally).

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`, the form every tool reports and accepts.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// [`sha256_hex`] of the concatenation of `parts`, hashed part by part
/// (spliced content, [`crate::content`], is never assembled to be hashed).
pub fn sha256_hex_of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    to_hex(&hasher.finalize())
}

/// True when `s` is exactly 64 hex digits (either case).
///
/// Tools compare digests case-insensitively: a caller that copied an
/// upper-case digest from another tool still names the same bytes.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// True when `expected` (already checked with [`is_sha256_hex`]) names `bytes`.
pub fn matches_sha256(expected: &str, bytes: &[u8]) -> bool {
    expected.eq_ignore_ascii_case(&sha256_hex(bytes))
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

    #[test]
    fn comparison_ignores_case() {
        assert!(matches_sha256(&sha256_hex(b"abc").to_uppercase(), b"abc"));
        assert!(!matches_sha256(&sha256_hex(b"abd"), b"abc"));
    }
}
