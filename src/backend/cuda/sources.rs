//! The CUDA kernel sources, embedded in the binary: one `.cu` file per format family under
//! `kernels/`, each compiled by NVRTC as its own module with the shared prelude
//! `kernels/common.cuh` prepended (so the files need no `#include` and NVRTC no include path).

/// The shared prelude prepended to every kernel file.
pub const PRELUDE: &str = include_str!("../../../kernels/common.cuh");

/// One kernel file: its name (the module name) and its source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelFile {
    /// Module name, the file name without `.cu`.
    pub name: &'static str,
    /// The file's text (without the prelude).
    pub source: &'static str,
    /// The `extern "C"` entry points the file defines.
    pub entry_points: &'static [&'static str],
}

impl KernelFile {
    /// The text NVRTC compiles: the prelude followed by the file.
    pub fn full_source(&self) -> String {
        format!(
            "{PRELUDE}\n// ---- kernels/{}.cu ----\n{}",
            self.name, self.source
        )
    }
}

/// CSR with 1–32 threads per row.
pub const CSR: KernelFile = KernelFile {
    name: "csr",
    source: include_str!("../../../kernels/csr.cu"),
    entry_points: &[
        "csr_t1_f32",
        "csr_t2_f32",
        "csr_t4_f32",
        "csr_t8_f32",
        "csr_t16_f32",
        "csr_t32_f32",
        "csr_t1_f64",
        "csr_t2_f64",
        "csr_t4_f64",
        "csr_t8_f64",
        "csr_t16_f64",
        "csr_t32_f64",
    ],
};

/// Merge-path CSR: partition, single-pass and two-pass tile kernels, carry fix-up.
pub const CSR_MERGE: KernelFile = KernelFile {
    name: "csr_merge",
    source: include_str!("../../../kernels/csr_merge.cu"),
    entry_points: &[
        "merge_partition",
        "csr_merge_f32",
        "csr_merge_f64",
        "csr_merge_tp_f32",
        "csr_merge_tp_f64",
        "merge_fixup_f32",
        "merge_fixup_f64",
    ],
};

/// COO with a warp-level segmented reduction.
pub const COO: KernelFile = KernelFile {
    name: "coo",
    source: include_str!("../../../kernels/coo.cu"),
    entry_points: &[
        "coo_f32",
        "coo_f64",
        "coo_dependent_f32",
        "coo_dependent_f64",
        "coo_merged_f32",
        "coo_merged_f64",
        "coo_dependent_merged_f32",
        "coo_dependent_merged_f64",
    ],
};

/// ELL, one thread per row (also HYB's ELL part).
pub const ELL: KernelFile = KernelFile {
    name: "ell",
    source: include_str!("../../../kernels/ell.cu"),
    entry_points: &["ell_f32", "ell_f64", "ell_then_f32", "ell_then_f64"],
};

/// Jagged diagonals.
pub const JAD: KernelFile = KernelFile {
    name: "jad",
    source: include_str!("../../../kernels/jad.cu"),
    entry_points: &["jad_f32", "jad_f64"],
};

/// SELL-C-σ.
pub const SELL: KernelFile = KernelFile {
    name: "sell",
    source: include_str!("../../../kernels/sell.cu"),
    entry_points: &["sell_f32", "sell_f64"],
};

/// DIA.
pub const DIA: KernelFile = KernelFile {
    name: "dia",
    source: include_str!("../../../kernels/dia.cu"),
    entry_points: &["dia_f32", "dia_f64"],
};

/// BSR, one warp per block row.
pub const BSR: KernelFile = KernelFile {
    name: "bsr",
    source: include_str!("../../../kernels/bsr.cu"),
    entry_points: &["bsr_f32", "bsr_f64"],
};

/// ELL-BRO, one thread per row decoding its bit-packed column deltas.
pub const ELL_BRO: KernelFile = KernelFile {
    name: "ell_bro",
    source: include_str!("../../../kernels/ell_bro.cu"),
    entry_points: &["ell_bro_f32", "ell_bro_f64"],
};

/// SEG-TILE, a thread block per column tile and group of rows (x staged in shared memory or read
/// through the L1).
pub const SEGTILE: KernelFile = KernelFile {
    name: "segtile",
    source: include_str!("../../../kernels/segtile.cu"),
    entry_points: &[
        "segtile_smem_f32",
        "segtile_l1_f32",
        "segtile_smem_f64",
        "segtile_l1_f64",
    ],
};

/// Fill kernels of the instrumenting phase's benchmark matrices (CSR, ELL, COO and x), see
/// [`crate::instrument::synthetic`].
pub const SYNTHETIC: KernelFile = KernelFile {
    name: "synthetic",
    source: include_str!("../../../kernels/synthetic.cu"),
    entry_points: &[
        "syn_csr_f32",
        "syn_csr_f64",
        "syn_ell_f32",
        "syn_ell_f64",
        "syn_coo_f32",
        "syn_coo_f64",
        "syn_x_f32",
        "syn_x_f64",
    ],
};

