//! Byte-level scanning shared by the header and body parsers: blanks, 1-based indices, values.
//!
//! Integer parsing is hand-written (a digit loop with overflow checks is several times faster
//! than going through `str::parse`, which needs UTF-8 validation first); real values go through
//! `fast-float2`, which returns the correctly rounded value for the target precision.

use crate::scalar::{Precision, Scalar};

/// Whether `b` separates tokens inside a line: space, tab, or the `\r` of a CRLF line end.
#[inline(always)]
pub fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

/// Whether a token ends at `s[p]` (blank, line end or end of input).
#[inline(always)]
pub fn token_ends(s: &[u8], p: usize) -> bool {
    p >= s.len() || is_blank(s[p]) || s[p] == b'\n'
}

/// First position at or after `p` that is not a blank (may be `s.len()`).
#[inline(always)]
pub fn skip_blanks(s: &[u8], mut p: usize) -> usize {
    while p < s.len() && is_blank(s[p]) {
        p += 1;
    }
    p
}

/// Position just after the `\n` ending the line that contains `p`, or `s.len()`.
#[inline(always)]
pub fn next_line(s: &[u8], p: usize) -> usize {
    match memchr::memchr(b'\n', &s[p.min(s.len())..]) {
        Some(k) => p + k + 1,
        None => s.len(),
    }
}

/// [`next_line`] for short lines (Matrix Market entry lines are a few dozen bytes): scans
/// eight bytes at a time inline, and hands over to `memchr` after 64 bytes. Called once per
/// line, `memchr`'s runtime-dispatched (indirect) call cost more than the scan itself: pass 1
/// of the coordinate parser took 85 ms with it on the benchmark file, 69–77 ms with this.
#[inline(always)]
pub fn next_line_short(s: &[u8], p: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut q = p;
    while q + 8 <= s.len() && q < p + 64 {
        let w = u64::from_le_bytes(s[q..q + 8].try_into().unwrap()) ^ NL;
        // Classic "has a zero byte": the lowest set bit marks the first zero byte exactly.
        let z = w.wrapping_sub(LO) & !w & HI;
        if z != 0 {
            return q + (z.trailing_zeros() / 8) as usize + 1;
        }
        q += 8;
    }
    next_line(s, q)
}

/// Whether only blanks remain on the line at `p`; returns the position after the line end.
#[inline(always)]
pub fn line_rest_is_blank(s: &[u8], p: usize) -> Option<usize> {
    let q = skip_blanks(s, p);
    if q >= s.len() {
        Some(q)
    } else if s[q] == b'\n' {
        Some(q + 1)
    } else {
        None
    }
}

/// The token starting at `p`, quoted and shortened for an error message (`end of line` if none).
pub fn show_token(s: &[u8], p: usize) -> String {
    let p = skip_blanks(s, p);
    if p >= s.len() {
        return "end of file".into();
    }
    if s[p] == b'\n' {
        return "end of line".into();
    }
    let mut q = p;
    while !token_ends(s, q) && q - p < 40 {
        q += 1;
    }
    let more = if token_ends(s, q) { "" } else { "…" };
    format!("{:?}{more}", String::from_utf8_lossy(&s[p..q]))
}

/// Why an index token was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadIndex {
    /// Not a run of decimal digits (or nothing at all).
    NotInteger,
    /// Starts with a minus sign.
    Negative,
    /// Does not fit in 64 bits.
    TooLarge,
}

/// Parse an unsigned decimal integer token at `p` (digits only, no sign); returns the value and
/// the position after it.
#[inline(always)]
pub fn parse_uint(s: &[u8], p: usize) -> Result<(u64, usize), BadIndex> {
    let mut q = p;
    let mut v: u64 = 0;
    // Up to 19 digits cannot overflow, so the hot loop needs no overflow checks.
    while q < s.len() {
        let d = s[q].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        q += 1;
    }
    if q == p || !token_ends(s, q) {
        if p < s.len() && s[p] == b'-' {
            return Err(BadIndex::Negative);
        }
        return Err(BadIndex::NotInteger);
    }
    if q - p > 19 {
        let mut c: u64 = 0;
        for &b in &s[p..q] {
            c = c
                .checked_mul(10)
                .and_then(|c| c.checked_add((b - b'0') as u64))
                .ok_or(BadIndex::TooLarge)?;
        }
        v = c;
    }
    Ok((v, q))
}

