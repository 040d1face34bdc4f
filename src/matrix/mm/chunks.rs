//! Splitting the data lines into chunks that are parsed in parallel, and mapping what a chunk
//! found back to 1-based line numbers of the whole file.

use super::lex;
use crate::{Error, Result};
use std::ops::Range;

/// Below this many bytes per chunk, splitting costs more than it saves.
const MIN_CHUNK_BYTES: usize = 256 << 10;

/// A chunk never exceeds 4 GiB, so that per-chunk counters fit in `u32` (an entry line takes at
/// least 3 bytes, so a chunk holds fewer than 2^32 entries).
pub const MAX_CHUNK_BYTES: usize = 1 << 32;

/// Chunks per worker thread: more than one, so that work stealing evens out chunks that parse
/// at different speeds (or threads that get less CPU on a busy machine).
const CHUNKS_PER_THREAD: usize = 4;

/// How many chunks to cut `body_len` bytes into: [`CHUNKS_PER_THREAD`] per worker thread for
/// large inputs, one for small ones; at least enough to respect [`MAX_CHUNK_BYTES`]. `forced`
/// overrides the thread-based choice (tests use it to exercise many chunks).
pub fn count(body_len: usize, forced: Option<usize>) -> usize {
    let min = body_len.div_ceil(MAX_CHUNK_BYTES).max(1);
    let want = match forced {
        Some(n) => n,
        None => (rayon::current_num_threads() * CHUNKS_PER_THREAD).min(body_len / MIN_CHUNK_BYTES),
    };
    want.max(min)
}

/// Cut `s[start..]` into at most `n` ranges; every range but the last ends just after a `\n`, so
/// no line is split. Ranges may be fewer than `n` when lines are long.
pub fn split(s: &[u8], start: usize, n: usize) -> Vec<Range<usize>> {
    let len = s.len().saturating_sub(start);
    let n = n.max(1);
    let mut out = Vec::with_capacity(n);
    let mut a = start.min(s.len());
    for k in 1..=n {
        let b = if k == n {
            s.len()
        } else {
            let target = start + (len as u128 * k as u128 / n as u128) as usize;
            if target <= a {
                continue;
            }
            lex::next_line(s, target - 1)
        };
        if b > a || (k == n && out.is_empty()) {
            out.push(a..b);
            a = b;
        }
    }
    out
}

/// A parse error found inside one chunk, before the chunk knows where it starts in the file.
#[derive(Debug)]
pub struct LocalErr {
    /// 0-based line offset within the chunk.
    pub line: u64,
    /// Data lines (entries) the chunk had accepted before this line.
    pub entry: u64,
    /// What was wrong and what was expected.
    pub msg: String,
}

/// What one chunk saw: line and entry counts and its first error.
pub trait ChunkSummary {
    /// Lines in the chunk (a final line without `\n` counts).
    fn lines(&self) -> u64;
    /// Entries (data lines) accepted.
    fn entries(&self) -> u64;
    /// The first error, if any.
    fn err(&mut self) -> Option<LocalErr>;
}

/// Turn per-chunk results into the file-level verdict: the first error in file order, or an
/// entry count that differs from `declared`. Returns the line number each chunk starts at.
///
/// When a chunk's error comes after more than `declared` entries, the surplus entry is reported
/// instead (it comes first in the file). Errors found by the first pass (row indices, columns of
/// symmetric files, the entry count) are therefore reported before those found by the second
/// pass (values, columns of general files), even when the latter sit on an earlier line.
pub fn resolve<S: ChunkSummary>(
    name: &str,
    s: &[u8],
    ranges: &[Range<usize>],
    scans: &mut [S],
    body_line: u64,
    declared: u64,
    size_line: u64,
) -> Result<Vec<u64>> {
    let mut line0 = Vec::with_capacity(scans.len());
    let mut entry0 = Vec::with_capacity(scans.len());
    let (mut line, mut entries) = (body_line, 0u64);
    for sc in scans.iter() {
        line0.push(line);
        entry0.push(entries);
        line += sc.lines();
        entries += sc.entries();
    }
    let too_many = |line0: &[u64], entry0: &[u64], scans: &[S]| -> Error {
        // The chunk holding entry number `declared` (0-based), and its line.
        let c = (0..scans.len())
            .rev()
            .find(|&c| entry0[c] <= declared)
            .unwrap_or(0);
        let r = &ranges[c];
        let local = nth_data_line(s, r.start, r.end, declared - entry0[c]);
        Error::parse(
            name,
            line0[c] + local,
            format!(
                "more entries than the {declared} declared on the size line (line {size_line}): \
                 expected end of file"
            ),
        )
    };
    for c in 0..scans.len() {
        if let Some(e) = scans[c].err() {
            if entry0[c] + e.entry > declared {
                return Err(too_many(&line0, &entry0, scans));
            }
            return Err(Error::parse(name, line0[c] + e.line, e.msg));
        }
    }
    if entries > declared {
        return Err(too_many(&line0, &entry0, scans));
    }
    if entries < declared {
        return Err(Error::parse(
            name,
            line,
            format!(
                "unexpected end of file: expected {declared} entries as declared on the size line \
                 (line {size_line}), found {entries}"
            ),
        ));
    }
    Ok(line0)
}

/// 0-based line offset, from `start`, of the `k`-th (0-based) data line in `s[start..end]`
/// (data lines are neither blank nor `%` comments). Returns the line count if there is none.
pub fn nth_data_line(s: &[u8], start: usize, end: usize, k: u64) -> u64 {
    let (mut p, mut line, mut seen) = (start, 0u64, 0u64);
    while p < end {
        let q = lex::skip_blanks(s, p);
        let data = q < end && s[q] != b'\n' && s[q] != b'%';
        if data {
            if seen == k {
                return line;
            }
            seen += 1;
        }
        p = lex::next_line(s, p);
        line += 1;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_lines_whole() {
        let s = b"aa\nbbbb\nc\n\ndddddd\ne";
        for n in 1..12 {
            let r = split(s, 3, n);
            assert_eq!(r.first().unwrap().start, 3);
            assert_eq!(r.last().unwrap().end, s.len());
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(s[w[0].end - 1], b'\n');
            }
            assert!(r.len() <= n);
        }
        assert_eq!(split(b"", 0, 4), vec![0..0]);
    }

    #[test]
    fn data_lines_skip_comments() {
        let s = b"% c\n1 1\n\n  \n2 2\n3 3";
        assert_eq!(nth_data_line(s, 0, s.len(), 0), 1);
        assert_eq!(nth_data_line(s, 0, s.len(), 1), 4);
        assert_eq!(nth_data_line(s, 0, s.len(), 2), 5);
        assert_eq!(nth_data_line(s, 0, s.len(), 3), 6);
    }
}
