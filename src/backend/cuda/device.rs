//! Device description: the limits and sizes read from the driver, plus the measured
//! device-to-device copy bandwidth, the ceiling every kernel's effective bandwidth is compared with.

use crate::backend::timing::median;
use crate::{Error, Result};
use cudarc::driver::sys::CUdevice_attribute as A;
use cudarc::driver::{CudaContext, CudaStream};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What sparsecast knows about a CUDA device. Sizes in bytes, clocks in MHz, bandwidths in GB/s
/// (10^9 bytes per second).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability, major.
    pub cc_major: u32,
    /// Compute capability, minor.
    pub cc_minor: u32,
    /// The architecture kernels are compiled for, e.g. `sm_90`.
    pub arch: String,
    /// Streaming multiprocessors: the partition's on a green-context partition.
    pub sm_count: u32,
    /// The whole device's SMs when this is a green-context partition of it (`--sms`); absent
    /// for a whole device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_sm_count: Option<u32>,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Resident warps per SM (`max_threads_per_sm / warp_size`).
    pub max_warps_per_sm: u32,
    /// Resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// Threads per block.
    pub max_threads_per_block: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// 32-bit registers per SM.
    pub registers_per_sm: u32,
    /// Shared memory per SM.
    pub shared_mem_per_sm: u64,
    /// Shared memory one block may use after opting in.
    pub shared_mem_per_block_optin: u64,
    /// Global memory.
    pub global_mem: u64,
    /// L2 cache.
    pub l2_bytes: u64,
    /// Peak SM clock (0 where the driver no longer reports it).
    pub sm_clock_mhz: u32,
    /// Peak memory clock (0 where the driver no longer reports it).
    pub mem_clock_mhz: u32,
    /// Memory bus width in bits.
    pub mem_bus_bits: u32,
    /// Theoretical DRAM bandwidth from clock and bus width (2 transfers per clock); 0 if unknown.
    pub theoretical_bandwidth_gbs: f64,
    /// Measured device-to-device copy bandwidth, bytes read + written per second: the median of
    /// several copies of [`COPY_BYTES`] (or a quarter of free memory if smaller).
    pub copy_bandwidth_gbs: f64,
    /// CUDA driver version, e.g. "13.0".
    pub driver_version: String,
    /// NVRTC version, e.g. "13.0".
    pub nvrtc_version: String,
}

/// Size of the buffer copied to measure bandwidth (1 GiB: ≥ 10× any current L2).
pub const COPY_BYTES: usize = 1 << 30;
/// Timed copies for the bandwidth measurement (after one warm-up copy).
pub const COPY_RUNS: usize = 10;

fn attr(ctx: &CudaContext, a: A) -> Result<u32> {
    ctx.attribute(a)
        .map(|v| v.max(0) as u32)
        .map_err(|e| Error::Cuda(format!("cuDeviceGetAttribute({a:?}): {e:?}")))
}

