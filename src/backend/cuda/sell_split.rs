//! Which SELL slices the kernel (`kernels/sell.cu`) splits over several warps, and how. Pure,
//! tested without a GPU.
//!
//! A warp walking a slice's whole width alone is the slice's critical path: a stack of 4·10⁵
//! rows of 5 entries and 100 rows of 2·10⁴ ran 3.2 ms on the H200 where splitting the wide
//! slices' width over warps ran 25 µs, and the power-law matrix 4.2 ms against 80 µs (session 40,
//! `scripts/prototype/sell_split.cu`, docs/PERFORMANCE.md). The rule (session 41):
//! - the work is `Σ width × lane groups` warp steps (a lane group is 32 lanes of a slice, so a
//!   slice of C = 512 has 16);
//! - a chunk is that work over the device's resident warps (one wave), at least [`MIN_CHUNK`]
//!   steps: a matrix that fills the GPU with whole slices is left alone, a small or skewed one is
//!   cut until one wave holds it;
//! - a slice is split only where it is wider than two chunks, into `⌈width / chunk⌉` chunks of
//!   equal length (the kernel derives each chunk's steps from the width and the count), so no
//!   warp is left a sliver;
//! - and, where the lane groups alone already fill a quarter of the resident warps, only where
//!   it is also wider than 4 × the mean width (work / lane groups): a matrix of even rows that
//!   fills the GPU is bound by bandwidth, and splitting it cost 13–26 % (session 41, H200, seed
//!   14: 103,709 rows of 223 entries, 66.5 → 90.0 µs; 241,450 random rows of mean 92, at most
//!   318). Where the groups fill less, every slice wider than two chunks is split: 16,701 rows
//!   of 57 entries ran 10.2 µs whole and 6.9 µs in chunks of 16.
//!
//! Each split lane group costs one counter and 32 accumulators (the kernel adds the units' sums
//! into them with atomics).

use crate::{Error, Result};

/// Shortest chunk a split slice's unit walks, in steps of 32 entries: a unit's additions and its
/// count cost about one step each.
pub const MIN_CHUNK: u32 = 16;

/// Lanes of a warp.
const LANES: usize = 32;

/// What [`Rule::label`] starts with.
const LABEL_PREFIX: &str = "sell-split=";

/// The split of one matrix's SELL slices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SellSplit {
    /// Slices wider than this are split; the kernel's row threads skip them.
    pub split_above: u32,
    /// Steps of one chunk of a split slice (0 where the rule is `off`).
    pub chunk: u64,
    /// Per unit (a warp): its lane group's index into `groups`.
    pub unit_group: Vec<u32>,
    /// Per split lane group, 4 words: the slice, its first lane, its first unit, its chunks.
    pub groups: Vec<u32>,
}

impl SellSplit {
    /// Units (warps) of the split slices.
    pub fn units(&self) -> usize {
        self.unit_group.len()
    }

    /// Split lane groups.
    pub fn ngroups(&self) -> usize {
        self.groups.len() / 4
    }
}

