//! `sparsecast device`: describe a CUDA device (limits, sizes, clocks, measured copy bandwidth).

use crate::backend::cuda::CudaBackend;
use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use std::path::PathBuf;

/// Describe the CUDA device and measure its copy bandwidth.
///
/// Describe a CUDA device: name, SMs, threads and warps per SM, threads per block, warp size,
/// memory, L2, clocks, compute capability, the measured device-to-device copy bandwidth (the
/// ceiling every kernel's effective bandwidth is compared with) and the measured L2 read
/// bandwidth (the ceiling of an SpMV whose working set fits in L2).
///
/// Examples:
///   sparsecast device
///   sparsecast device --json device.json
///   sparsecast device --kernels     # compile (or load from the cache) every kernel module
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Also write the description as JSON to this file (`--out` is another name of it).
    #[arg(long, visible_alias = "out", value_name = "FILE")]
    json: Option<PathBuf>,
    /// Load every kernel module and report whether it came from the cache or was compiled, with
    /// the compiler's resource report (registers, spills, shared memory).
    #[arg(long)]
    kernels: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let be = CudaBackend::new(a.device)?;
    let d = be.describe();
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["property", "value"]);
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    let rows: Vec<(&str, String)> = vec![
        ("name", d.name.clone()),
        (
            "compute capability",
            format!("{}.{} ({})", d.cc_major, d.cc_minor, d.arch),
        ),
        ("SMs", d.sm_count.to_string()),
        ("max threads / SM", d.max_threads_per_sm.to_string()),
        ("max warps / SM", d.max_warps_per_sm.to_string()),
        ("max blocks / SM", d.max_blocks_per_sm.to_string()),
        ("max threads / block", d.max_threads_per_block.to_string()),
        ("warp size", d.warp_size.to_string()),
        ("registers / SM", d.registers_per_sm.to_string()),
        (
            "shared memory / SM",
            format!("{} KiB", d.shared_mem_per_sm / 1024),
        ),
        (
            "shared memory / block (opt-in)",
            format!("{} KiB", d.shared_mem_per_block_optin / 1024),
        ),
        ("global memory", gib(d.global_mem)),
        ("L2 cache", mib(d.l2_bytes)),
        ("SM clock (peak)", format!("{} MHz", d.sm_clock_mhz)),
        ("memory clock (peak)", format!("{} MHz", d.mem_clock_mhz)),
        ("memory bus", format!("{} bits", d.mem_bus_bits)),
        (
            "theoretical bandwidth",
            format!("{:.0} GB/s", d.theoretical_bandwidth_gbs),
        ),
        (
            "measured copy bandwidth",
            format!(
                "{:.0} GB/s (read + write, median of {} copies of {})",
                d.copy_bandwidth_gbs,
                crate::backend::cuda::device::COPY_RUNS,
                mib(crate::backend::cuda::device::COPY_BYTES as u64)
            ),
        ),
        (
            "measured L2 read bandwidth",
            crate::backend::Backend::<f32>::l2_read_bandwidth_gbs(&be).map_or(
                "not measured".into(),
                |g| {
                    format!(
                        "{g:.0} GB/s (a quarter of the L2 read {} times in one launch, median of {})",
                        crate::backend::cuda::l2::L2_PASSES,
                        crate::backend::cuda::l2::L2_RUNS
                    )
                },
            ),
        ),
        ("driver", d.driver_version.clone()),
        ("NVRTC", d.nvrtc_version.clone()),
        (
            "cuSPARSE",
            be.cusparse_version()
                .map_or("not found".into(), |v| v.to_string()),
        ),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    println!("{t}");
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&d)?;
        crate::util::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if a.kernels {
        let t0 = std::time::Instant::now();
        let mods = be.load_all_modules()?;
        println!(
            "kernel modules (cache: {}), loaded in {:.2} s:",
            crate::backend::cuda::cache::cache_dir()
                .map_or("none".into(), |p| p.display().to_string()),
            t0.elapsed().as_secs_f64()
        );
        for (name, origin, _log) in mods {
            println!("  {name}: {origin:?}");
            let file = crate::backend::cuda::sources::ALL
                .iter()
                .find(|f| f.name == name);
            for e in file.map_or(&[][..], |f| f.entry_points) {
                let r = be.kernel_resources(e)?;
                println!(
                    "    {e}: {} registers, {} B local (spills/stack), {} B shared, \
                     ≤ {} threads per block",
                    r.registers, r.local_bytes, r.shared_bytes, r.max_threads_per_block
                );
            }
        }
    }
    Ok(())
}
