//! The HYB model (004 §3.5.4, 000 §III-F4): HYB is an ELL part plus a COO part, so it reuses the
//! ELL and COO relationships. Split the target at the HYB threshold `z0` (the ELL width; by
//! default Bell & Garland's rule, [`crate::formats::hyb::auto_width`]); the ELL part has
//! `P_NZ = z0` and `⌈N_R / S_ELL⌉` strips, the COO part holds the entries beyond `z0` in every
//! row and has `⌈N_NZ,COO / S_COO⌉` strips; `T0 = T_ELL + T_COO`.
//!
//! A part with no entries (width 0, or no row longer than the width) contributes nothing: its
//! kernel has no work. (The papers never meet that case; Bell & Garland's rule gives width 0 to
//! every matrix with fewer than 4096 rows.)

use super::coo::CooParams;
use super::ell::EllParams;

/// Estimated seconds of HYB with an ELL part `width` wide over `nrows` rows and `coo_nnz`
/// entries in the COO part.
pub fn predict(ell: &EllParams, coo: &CooParams, nrows: u64, width: u64, coo_nnz: u64) -> f64 {
    let t_ell = if width > 0 && nrows > 0 {
        ell.predict(width as f64, nrows)
    } else {
        0.0
    };
    let t_coo = if coo_nnz > 0 {
        coo.predict(coo_nnz)
    } else {
        0.0
    };
    t_ell + t_coo
}
