//! The device description the instrumenting phase needs (papers: Table 1–2 of 004, Table II of
//! 000): multiprocessors, resident warps and threads per multiprocessor, the largest thread block,
//! the warp width and the global memory. It is independent of any backend so that a profile can
//! be read, and strip sizes computed, on a machine without the device.

use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// Physical limits of a device that determine the papers' strip sizes and benchmark bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceLimits {
    /// Human-readable device name.
    pub name: String,
    /// N_SM: streaming multiprocessors (CPU: hardware threads).
    pub n_sm: u64,
    /// Maximum resident warps per multiprocessor.
    pub warps_per_sm: u64,
    /// Maximum resident threads per multiprocessor.
    pub threads_per_sm: u64,
    /// Maximum threads per block: the CSR model's threshold on P_NZ (1,024 on every NVIDIA GPU
    /// since compute capability 2.0).
    pub max_threads_per_block: u64,
    /// Threads per warp.
    pub warp_size: u64,
    /// G_M: bytes of global memory.
    pub global_mem_bytes: u64,
}

/// The CSR threshold used for the CPU, which has no thread blocks: the GPU value, so that the
/// CSR model keeps the same two-piece shape on every backend. Each side is fitted by least squares
/// on its own, so a threshold without physical meaning costs accuracy only through the split.
pub const CPU_CSR_THRESHOLD: u64 = 1024;

/// SIMD register width assumed for the CPU analogue (AVX2: 256 bits).
pub const CPU_SIMD_BYTES: u64 = 32;

impl DeviceLimits {
    /// The CPU analogue of a GPU, for the CPU backend.
    ///
    /// A GPU strip is what the device processes in one wave with every thread slot busy. On a
    /// CPU the units working at once are the hardware threads, each of which processes
    /// `SIMD lanes = 32 bytes / sizeof(T)` values per instruction (AVX2). So:
    ///
    /// * `n_sm` = hardware threads (`std::thread::available_parallelism`);
    /// * `warp_size` = `threads_per_sm` = SIMD lanes, `warps_per_sm` = 1 — one "warp" (a SIMD
    ///   vector) per thread, hence S_CSR = hardware threads (one row per thread at a time) and
    ///   S_ELL = S_COO = hardware threads × lanes (one row or non-zero per lane);
    /// * `max_threads_per_block` = [`CPU_CSR_THRESHOLD`] (no CPU meaning, see there);
    /// * `global_mem_bytes` = [`crate::formats::default_max_bytes`] (half the physical memory),
    ///   the same limit the CPU format conversions refuse at.
    pub fn cpu(precision: Precision) -> DeviceLimits {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1);
        let lanes = (CPU_SIMD_BYTES / precision.bytes() as u64).max(1);
        DeviceLimits {
            name: format!("CPU ({threads} hardware threads, {lanes} {precision} SIMD lanes)"),
            n_sm: threads,
            warps_per_sm: 1,
            threads_per_sm: lanes,
            max_threads_per_block: CPU_CSR_THRESHOLD,
            warp_size: lanes,
            global_mem_bytes: crate::formats::default_max_bytes(),
        }
    }

    /// The NVIDIA Tesla C2050 of the papers (compute capability 2.0, 14 SMs, 3 GB), for checking
    /// strip sizes against the numbers the papers print (S_CSR = 672).
    pub fn tesla_c2050() -> DeviceLimits {
        DeviceLimits {
            name: "NVIDIA Tesla C2050".into(),
            n_sm: 14,
            warps_per_sm: 48,
            threads_per_sm: 1536,
            max_threads_per_block: 1024,
            warp_size: 32,
            global_mem_bytes: 3 << 30,
        }
    }

    /// Check that every count is positive and that a warp is no wider than a multiprocessor.
    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("n_sm", self.n_sm),
            ("warps_per_sm", self.warps_per_sm),
            ("threads_per_sm", self.threads_per_sm),
            ("max_threads_per_block", self.max_threads_per_block),
            ("warp_size", self.warp_size),
            ("global_mem_bytes", self.global_mem_bytes),
        ];
        if let Some((f, _)) = fields.iter().find(|(_, v)| *v == 0) {
            return Err(Error::Invalid(format!(
                "device limits of '{}': {f} must be positive",
                self.name
            )));
        }
        if self.warp_size > self.threads_per_sm {
            return Err(Error::Invalid(format!(
                "device limits of '{}': warp size {} exceeds {} threads per multiprocessor",
                self.name, self.warp_size, self.threads_per_sm
            )));
        }
        Ok(())
    }
}

impl From<&crate::backend::cuda::DeviceInfo> for DeviceLimits {
    /// The limits of a CUDA device as its driver reports them.
    fn from(d: &crate::backend::cuda::DeviceInfo) -> DeviceLimits {
        DeviceLimits {
            name: format!("{} ({}, {} SMs)", d.name, d.arch, d.sm_count),
            n_sm: d.sm_count as u64,
            warps_per_sm: d.max_warps_per_sm as u64,
            threads_per_sm: d.max_threads_per_sm as u64,
            max_threads_per_block: d.max_threads_per_block as u64,
            warp_size: d.warp_size as u64,
            global_mem_bytes: d.global_mem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_limits_are_valid_and_use_simd_lanes() {
        let f32l = DeviceLimits::cpu(Precision::F32);
        let f64l = DeviceLimits::cpu(Precision::F64);
        f32l.validate().unwrap();
        f64l.validate().unwrap();
        assert_eq!(f32l.threads_per_sm, 2 * f64l.threads_per_sm);
        assert_eq!(f32l.n_sm, f64l.n_sm);
    }

    #[test]
    fn zero_fields_are_rejected() {
        let mut d = DeviceLimits::tesla_c2050();
        d.validate().unwrap();
        d.warps_per_sm = 0;
        let e = d.validate().unwrap_err().to_string();
        assert!(e.contains("warps_per_sm"), "{e}");
    }
}