/// The rule's numbers: the waves of resident warps the work is cut into, the shortest chunk, the
/// share of the resident warps below which every slice may be split, the multiple of the
/// mean width a slice must exceed above it, and two ways past the skew test (below). The shipped
/// rule is one wave, [`MIN_CHUNK`], ¼, 4 and neither way; an experiment sets others through
/// `SPARSECAST_SELL_SPLIT` (`off`, or e.g. `waves=2,min=32,fill=0.5,skew=8,band=0.25,wide=5`),
/// read by [`Rule::from_env`].
///
/// The band (session 78, an experiment, not shipped): the skew test leaves whole every slice
/// between two chunks and `skew` × the mean width, and one of them walked by one thread per row is
/// the kernel's critical path where there are few — a band's edge rows of 120–150 entries under a
/// threshold of 150 ran a stack 27.5 µs at C = 32 against 9.7 µs at C = 512, where they share a
/// slice with the full-width rows and are split (docs/ACCURACY.md, session 78). With `band` > 0,
/// where the lane groups of those slices are fewer than `band` × the resident warps, they are
/// split too (the threshold falls to two chunks); a GPU full of even rows keeps the skew test's
/// answer. Measured on the H200 (session 78): 1.3–3.3× faster on seven such stacks at C = 32, but
/// 5–16 % slower on two whose band holds 790–930 lane groups of slices only 2.8–4.3 chunks wide.
/// `wide` (session 78): slices wider than `wide` chunks are split whatever the skew test says —
/// the seven stacks' whole slices are 5.3–14.7 chunks wide, the two's 2.8–4.3. Measured on the
/// H200 in session 80 (docs/PERFORMANCE.md, "SELL: the `wide` rule"), not shipped: on 64
/// matrices it changes (stacks, Kronecker expansions) `wide=4` ran SELL at 0.79× of session
/// 41's rule (geometric mean; `wide=5` 0.84×, `wide=6` 0.89×; GPU-filling guards 1.00×), but
/// 10 of 128 (matrix, precision) pairs ran > 3 % slower (at most 1.34×, f32 mostly), and on the
/// 28 matrices of seed 14 (never trained on) it changes, the fastest configuration of none got
/// faster while one got 13 % slower (even random rows of 16–73 entries whose slices of 4–4.6
/// chunks it split): SELL is rarely the fastest where the rule changes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// Waves of resident warps (0: no slice is split, the kernel of session 40).
    pub waves: f64,
    /// Shortest chunk, steps.
    pub min_chunk: u32,
    /// Lane groups below this share of the resident warps: every slice wider than two chunks is
    /// split.
    pub fill: f64,
    /// Above it, a slice must also be wider than this multiple of the mean width.
    pub skew: f64,
    /// Slices the skew test leaves whole though wider than two chunks are split where their lane
    /// groups are fewer than this share of the resident warps (0: never, the shipped rule).
    pub band: f64,
    /// Slices wider than this many chunks are split even where the skew test would leave them
    /// whole (0: never, the shipped rule).
    pub wide: f64,
}

impl Default for Rule {
    /// The kernel's rule: [`Rule::SESSION_41`] today.
    fn default() -> Self {
        Rule::SESSION_41
    }
}

impl Rule {
    /// The rule of session 41 (one wave, [`MIN_CHUNK`], ¼, 4, neither the band nor `wide`): the
    /// kernel's default, and the one the `sparsecast` model's SELL chain (versions 8–11,
    /// `src/learn/own/base.rs`) was fitted under — the model names it, not the default, so that a
    /// new default for the kernel moves no shipped profile's predictions (it needs a model version
    /// of its own and a refit on the re-timed SELL rows).
    pub const SESSION_41: Rule = Rule {
        waves: 1.0,
        min_chunk: MIN_CHUNK,
        fill: 0.25,
        skew: 4.0,
        band: 0.0,
        wide: 0.0,
    };

    /// The label a table stores with a SELL time ([`crate::corpus::table::ConfigTime::kernel`]):
    /// `sell-split=session-41`, `sell-split=off`, or the rule's numbers
    /// (`sell-split=waves=1,min=16,fill=0.25,skew=4,band=0,wide=4`).
    pub fn label(&self) -> String {
        let body = if *self == Rule::SESSION_41 {
            "session-41".to_string()
        } else if self.waves == 0.0 {
            "off".to_string()
        } else {
            format!(
                "waves={},min={},fill={},skew={},band={},wide={}",
                self.waves, self.min_chunk, self.fill, self.skew, self.band, self.wide
            )
        };
        format!("{LABEL_PREFIX}{body}")
    }

