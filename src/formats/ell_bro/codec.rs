//! ELL-BRO's delta code: the deltas of a row (first column + 1, then differences; 0 = padding)
//! packed into 64-bit symbols, each in its slice column's bit width, least significant bit first
//! (see the layout in the parent module). [`Unpacker::take`] is the step `kernels/ell_bro.cu`
//! takes.

/// Bits of one symbol (fixed: 002's value).
pub const SYMBOL_BITS: u32 = 64;

/// Delta `k` of a row with columns `cols`: the first column + 1, then differences; 0 past the end.
pub(super) fn delta(cols: &[u32], k: usize) -> u64 {
    match k {
        _ if k >= cols.len() => 0,
        0 => cols[0] as u64 + 1,
        _ => (cols[k] - cols[k - 1]) as u64,
    }
}

/// Bits of delta `d` (0 for the padding delta 0).
pub(super) fn bits_of(d: u64) -> u8 {
    (64 - d.leading_zeros()) as u8
}

/// Symbols per row of a slice with these column widths.
pub(super) fn row_symbols(bits: &[u8]) -> usize {
    let total: usize = bits.iter().map(|&b| b as usize).sum();
    total.div_ceil(SYMBOL_BITS as usize)
}

/// The symbols of a row with columns `cols` in a slice with column widths `bits` (each at least
/// the bits of the row's delta there), into `words` (`row_symbols(bits)` of them).
pub(super) fn pack(cols: &[u32], bits: &[u8], words: &mut Vec<u64>) {
    words.clear();
    let (mut cur, mut used) = (0u64, 0u32);
    for (k, &b) in bits.iter().enumerate() {
        let (d, b) = (delta(cols, k), b as u32);
        cur |= d << used;
        used += b;
        if used >= SYMBOL_BITS {
            words.push(cur);
            used -= SYMBOL_BITS;
            cur = if used == 0 { 0 } else { d >> (b - used) };
        }
    }
    if used > 0 {
        words.push(cur);
    }
}

/// Reads one row's deltas back: its symbols are `sym[next], sym[next + stride], …`. The same steps
/// as `kernels/ell_bro.cu`.
pub(super) struct Unpacker<'a> {
    sym: &'a [u64],
    next: usize,
    stride: usize,
    /// The current symbol's unread bits (its low `avail` bits; the rest 0).
    cur: u64,
    avail: u32,
}

impl<'a> Unpacker<'a> {
    /// The reader of the row whose first symbol is `sym[first]` and the next ones `stride` apart.
    pub(super) fn new(sym: &'a [u64], first: usize, stride: usize) -> Self {
        Unpacker {
            sym,
            next: first,
            stride,
            cur: 0,
            avail: 0,
        }
    }

    /// The next delta, `b ≤ 32` bits wide.
    pub(super) fn take(&mut self, b: u32) -> u64 {
        let mask = (1u64 << b) - 1;
        if b <= self.avail {
            let d = self.cur & mask;
            self.cur >>= b;
            self.avail -= b;
            d
        } else {
            let w = self.sym[self.next];
            self.next += self.stride;
            let d = (self.cur | (w << self.avail)) & mask;
            self.cur = w >> (b - self.avail);
            self.avail = SYMBOL_BITS - (b - self.avail);
            d
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn deltas_mark_padding_with_zero_and_fit_32_bits() {
        let cols = [0u32, 5, 6, u32::MAX - 1];
        let d: Vec<u64> = (0..6).map(|k| delta(&cols, k)).collect();
        assert_eq!(d, [1, 5, 1, u32::MAX as u64 - 7, 0, 0]);
        assert_eq!(delta(&[u32::MAX - 1], 0), u32::MAX as u64);
        assert_eq!(
            (bits_of(0), bits_of(1), bits_of(u32::MAX as u64)),
            (0, 1, 32)
        );
    }

    #[test]
    fn fields_of_1_to_32_bits_straddle_symbols_and_read_back() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for trial in 0..300 {
            // Random increasing columns up to u32::MAX − 1, then padding; widths at least the
            // deltas' bits (a slice's widths serve all its rows), 32 often.
            let len = rng.random_range(0..40usize);
            let mut cols: Vec<u32> = (0..len)
                .map(|_| rng.random_range(0..u32::MAX - 1))
                .collect();
            cols.sort_unstable();
            cols.dedup();
            let width = cols.len() + rng.random_range(0..4usize);
            let bits: Vec<u8> = (0..width)
                .map(|k| {
                    let need = bits_of(delta(&cols, k)).max(1);
                    if trial % 3 == 0 {
                        32
                    } else {
                        rng.random_range(need..=32)
                    }
                })
                .collect();
            let mut words = Vec::new();
            pack(&cols, &bits, &mut words);
            assert_eq!(words.len(), row_symbols(&bits));
            // Interleaved with another row's symbols (stride 2), as in a slice of two lanes.
            let sym: Vec<u64> = words.iter().flat_map(|&w| [!0u64, w]).collect();
            let mut u = Unpacker::new(&sym, 1, 2);
            for (k, &b) in bits.iter().enumerate() {
                assert_eq!(
                    u.take(b as u32),
                    delta(&cols, k),
                    "trial {trial}, delta {k}"
                );
            }
        }
    }
}
