//! The device-memory check: a matrix whose device footprint exceeds free device memory is refused
//! with a clear message before anything is allocated on the device (and, where the format's
//! footprint follows from the matrix summary, [`crate::formats::FormatKind::footprint`], before
//! the host conversion).

use crate::{Error, Result};

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
}
