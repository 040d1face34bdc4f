//! The dynamic program of 004 §4 (Fig. 8 and Fig. 11): the cheapest partition of `N` consecutive
//! strips into blocks of consecutive strips, given the least predicted time `E[i, j]` of every
//! block and the format `F[i, j]` that achieves it.
//!
//! ```text
//! T[1, j] = E[1, 1]                                             if j = 1
//!         = min( min_{1≤k<j} T[1, k] + E[k+1, j],  E[1, j] )    if 2 ≤ j ≤ N
//! ```
//!
//! The table is fed one column `E[·, j]` at a time ([`Dp::push_column`]), so the optimizer never
//! holds the `N(N+1)/2` entries of `E` at once: a column only needs `T[1, k]` for `k < j`.
//!
//! **Ties** are broken exactly as Fig. 11: `T[1, j]` starts at the single block `E[1, j]` and is
//! replaced only by a split that is *strictly* cheaper, trying `k = 1, 2, …, j−1` in order. So
//! where splitting does not pay, the answer is the single best block, and among equal splits the
//! one whose last block starts earliest wins. A `NaN` entry never wins a comparison, i.e. it
//! counts as a block that cannot be built (as `+∞` does).
//!
//! Indices here are 0-based (`strips 0..n`); reports print the paper's 1-based `[i, j]`.

/// One block of an optimal partition.
#[derive(Clone, Debug, PartialEq)]
pub struct DpBlock {
    /// First strip (0-based, inclusive).
    pub first: usize,
    /// Last strip (0-based, inclusive).
    pub last: usize,
    /// `F[first, last]`: the index of the block's format among the candidates.
    pub format: u32,
    /// `E[first, last]`: the block's predicted seconds.
    pub seconds: f64,
}

/// An optimal partition of the strips `0..n`.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// Blocks in row order; they cover `0..n` without gaps.
    pub blocks: Vec<DpBlock>,
    /// `T[1, N]`: the sum of the blocks' times, added left to right.
    pub total: f64,
}

/// The bottom-up dynamic program, fed column by column.
#[derive(Clone, Debug)]
pub struct Dp {
    n: usize,
    /// `T[1, j]` for the columns done.
    t: Vec<f64>,
    /// `S[1, j]`, as the first strip of the last block (`0` = no split, the paper's `S = j`).
    start: Vec<usize>,
    /// `F` and `E` of the last block of `T[1, j]`.
    last: Vec<(u32, f64)>,
}

impl Dp {
    /// A program over `n` strips with no column yet.
    pub fn new(n: usize) -> Dp {
        Dp {
            n,
            t: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            last: Vec::with_capacity(n),
        }
    }

    /// The next column to push, `j` (0-based).
    pub fn next_column(&self) -> usize {
        self.t.len()
    }

    /// Feed column `j = self.next_column()`: `e[i] = E[i, j]` and `f[i] = F[i, j]` for
    /// `i = 0..=j`. Returns `T[1, j]`.
    ///
    /// # Panics
    /// If every column was already pushed, or `e` and `f` do not hold `j + 1` entries (a
    /// programming error, not bad input).
    pub fn push_column(&mut self, e: &[f64], f: &[u32]) -> f64 {
        let j = self.t.len();
        assert!(j < self.n, "all {} columns were already pushed", self.n);
        assert!(
            e.len() == j + 1 && f.len() == j + 1,
            "column {j} needs {} entries (got {} times, {} formats)",
            j + 1,
            e.len(),
            f.len()
        );
        // Lines (04)–(05): the single block [1, j].
        let mut best = e[0];
        let mut start = 0;
        // Lines (06)–(12): k = 1 … j−1 in the paper's 1-based terms, i.e. last block [k+1, j].
        for (i, (&t_before, &e_i)) in self.t.iter().zip(&e[1..]).enumerate() {
            let i = i + 1;
            let q = t_before + e_i;
            if q < best || (best.is_nan() && !q.is_nan()) {
                best = q;
                start = i;
            }
        }
        self.t.push(best);
        self.start.push(start);
        self.last.push((f[start], e[start]));
        best
    }

    /// The optimal partition once every column was pushed (`None` before that).
    pub fn finish(&self) -> Option<Partition> {
        if self.t.len() != self.n {
            return None;
        }
        let mut blocks = Vec::new();
        let mut j = self.n;
        while j > 0 {
            let last = j - 1;
            let first = self.start[last];
            let (format, seconds) = self.last[last];
            blocks.push(DpBlock {
                first,
                last,
                format,
                seconds,
            });
            j = first;
        }
        blocks.reverse();
        Some(Partition {
            blocks,
            total: self.t.last().copied().unwrap_or(0.0),
        })
    }
}

/// Solve a whole table: `e(i, j)` returns `(E[i, j], F[i, j])` for `0 ≤ i ≤ j < n`.
pub fn solve_table(n: usize, mut e: impl FnMut(usize, usize) -> (f64, u32)) -> Partition {
    let mut dp = Dp::new(n);
    let (mut col, mut fmt) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for j in 0..n {
        col.clear();
        fmt.clear();
        for i in 0..=j {
            let (t, f) = e(i, j);
            col.push(t);
            fmt.push(f);
        }
        dp.push_column(&col, &fmt);
    }
    dp.finish().expect("every column was pushed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_block_wins_ties() {
        // Every split costs exactly what the whole does: the paper keeps [1, N].
        let p = solve_table(4, |i, j| ((j - i + 1) as f64, 7));
        assert_eq!(p.blocks.len(), 1);
        assert_eq!((p.blocks[0].first, p.blocks[0].last), (0, 3));
        assert_eq!(p.total, 4.0);
        assert_eq!(p.blocks[0].format, 7);
    }

    #[test]
    fn splits_where_cheaper() {
        // Strips 0–1 are cheap together, strip 2 alone; any block mixing them is expensive.
        let p = solve_table(3, |i, j| match (i, j) {
            (0, 1) => (1.0, 0),
            (2, 2) => (1.0, 1),
            (0, 0) | (1, 1) => (0.75, 0),
            _ => (10.0, 2),
        });
        let spans: Vec<(usize, usize, u32)> = p
            .blocks
            .iter()
            .map(|b| (b.first, b.last, b.format))
            .collect();
        assert_eq!(spans, vec![(0, 1, 0), (2, 2, 1)]);
        assert_eq!(p.total, 2.0);
    }

    #[test]
    fn empty_and_refused() {
        assert_eq!(
            solve_table(0, |_, _| (1.0, 0)),
            Partition {
                blocks: vec![],
                total: 0.0
            }
        );
        // The whole is refused (+∞, NaN): the split is taken.
        let p = solve_table(2, |i, j| if i == j { (1.0, 0) } else { (f64::NAN, 0) });
        assert_eq!(p.blocks.len(), 2);
        assert_eq!(p.total, 2.0);
        let p = solve_table(2, |i, j| if i == j { (f64::INFINITY, 0) } else { (5.0, 1) });
        assert_eq!((p.blocks.len(), p.total), (1, 5.0));
    }
}