    /// The rule a table's SELL time was measured under, from its stored label: none stored is
    /// [`Rule::SESSION_41`] (tables timed before session 80 store none); a label of another
    /// kernel, or one this build cannot read, is `None`.
    pub fn of_label(label: Option<&str>) -> Option<Rule> {
        let Some(l) = label else {
            return Some(Rule::SESSION_41);
        };
        match l.strip_prefix(LABEL_PREFIX)? {
            "session-41" => Some(Rule::SESSION_41),
            other => Rule::parse(other).ok(),
        }
    }

    /// The rule `SPARSECAST_SELL_SPLIT` names, else the default; an unreadable value is an error.
    pub fn from_env() -> Result<Rule> {
        match std::env::var("SPARSECAST_SELL_SPLIT") {
            Ok(v) => Rule::parse(&v),
            Err(_) => Ok(Rule::default()),
        }
    }

    /// `off`, or `waves=W,min=M,fill=F,skew=S,band=B,wide=K` (any part left out keeps the
    /// default's).
    pub fn parse(v: &str) -> Result<Rule> {
        let bad = || {
            Error::Invalid(format!(
                "SPARSECAST_SELL_SPLIT={v:?}: expected `off` or \
                 `waves=W,min=M,fill=F,skew=S,band=B,wide=K` (W > 0, M ≥ 1, F, S, B, K ≥ 0)"
            ))
        };
        if v.trim() == "off" {
            return Ok(Rule {
                waves: 0.0,
                ..Rule::default()
            });
        }
        let mut r = Rule::default();
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some(("waves", w)) => r.waves = w.parse().map_err(|_| bad())?,
                Some(("min", m)) => r.min_chunk = m.parse().map_err(|_| bad())?,
                Some(("fill", f)) => r.fill = f.parse().map_err(|_| bad())?,
                Some(("skew", k)) => r.skew = k.parse().map_err(|_| bad())?,
                Some(("band", b)) => r.band = b.parse().map_err(|_| bad())?,
                Some(("wide", k)) => r.wide = k.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        let finite = |x: f64| x >= 0.0 && x.is_finite();
        let valid = r.waves > 0.0
            && finite(r.waves)
            && finite(r.fill)
            && finite(r.skew)
            && finite(r.band)
            && finite(r.wide);
        if !valid || r.min_chunk == 0 {
            return Err(bad());
        }
        Ok(r)
    }
}

/// Lane groups (32 lanes of a slice) of `nrows` rows in slices of `c`, the last slice possibly
/// short: what [`threshold`]'s mean width divides by.
pub fn total_lane_groups(nrows: usize, c: usize) -> u64 {
    let c = c.max(1);
    let nslices = nrows.div_ceil(c);
    let last = nrows - nslices.saturating_sub(1) * c;
    (nslices.saturating_sub(1) * c.div_ceil(LANES) + last.div_ceil(LANES)) as u64
}

/// The chunk and the width above which a slice is split, for `work` warp steps over `groups`
/// lane groups on a device with `resident_warps` warps in flight, by `rule` (not `off`). Also
/// what the `sparsecast` model reads as SELL's longest chain (`src/learn/own/base.rs`, `sell_chain`, version 8).
pub fn threshold(work: u64, groups: u64, resident_warps: u32, rule: Rule) -> (u64, u32) {
    let warps = (resident_warps.max(1) as f64 * rule.waves).max(1.0);
    let chunk = ((work as f64 / warps).ceil() as u64).clamp(rule.min_chunk as u64, u32::MAX as u64);
    let mean = work as f64 / groups.max(1) as f64;
    let mut split_above = 2 * chunk;
    if groups as f64 >= rule.fill * resident_warps as f64 {
        split_above = split_above.max((rule.skew * mean).min(u32::MAX as f64) as u64);
    }
    if rule.wide > 0.0 {
        let wide = (rule.wide * chunk as f64).min(u32::MAX as f64) as u64;
        split_above = split_above.min(wide.max(2 * chunk));
    }
    (chunk, split_above.min(u32::MAX as u64) as u32)
}

