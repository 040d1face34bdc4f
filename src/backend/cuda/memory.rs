//! The device-memory check: a matrix whose device footprint exceeds free device memory is refused
//! with a clear message before anything is allocated on the device (and, for formats whose size
//! is known from the CSR alone, before the host conversion).

use crate::formats::{FormatKind, FormatParams};
use crate::{Csr, Error, Result, Scalar};

/// Device memory kept free for the context, modules, cuSPARSE's buffer and the L2-flush buffer.
pub const RESERVE_BYTES: u64 = 256 << 20;

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Refuse when `format_bytes` (the format's arrays, plus any auxiliary arrays) and `vector_bytes`
/// (x and y) do not fit in `free` bytes of device memory less [`RESERVE_BYTES`].
pub fn check_fits(what: &str, format_bytes: u64, vector_bytes: u64, free: u64) -> Result<()> {
    let need = format_bytes.saturating_add(vector_bytes);
    let usable = free.saturating_sub(RESERVE_BYTES);
    if need > usable {
        return Err(Error::Unsupported(format!(
            "{what}: the matrix needs {} of device memory ({} for the format, {} for x and y) \
             but only {} are free (less {} kept in reserve); nothing was allocated",
            gib(need),
            gib(format_bytes),
            gib(vector_bytes),
            gib(free),
            gib(RESERVE_BYTES)
        )));
    }
    Ok(())
}

/// The device footprint of `kind` for `csr`, where it follows from the CSR alone (cheaply):
/// CSR, COO and ELL (the width is the parameter or the longest row). `None` for the others,
/// which are checked after conversion.
pub fn estimate_footprint<T: Scalar>(
    csr: &Csr<T>,
    kind: FormatKind,
    params: &FormatParams,
    value_bytes: usize,
) -> Option<u64> {
    let nnz = csr.nnz() as u64;
    let vb = value_bytes as u64;
    match kind {
        FormatKind::Csr => Some((csr.nrows as u64 + 1) * 4 + nnz * (4 + vb)),
        FormatKind::Coo => Some(nnz * (8 + vb)),
        FormatKind::Ell => {
            let width = match params.ell_width {
                Some(w) => w as u64,
                None => (0..csr.nrows).map(|i| csr.row_len(i)).max().unwrap_or(0) as u64,
            };
            Some(
                width
                    .saturating_mul(csr.nrows as u64)
                    .saturating_mul(4 + vb),
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_and_refuses_with_numbers() {
        let free = 8u64 << 30;
        assert!(check_fits("csr", 1 << 30, 1 << 20, free).is_ok());
        let e = check_fits("ell", 9 << 30, 1 << 20, free)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ell") && e.contains("9.00 GiB") && e.contains("8.00 GiB"),
            "{e}"
        );
        assert!(e.contains("nothing was allocated"));
        // The reserve counts.
        assert!(check_fits("csr", free - RESERVE_BYTES / 2, 0, free).is_err());
        assert!(check_fits("csr", u64::MAX, u64::MAX, free).is_err());
        assert!(check_fits("csr", 0, 0, 0).is_ok());
    }

    #[test]
    fn estimates() {
        // Rows of length 3, 0, 1 in a 3 × 4 matrix.
        let m = Csr::<f64>::from_triplets(3, 4, &[0, 0, 0, 2], &[0, 1, 3, 2], &[1.0; 4]).unwrap();
        let p = FormatParams::default();
        assert_eq!(
            estimate_footprint(&m, FormatKind::Csr, &p, 8),
            Some(4 * 4 + 4 * 12)
        );
        assert_eq!(estimate_footprint(&m, FormatKind::Coo, &p, 8), Some(4 * 16));
        assert_eq!(
            estimate_footprint(&m, FormatKind::Ell, &p, 8),
            Some(3 * 3 * 12)
        );
        let p2 = FormatParams {
            ell_width: Some(5),
            ..FormatParams::default()
        };
        assert_eq!(
            estimate_footprint(&m, FormatKind::Ell, &p2, 4),
            Some(5 * 3 * 8)
        );
        assert_eq!(estimate_footprint(&m, FormatKind::Sell, &p, 8), None);
    }
}
