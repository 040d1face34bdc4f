//! Strip sizes (004 §3.1, 000 §III-B): a *strip* is the largest sub-matrix a device handles with
//! every thread slot busy in one wave, so its size follows from the device limits and the kernel's
//! granularity (004 Table 2):
//!
//! * CSR vector kernel, one warp per row: `S_CSR = N_SM × warps/SM` rows;
//! * CSR with `t < warp` threads per row (sub-warp mappings, our extension):
//!   `N_SM × ⌊threads/SM ÷ t⌋` rows (at least one row per multiprocessor);
//! * ELL, one thread per row: `S_ELL = N_SM × threads/SM` rows;
//! * COO, one thread per non-zero: `S_COO = N_SM × threads/SM` non-zeros;
//! * HYB: its ELL part counts in `S_ELL` rows, its COO part in `S_COO` non-zeros;
//! * JAD, one thread per (permuted) row: `S_JAD = S_ELL` (001 eq. 3, the statistical models).
//!
//! 001 eq. (1)–(2) are the same rules: `S_CSR-V = N_SM × half-warps/SM` is the 16-threads-per-row
//! mapping (`csr-t16`) and `S_CSR-S = N_SM × threads/SM` the one-thread-per-row one (`csr-scalar`).

use super::DeviceLimits;
use crate::backend::Variant;
use crate::{Error, Result};

/// The strip size of `variant` on a device: rows for CSR and ELL (and HYB's ELL part), non-zeros
/// for COO. Fails for variants the analytical model does not cover.
pub fn strip_size(limits: &DeviceLimits, variant: Variant) -> Result<u64> {
    let per_sm = match variant {
        Variant::Csr { threads_per_row } if threads_per_row as u64 == limits.warp_size => {
            limits.warps_per_sm
        }
        Variant::Csr { threads_per_row } if threads_per_row > 0 => {
            (limits.threads_per_sm / threads_per_row as u64).max(1)
        }
        Variant::Ell | Variant::Hyb | Variant::Coo | Variant::Jad => limits.threads_per_sm,
        other => {
            return Err(Error::Unsupported(format!(
                "no strip size for kernel {other} (the models cover CSR, ELL, COO, HYB and JAD)"
            )))
        }
    };
    Ok(limits.n_sm * per_sm)
}

/// The number of strips `⌈n / s⌉` of a target with `n` rows (CSR, ELL) or non-zeros (COO)
/// (004 §3.4.1). `s` must be positive.
#[inline]
pub fn strips(n: u64, s: u64) -> u64 {
    n.div_ceil(s)
}

/// The strip count the models use for a target of `n` rows (CSR, ELL) or non-zeros (COO):
/// `⌈n / s⌉` (004 §3.4.1) from one strip on, and the fraction `n / s` of a strip below it, so that
/// the many real matrices smaller than one strip of a large GPU are told apart and fall inside the
/// range of the sub-strip benchmark matrices ([`crate::instrument::SuiteConfig::sub_strips`]).
/// Continuous at `n = s`. `s` must be positive.
#[inline]
pub fn strip_count(n: u64, s: u64) -> f64 {
    if n < s {
        n as f64 / s as f64
    } else {
        n.div_ceil(s) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_c2050_strip_sizes() {
        let d = DeviceLimits::tesla_c2050();
        // 004 §4: "we adopt 672 rows (i.e., S_CSR for NVIDIA Tesla C2050) … 672 × 32 rows (i.e.,
        // S_ELL …)" — 672 × 32 = 21,504 = 14 × 1536.
        let csr = strip_size(
            &d,
            Variant::Csr {
                threads_per_row: 32,
            },
        )
        .unwrap();
        assert_eq!(csr, 672);
        assert_eq!(strip_size(&d, Variant::Ell).unwrap(), 672 * 32);
        assert_eq!(strip_size(&d, Variant::Coo).unwrap(), 672 * 32);
        // Sub-warp: 4 threads per row ⇒ 1536 / 4 = 384 rows per SM.
        let t4 = strip_size(&d, Variant::Csr { threads_per_row: 4 }).unwrap();
        assert_eq!(t4, 14 * 384);
        assert_eq!(strip_size(&d, Variant::Jad).unwrap(), 672 * 32);
        // 001 eq. (1): half-warps per SM for CSR-V (16 threads per row).
        let v = strip_size(
            &d,
            Variant::Csr {
                threads_per_row: 16,
            },
        )
        .unwrap();
        assert_eq!(v, 14 * 96);
        assert!(strip_size(&d, Variant::Sell).is_err());
    }

    #[test]
    fn strip_counts_round_up() {
        assert_eq!(strips(0, 672), 0);
        assert_eq!(strips(1, 672), 1);
        assert_eq!(strips(672, 672), 1);
        assert_eq!(strips(673, 672), 2);
        assert_eq!(strip_count(168, 672), 0.25);
        assert_eq!(strip_count(672, 672), 1.0);
        assert_eq!(strip_count(673, 672), 2.0);
    }
}