/// Parse a real value token at `p` in the precision of `T` (correctly rounded, not via `f64`);
/// accepts `nan`, `inf`, `infinity` in any case with an optional sign.
#[inline(always)]
pub fn parse_real<T: Scalar>(s: &[u8], p: usize) -> Option<(T, usize)> {
    let (v, n) = match T::PRECISION {
        Precision::F32 => {
            let (v, n) = fast_float2::parse_partial::<f32, _>(&s[p..]).ok()?;
            (T::cast_f64(v as f64), n)
        }
        Precision::F64 => {
            let (v, n) = fast_float2::parse_partial::<f64, _>(&s[p..]).ok()?;
            (T::cast_f64(v), n)
        }
    };
    let q = p + n;
    if token_ends(s, q) {
        return Some((v, q));
    }
    fortran_real(s, p)
}

/// A real with a Fortran exponent, `1.5D+00` or `2d-3` (written by Fortran programs; scipy reads
/// them): the token with its `D` read as `E`. The rare slow path of [`parse_real`].
#[cold]
fn fortran_real<T: Scalar>(s: &[u8], p: usize) -> Option<(T, usize)> {
    let mut q = p;
    while !token_ends(s, q) {
        q += 1;
    }
    let token = &s[p..q];
    let d = token.iter().position(|&b| b == b'd' || b == b'D')?;
    if d == 0 || !token[..d].iter().any(u8::is_ascii_digit) {
        return None;
    }
    let mut t = token.to_vec();
    t[d] = b'e';
    let v = match T::PRECISION {
        Precision::F32 => T::cast_f64(fast_float2::parse::<f32, _>(&t).ok()? as f64),
        Precision::F64 => T::cast_f64(fast_float2::parse::<f64, _>(&t).ok()?),
    };
    Some((v, q))
}

/// Parse an `integer`-field value at `p`: an optional sign and decimal digits, converted to `T`
/// (exact up to 2^24 for `f32` and 2^53 for `f64`, correctly rounded beyond).
#[inline(always)]
pub fn parse_integer_value<T: Scalar>(s: &[u8], p: usize) -> Option<(T, usize)> {
    let mut q = p;
    if q < s.len() && (s[q] == b'-' || s[q] == b'+') {
        q += 1;
    }
    let digits = q;
    while q < s.len() && s[q].is_ascii_digit() {
        q += 1;
    }
    if q == digits || !token_ends(s, q) {
        return None;
    }
    parse_real::<T>(s, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uint_tokens() {
        assert_eq!(parse_uint(b"123 4", 0), Ok((123, 3)));
        assert_eq!(parse_uint(b"7\n", 0), Ok((7, 1)));
        assert_eq!(parse_uint(b"-7", 0), Err(BadIndex::Negative));
        assert_eq!(parse_uint(b"7x", 0), Err(BadIndex::NotInteger));
        assert_eq!(parse_uint(b"", 0), Err(BadIndex::NotInteger));
        assert_eq!(
            parse_uint(b"18446744073709551616", 0),
            Err(BadIndex::TooLarge)
        );
        assert_eq!(parse_uint(b"18446744073709551615", 0), Ok((u64::MAX, 20)));
    }

    #[test]
    fn short_line_scan_matches_memchr() {
        // Every start position in lines of every length around the 8-byte words and the
        // 64-byte hand-over, with and without a final newline.
        let mut s = Vec::new();
        for len in 0..80 {
            s.extend(std::iter::repeat_n(b'7', len));
            s.push(b'\n');
        }
        s.extend_from_slice(b"1 2 3.5");
        for p in 0..=s.len() {
            assert_eq!(next_line_short(&s, p), next_line(&s, p), "at {p}");
        }
    }

    #[test]
    fn real_tokens() {
        assert_eq!(parse_real::<f64>(b"1.5e3 ", 0), Some((1500.0, 5)));
        assert_eq!(parse_real::<f64>(b"-inf", 0), Some((f64::NEG_INFINITY, 4)));
        assert!(parse_real::<f64>(b"NaN", 0).unwrap().0.is_nan());
        assert_eq!(parse_real::<f64>(b"1.5x", 0), None);
        assert_eq!(parse_real::<f64>(b"abc", 0), None);
        // f32 parsing rounds the decimal directly, not through f64.
        assert_eq!(parse_real::<f32>(b"0.1", 0), Some((0.1f32, 3)));
        assert_eq!(parse_integer_value::<f64>(b"-42", 0), Some((-42.0, 3)));
        assert_eq!(parse_integer_value::<f64>(b"4.2", 0), None);
    }
}