/// Generation of the statistical models' benchmark matrices: row lengths, prefix scan, JAD's
/// counting sort and the CSR, ELL and JAD fills, see [`crate::instrument::rowdist`].
pub const ROWDIST: KernelFile = KernelFile {
    name: "rowdist",
    source: include_str!("../../../kernels/rowdist.cu"),
    entry_points: &[
        "rd_lengths_k",
        "rd_scan_tiles_k",
        "rd_scan_add_k",
        "rd_jad_count_k",
        "rd_jad_perm_k",
        "rd_jad_longer_k",
        "rd_csr_f32",
        "rd_csr_f64",
        "rd_ell_f32",
        "rd_ell_f64",
        "rd_jad_f32",
        "rd_jad_f64",
    ],
};

/// Conversions of a CSR matrix on the device into COO, ELL, HYB, SELL-C-σ, JAD, DIA, BSR and
/// ELL-BRO
/// (`super::convert`).
pub const CONVERT: KernelFile = KernelFile {
    name: "convert",
    source: include_str!("../../../kernels/convert.cu"),
    entry_points: &[
        "cv_coo_rows",
        "cv_inverse",
        "cv_scatter_f32",
        "cv_scatter_f64",
        "cv_rest_f32",
        "cv_rest_f64",
        "cv_jad_f32",
        "cv_jad_f64",
        "cv_dia_f32",
        "cv_dia_f64",
        "cv_bsr_f32",
        "cv_bsr_f64",
        "cv_ell_bro_f32",
        "cv_ell_bro_f64",
    ],
};

/// The check of a kernel's result against the f64 reference, on the device
/// (`prepared::check`).
pub const CHECK: KernelFile = KernelFile {
    name: "check",
    source: include_str!("../../../kernels/check.cu"),
    entry_points: &["ck_max_error_f32", "ck_max_error_f64"],
};

/// Device micro-benchmarks that are not SpMVs (the L2 read bandwidth).
pub const MICRO: KernelFile = KernelFile {
    name: "micro",
    source: include_str!("../../../kernels/micro.cu"),
    entry_points: &["l2_read"],
};

/// Every kernel file.
pub const ALL: [KernelFile; 15] = [
    CSR, CSR_MERGE, COO, ELL, JAD, SELL, DIA, BSR, ELL_BRO, SEGTILE, SYNTHETIC, ROWDIST, MICRO,
    CONVERT, CHECK,
];

/// Items (path steps) per thread of the merge-path kernel; must match the `SC_MERGE(…)`
/// instantiations in `kernels/csr_merge.cu` (a test checks it).
pub const MERGE_ITEMS_PER_THREAD: u32 = 6;

/// The kernel file that defines `entry`, if any.
pub fn file_of(entry: &str) -> Option<&'static KernelFile> {
    ALL.iter().find(|f| f.entry_points.contains(&entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names defined by `SC_…(name, …)` instantiation lines or plain `extern "C"` definitions.
    fn defined_names(src: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in src.lines() {
            let t = line.trim_start();
            if t.starts_with("SC_") && !t.starts_with("SC_PAD") {
                if let Some(open) = t.find('(') {
                    let args: Vec<&str> = t[open + 1..].split([',', ')']).collect();
                    out.extend(args.first().map(|s| s.trim().to_string()));
                }
            }
            if let Some(rest) = t.strip_prefix("extern \"C\" __global__ void ") {
                if let Some(name) = rest.split('(').next() {
                    let name = name.trim();
                    if !name.is_empty()
                        && !name.contains("__launch_bounds__")
                        && !name.starts_with("SC_BOUNDS")
                    {
                        out.push(name.to_string());
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_file_is_embedded_and_names_its_entry_points() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "cu").then(|| p.file_stem().unwrap().to_str().unwrap().into())
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = ALL.iter().map(|f| f.name.to_string()).collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "every kernels/*.cu must be listed in ALL"
        );
        for f in ALL {
            let text = std::fs::read_to_string(dir.join(format!("{}.cu", f.name))).unwrap();
            assert_eq!(
                text, f.source,
                "{} embedded text differs from the file",
                f.name
            );
            let mut defined = defined_names(f.source);
            defined.sort();
            let mut listed: Vec<String> = f.entry_points.iter().map(|s| s.to_string()).collect();
            listed.sort();
            assert_eq!(defined, listed, "entry points of {}.cu", f.name);
            assert!(f.full_source().starts_with(PRELUDE));
        }
    }

    #[test]
    fn entry_points_are_unique_and_found() {
        let mut all: Vec<&str> = ALL
            .iter()
            .flat_map(|f| f.entry_points.iter().copied())
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "an entry point is defined twice");
        assert_eq!(file_of("csr_t8_f64").unwrap().name, "csr");
        assert_eq!(file_of("merge_partition").unwrap().name, "csr_merge");
        assert!(file_of("nonexistent").is_none());
    }

    #[test]
    fn merge_items_per_thread_matches_source() {
        for t in ["f32", "f64"] {
            let ty = if t == "f32" { "float" } else { "double" };
            for (mac, name) in [("SC_MERGE", "csr_merge"), ("SC_MERGE_TP", "csr_merge_tp")] {
                let line = format!("{mac}({name}_{t}, {ty}, {MERGE_ITEMS_PER_THREAD})");
                assert!(CSR_MERGE.source.contains(&line), "missing `{line}`");
            }
        }
    }
}