/// Whether rules `a` and `b` split the slices of a matrix alike: `work` warp steps over `groups`
/// lane groups whose widest slice is `widest` (its longest row) on a device with
/// `resident_warps` warps in flight. True where the rules are equal, where neither splits a
/// slice, or where both give the same chunk and threshold without the band (which depends on
/// the widths, not known here); false otherwise, even where the widths would make them agree.
pub fn same_split(
    work: u64,
    groups: u64,
    widest: u32,
    resident_warps: u32,
    a: Rule,
    b: Rule,
) -> bool {
    let cut = |r: Rule| (r.waves > 0.0).then(|| threshold(work, groups, resident_warps, r));
    // No slice is wider than the lowest threshold the rule can reach (two chunks with the band).
    let splits_nothing = |r: Rule| match cut(r) {
        None => true,
        Some((chunk, above)) => {
            let lowest = if r.band > 0.0 {
                2 * chunk
            } else {
                above as u64
            };
            widest as u64 <= lowest
        }
    };
    a == b
        || (splits_nothing(a) && splits_nothing(b))
        || (a.band == 0.0 && b.band == 0.0 && cut(a).is_some() && cut(a) == cut(b))
}

/// The split of slices of `c` rows with these widths (`nrows` rows in all, the last slice
/// possibly short) for a device with `resident_warps` warps in flight, by `rule`.
pub fn plan(
    widths: &[u32],
    c: usize,
    nrows: usize,
    resident_warps: u32,
    rule: Rule,
) -> Result<SellSplit> {
    if rule.waves == 0.0 {
        return Ok(SellSplit {
            split_above: u32::MAX,
            ..SellSplit::default()
        });
    }
    let c = c.max(1);
    let lane_groups = |s: usize| nrows.saturating_sub(s * c).min(c).div_ceil(LANES) as u64;
    let work: u64 = widths
        .iter()
        .enumerate()
        .map(|(s, &w)| w as u64 * lane_groups(s))
        .sum();
    let (chunk, mut split_above) =
        threshold(work, total_lane_groups(nrows, c), resident_warps, rule);
    if rule.band > 0.0 {
        let two = 2 * chunk;
        let band: u64 = widths
            .iter()
            .enumerate()
            .filter(|&(_, &w)| w as u64 > two && w <= split_above)
            .map(|(s, _)| lane_groups(s))
            .sum();
        if band > 0 && (band as f64) < rule.band * resident_warps as f64 {
            split_above = two as u32; // two chunks ≤ the skew test's threshold, within u32
        }
    }
    let mut out = SellSplit {
        split_above,
        chunk,
        ..SellSplit::default()
    };
    let too_many = || {
        Error::Unsupported(format!(
            "SELL: the split of {} slices needs more than 2³² warps",
            widths.len()
        ))
    };
    for (s, &w) in widths.iter().enumerate() {
        if w <= split_above {
            continue;
        }
        let chunks = (w as u64).div_ceil(chunk) as u32; // ≥ 3
        for g in 0..lane_groups(s) {
            let q = u32::try_from(out.ngroups()).map_err(|_| too_many())?;
            let first = u32::try_from(out.units()).map_err(|_| too_many())?;
            out.groups.extend([
                u32::try_from(s).map_err(|_| too_many())?,
                (g * LANES as u64) as u32,
                first,
                chunks,
            ]);
            out.unit_group
                .extend(std::iter::repeat(q).take(chunks as usize));
            if out.units() > u32::MAX as usize {
                return Err(too_many());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps of a group's chunk `i` as the kernel derives them.
    fn chunk_range(w: u32, chunks: u32, i: u32) -> (u32, u32) {
        let len = w.div_ceil(chunks);
        let k0 = (i * len).min(w);
        (k0, (k0 + len).min(w))
    }

    fn check_cover(p: &SellSplit, widths: &[u32]) {
        for q in 0..p.ngroups() {
            let g = &p.groups[4 * q..4 * q + 4];
            let (w, first, chunks) = (widths[g[0] as usize], g[2] as usize, g[3]);
            assert!(chunks >= 3, "a split slice is wider than two chunks");
            assert!(p.unit_group[first..first + chunks as usize]
                .iter()
                .all(|&u| u as usize == q));
            // The chunks tile the width, each step once.
            let mut next = 0;
            for i in 0..chunks {
                let (k0, k1) = chunk_range(w, chunks, i);
                assert_eq!(k0, next);
                next = k1;
            }
            assert_eq!(next, w);
        }
        assert_eq!(
            p.units(),
            (0..p.ngroups())
                .map(|q| p.groups[4 * q + 3] as usize)
                .sum::<usize>()
        );
    }

    #[test]
    fn a_full_gpu_of_even_slices_is_not_split() {
        // 10⁶ rows of 100: 31,250 slices × 100 steps over 8,448 warps: chunks of 370.
        let widths = vec![100u32; 31_250];
        let p = plan(&widths, 32, 1_000_000, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!(p.split_above, 2 * 370);
        assert_eq!((p.units(), p.ngroups()), (0, 0));
        // 103,709 rows of 223 (session 41's banded matrix, 13-26 % slower split): 3,241 slices
        // fill more than a quarter of the warps, and none is 4 × wider than the mean.
        let widths = vec![223u32; 3_241];
        let p = plan(&widths, 32, 103_709, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!((p.units(), p.split_above), (0, 4 * 223));
        // Below a quarter (2,000 slices), every slice wider than two chunks is split.
        let widths = vec![223u32; 2_000];
        let p = plan(&widths, 32, 64_000, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!(p.split_above, 2 * 53);
        assert_eq!(p.units(), 2_000 * 223usize.div_ceil(53));
        check_cover(&p, &widths);
    }

    #[test]
    fn a_stack_splits_only_its_wide_slices_and_covers_every_step() {
        // 12,500 slices of 5 and 4 of 19,575 (session 40's stack): 140,800 steps over 8,448
        // warps is 17 a warp; the 12,504 slices fill more than a quarter of the warps, so a
        // split slice is also wider than 4 × the mean width 11.26.
        let mut widths = vec![5u32; 12_500];
        widths.extend([19_575u32; 4]);
        let nrows = widths.len() * 32 - 28; // the last slice holds 4 rows
        let p = plan(&widths, 32, nrows, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!(p.split_above, 45);
        assert_eq!(p.ngroups(), 4);
        assert_eq!(p.units(), 4 * 19_575usize.div_ceil(17));
        for q in 0..4 {
            assert_eq!(p.groups[4 * q] as usize, 12_500 + q);
            assert_eq!(p.groups[4 * q + 1], 0);
        }
        check_cover(&p, &widths);
    }

    #[test]
    fn tall_slices_split_every_lane_group_and_the_last_slice_counts_its_rows() {
        // C = 512: 16 lane groups a slice; the last slice holds 40 rows: 2 lane groups.
        let widths = vec![10u32, 5_000, 4_000];
        let p = plan(&widths, 512, 1024 + 40, 1_000, Rule::SESSION_41).unwrap();
        // Work 10·16 + 5,000·16 + 4,000·2 = 88,160 steps over 1,000 warps: chunks of 89; 34
        // lane groups fill less than a quarter of the warps.
        assert_eq!(p.split_above, 2 * 89);
        assert_eq!(p.ngroups(), 16 + 2);
        let lanes: Vec<u32> = (0..p.ngroups()).map(|q| p.groups[4 * q + 1]).collect();
        assert_eq!(lanes[..16], (0..16).map(|g| g * 32).collect::<Vec<_>>()[..]);
        assert_eq!(lanes[16..], [0, 32]);
        assert!(p.groups[4 * 16] == 2 && p.groups[4 * 17] == 2);
        assert_eq!(p.units(), 16 * 57 + 2 * 45);
        assert_eq!(total_lane_groups(1024 + 40, 512), 34);
        assert_eq!(total_lane_groups(12_504 * 32 - 28, 32), 12_504);
        assert_eq!((total_lane_groups(0, 32), total_lane_groups(5, 40)), (0, 1));
        check_cover(&p, &widths);
        // Every unit's group starts at or before it and holds it.
        for (u, &q) in p.unit_group.iter().enumerate() {
            let (first, chunks) = (p.groups[4 * q as usize + 2], p.groups[4 * q as usize + 3]);
            assert!(first as usize <= u && u < (first + chunks) as usize);
        }
    }

    #[test]
    fn the_band_splits_a_few_stragglers_below_the_skew_threshold_and_no_even_rows() {
        // Session 78's stack at C = 32: 2,528 slices of 14, a band's four edge slices of
        // 120–141 and 290 slices of 239. 105,220 steps over 8,448 warps: chunks of 16; the 2,822
        // lane groups fill more than a quarter, so the skew test splits above 4 × 37.29 = 149
        // and leaves the edge slices whole: a thread walks 141 steps.
        let mut stack = vec![14u32; 2_528];
        stack.extend([141u32, 132, 125, 120]);
        stack.extend([239u32; 290]);
        let (widths, nrows) = (&stack, stack.len() * 32);
        let shipped = plan(widths, 32, nrows, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!((shipped.split_above, shipped.units()), (149, 290 * 15));
        let band = Rule {
            band: 0.25,
            ..Rule::SESSION_41
        };
        let p = plan(widths, 32, nrows, 8_448, band).unwrap();
        assert_eq!(p.split_above, 32);
        assert_eq!(p.units(), 290 * 15 + 9 + 9 + 8 + 8);
        check_cover(&p, widths);
        // 3,241 even slices of 223 are all in the band and fill more than a quarter: whole.
        let widths = vec![223u32; 3_241];
        let p = plan(&widths, 32, 103_709, 8_448, band).unwrap();
        assert_eq!((p.units(), p.split_above), (0, 4 * 223));
        // `wide = 5`: the edge slices (7.5–8.8 chunks) are split, above 5 chunks.
        let wide = Rule {
            wide: 5.0,
            ..Rule::SESSION_41
        };
        let p = plan(&stack, 32, nrows, 8_448, wide).unwrap();
        assert_eq!((p.split_above, p.units()), (80, 290 * 15 + 9 + 9 + 8 + 8));
        check_cover(&p, &stack);
        // 930 slices of 68 (4.25 chunks of 16) beside 2,000 of 14: whole, as shipped.
        let mut widths = vec![14u32; 2_000];
        widths.extend([68u32; 930]);
        let p = plan(&widths, 32, widths.len() * 32, 8_448, wide).unwrap();
        assert_eq!((p.units(), p.split_above), (0, 80));
        // Session 41's even rows (2.6 chunks): whole.
        let widths = vec![223u32; 3_241];
        let p = plan(&widths, 32, 103_709, 8_448, wide).unwrap();
        assert_eq!(p.units(), 0);
    }

    #[test]
    fn a_table_names_the_rule_it_was_timed_under() {
        assert_eq!(Rule::default(), Rule::SESSION_41);
        assert_eq!(Rule::SESSION_41.label(), "sell-split=session-41");
        let wide = Rule::parse("wide=4").unwrap();
        assert_eq!(
            wide.label(),
            "sell-split=waves=1,min=16,fill=0.25,skew=4,band=0,wide=4"
        );
        let off = Rule::parse("off").unwrap();
        assert_eq!(off.label(), "sell-split=off");
        for r in [
            Rule::SESSION_41,
            wide,
            off,
            Rule::parse("waves=2,min=8").unwrap(),
        ] {
            assert_eq!(Rule::of_label(Some(&r.label())), Some(r), "{}", r.label());
        }
        // Tables before session 80 store none: session 41's rule.
        assert_eq!(Rule::of_label(None), Some(Rule::SESSION_41));
        assert_eq!(Rule::of_label(Some("sell-split=fast")), None);
        assert_eq!(Rule::of_label(Some("other=1")), None);
    }

    #[test]
    fn rules_split_alike_only_where_no_slice_tells_them_apart() {
        let s41 = Rule::SESSION_41;
        let wide = Rule::parse("wide=4").unwrap();
        let off = Rule::parse("off").unwrap();
        // Session 78's stack (105,220 steps, 2,822 lane groups): chunks of 16, session 41
        // splits above 149 and `wide=4` above 64 — a slice of 141 tells them apart.
        assert!(!same_split(105_220, 2_822, 239, 8_448, s41, wide));
        assert!(!same_split(105_220, 2_822, 239, 8_448, s41, off));
        // Rows of at most 60: neither splits anything.
        assert!(same_split(105_220, 2_822, 60, 8_448, s41, wide));
        assert!(same_split(105_220, 2_822, 30, 8_448, s41, off));
        // Few groups (below a quarter of the warps): both split above two chunks.
        assert!(same_split(88_160, 34, 5_000, 1_000, s41, wide));
        let band = Rule { band: 0.25, ..s41 };
        assert!(!same_split(88_160, 34, 5_000, 1_000, s41, band));
        assert!(same_split(88_160, 34, 5_000, 1_000, band, band));
        assert!(same_split(88_160, 34, 170, 1_000, s41, band)); // two chunks of 89
    }

    #[test]
    fn no_slices_no_units() {
        let p = plan(&[], 32, 0, 8_448, Rule::SESSION_41).unwrap();
        assert_eq!(
            (p.units(), p.ngroups(), p.split_above),
            (0, 0, 2 * MIN_CHUNK)
        );
    }

    #[test]
    fn the_experiment_rules_parse_and_off_splits_nothing() {
        let r = Rule::parse("waves=2,min=32,fill=0.5,skew=8,band=0.25").unwrap();
        assert_eq!(
            r,
            Rule {
                waves: 2.0,
                min_chunk: 32,
                fill: 0.5,
                skew: 8.0,
                band: 0.25,
                wide: 0.0
            }
        );
        assert!(Rule::parse("band=-1").is_err() && Rule::parse("band=x").is_err());
        assert_eq!(Rule::parse("wide=5").unwrap().wide, 5.0);
        assert!(Rule::parse("wide=-5").is_err());
        assert_eq!(Rule::parse("min=64").unwrap().waves, 1.0);
        for bad in [
            "waves=0",
            "min=0",
            "fast",
            "waves=x",
            "waves=inf",
            "fill=-1",
        ] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
        let off = Rule::parse("off").unwrap();
        let p = plan(&[100_000, 3], 32, 64, 8_448, off).unwrap();
        assert_eq!((p.units(), p.split_above), (0, u32::MAX));
        // Two waves halve the chunk (the stack's 140,800 steps with a minimum of 8: 9) but not the
        // threshold, 4 × the mean width.
        let mut widths = vec![5u32; 12_500];
        widths.extend([19_575u32; 4]);
        let r = Rule {
            waves: 2.0,
            min_chunk: 8,
            ..Rule::SESSION_41
        };
        let p = plan(&widths, 32, widths.len() * 32, 8_448, r).unwrap();
        assert_eq!(p.split_above, 45);
        assert_eq!(p.units(), 4 * 19_575usize.div_ceil(9));
        check_cover(&p, &widths);
        // With skew 0 the threshold is two chunks, whatever the fill.
        let r = Rule { skew: 0.0, ..r };
        let p = plan(&widths, 32, widths.len() * 32, 8_448, r).unwrap();
        assert_eq!(p.split_above, 18);
    }
}