/// Read everything but the copy bandwidth (left at NaN) from the driver.
pub fn read_static(ctx: &CudaContext, nvrtc_version: (i32, i32)) -> Result<DeviceInfo> {
    let name = ctx
        .name()
        .map_err(|e| Error::Cuda(format!("cuDeviceGetName: {e:?}")))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| Error::Cuda(format!("compute capability: {e:?}")))?;
    let global_mem = ctx
        .total_mem()
        .map_err(|e| Error::Cuda(format!("cuDeviceTotalMem: {e:?}")))? as u64;
    let warp_size = attr(ctx, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?;
    let max_threads_per_sm = attr(ctx, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
    let mem_clock_khz = attr(ctx, A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0);
    let mem_bus_bits = attr(ctx, A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).unwrap_or(0);
    let mut driver = 0i32;
    // SAFETY: out-parameter.
    let _ = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    Ok(DeviceInfo {
        ordinal: ctx.ordinal(),
        name,
        cc_major: major as u32,
        cc_minor: minor as u32,
        arch: super::nvrtc::arch_name((major, minor)),
        sm_count: attr(ctx, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        full_sm_count: None,
        max_threads_per_sm,
        max_warps_per_sm: max_threads_per_sm / warp_size.max(1),
        max_blocks_per_sm: attr(ctx, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        max_threads_per_block: attr(ctx, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        warp_size,
        registers_per_sm: attr(ctx, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        shared_mem_per_sm: attr(
            ctx,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )? as u64,
        shared_mem_per_block_optin: attr(
            ctx,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as u64,
        global_mem,
        l2_bytes: attr(ctx, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        sm_clock_mhz: attr(ctx, A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0) / 1000,
        mem_clock_mhz: mem_clock_khz / 1000,
        mem_bus_bits,
        theoretical_bandwidth_gbs: theoretical_bandwidth_gbs(mem_clock_khz, mem_bus_bits),
        copy_bandwidth_gbs: f64::NAN,
        driver_version: format!("{}.{}", driver / 1000, (driver % 1000) / 10),
        nvrtc_version: format!("{}.{}", nvrtc_version.0, nvrtc_version.1),
    })
}

/// DRAM bandwidth from the memory clock (kHz) and bus width (bits), double data rate.
pub fn theoretical_bandwidth_gbs(mem_clock_khz: u32, bus_bits: u32) -> f64 {
    2.0 * mem_clock_khz as f64 * 1e3 * (bus_bits as f64 / 8.0) / 1e9
}

/// Measure the device-to-device copy bandwidth (GB/s, bytes read + written): one warm-up copy,
/// then the median of [`COPY_RUNS`] copies, each timed with CUDA events.
pub fn measure_copy_bandwidth(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<f64> {
    let err = |what: &str| {
        let what = what.to_string();
        move |e: cudarc::driver::DriverError| Error::Cuda(format!("copy bandwidth, {what}: {e:?}"))
    };
    let (free, _) = ctx.mem_get_info().map_err(err("cuMemGetInfo"))?;
    let bytes = COPY_BYTES.min(free / 4) & !0xfff;
    if bytes == 0 {
        return Err(Error::Cuda(
            "no free device memory to measure bandwidth".into(),
        ));
    }
    let src = stream.alloc_zeros::<u8>(bytes).map_err(err("alloc"))?;
    let mut dst = stream.alloc_zeros::<u8>(bytes).map_err(err("alloc"))?;
    stream
        .memcpy_dtod(&src, &mut dst)
        .map_err(err("warm-up copy"))?;
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut events = Vec::with_capacity(COPY_RUNS + 1);
    for _ in 0..=COPY_RUNS {
        events.push(ctx.new_event(flags).map_err(err("event"))?);
    }
    events[0].record(stream).map_err(err("record"))?;
    for e in &events[1..] {
        stream.memcpy_dtod(&src, &mut dst).map_err(err("copy"))?;
        e.record(stream).map_err(err("record"))?;
    }
    stream.synchronize().map_err(err("synchronize"))?;
    let mut secs = Vec::with_capacity(COPY_RUNS);
    for w in events.windows(2) {
        secs.push(w[0].elapsed_ms(&w[1]).map_err(err("elapsed"))? as f64 * 1e-3);
    }
    Ok(2.0 * bytes as f64 / median(&secs) / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theoretical_bandwidth() {
        // H100 SXM: 2619 MHz × 5120 bits × 2 = 3352 GB/s.
        let bw = theoretical_bandwidth_gbs(2_619_000, 5120);
        assert!((bw - 3352.3).abs() < 0.1, "{bw}");
        assert_eq!(theoretical_bandwidth_gbs(0, 5120), 0.0);
    }

    #[test]
    fn device_info_serializes() {
        let d = DeviceInfo {
            ordinal: 0,
            name: "X".into(),
            cc_major: 9,
            cc_minor: 0,
            arch: "sm_90".into(),
            sm_count: 132,
            full_sm_count: None,
            max_threads_per_sm: 2048,
            max_warps_per_sm: 64,
            max_blocks_per_sm: 32,
            max_threads_per_block: 1024,
            warp_size: 32,
            registers_per_sm: 65536,
            shared_mem_per_sm: 233472,
            shared_mem_per_block_optin: 232448,
            global_mem: 1 << 30,
            l2_bytes: 50 << 20,
            sm_clock_mhz: 1980,
            mem_clock_mhz: 2619,
            mem_bus_bits: 5120,
            theoretical_bandwidth_gbs: 3352.3,
            copy_bandwidth_gbs: 3000.0,
            driver_version: "13.0".into(),
            nvrtc_version: "13.0".into(),
        };
        let s = serde_json::to_string(&d).unwrap();
        assert!(s.contains("\"max_warps_per_sm\":64"));
        assert!(
            !s.contains("full_sm_count"),
            "a whole device has no partition field"
        );
        let back: DeviceInfo = serde_json::from_str(&s).unwrap();
        assert_eq!(back, d);
        // A partition reports its own SMs and the device's.
        let part = DeviceInfo {
            sm_count: 32,
            full_sm_count: Some(132),
            ..d
        };
        let s = serde_json::to_string(&part).unwrap();
        assert!(s.contains("\"full_sm_count\":132"), "{s}");
        assert_eq!(serde_json::from_str::<DeviceInfo>(&s).unwrap(), part);
    }
}
