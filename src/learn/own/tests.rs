use super::fit::sigmas;
use super::*;
use crate::backend::measure::Status;
use crate::backend::VendorAlg;
use crate::corpus::table::{ConfigTime, TABLE_SCHEMA};

/// A device of the 2 µs launch floor with `bandwidth` bytes/s and `l2_bytes` of cache.
fn device(bandwidth: f64, l2_bytes: f64) -> Device {
    Device {
        floor_s: 2e-6,
        bandwidth,
        l2_bytes,
    }
}

/// A 64 × 64 matrix whose row 5 holds 40 entries and every other row 2.
fn one_long_row() -> Features {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for r in 0..64u32 {
        let len = if r == 5 { 40 } else { 2 };
        rows.extend((0..len).map(|_| r));
        cols.extend((0..len).map(|k| (r + k) % 64));
    }
    let vals = vec![1.0f64; rows.len()];
    Features::compute(&crate::Csr::from_triplets(64, 64, &rows, &cols, &vals).unwrap())
}

/// 100 rows of 2 entries, then one of 5,000.
fn short_rows_and_one_long() -> Features {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for r in 0..101u32 {
        let len = if r == 100 { 5000 } else { 2 };
        rows.extend((0..len).map(|_| r));
        cols.extend(0..len);
    }
    let vals = vec![1.0f64; rows.len()];
    Features::compute(&crate::Csr::from_triplets(101, 5000, &rows, &cols, &vals).unwrap())
}

#[test]
fn version_9_gives_the_lane_alignment_degree_of_the_value_and_index_loads() {
    // Rows of 8 entries: 4-byte starts fall on 4 offsets of 128 bytes (8 lanes meet), 8-byte
    // ones on 2 (16 lanes); the trees get ln 16 (f64 values) and ln 8 (indices) last.
    let n = 64u32;
    let rows: Vec<u32> = (0..n).flat_map(|r| [r; 8]).collect();
    let cols: Vec<u32> = (0..n)
        .flat_map(|r| (0..8).map(move |k| (r + 3 * k) % n))
        .collect();
    let vals = vec![1.0f64; rows.len()];
    let m = crate::Csr::from_triplets(n as usize, n as usize, &rows, &cols, &vals).unwrap();
    let f = Features::compute(&m);
    let a = f.access.as_ref().unwrap();
    assert!((align_degree(a, 8) - 16f64.ln()).abs() < 1e-12);
    assert!((align_degree(a, 4) - 8f64.ln()).abs() < 1e-12);
    let cfg = KernelConfig::parse_label("csr-scalar").unwrap();
    let d = device(1e12, 50e6);
    let (x9, ..) = features(&f, &cfg, 8, &d, 1e-9, 9).unwrap();
    let (x8, ..) = features(&f, &cfg, 8, &d, 1e-9, 8).unwrap();
    assert_eq!(x9.len(), x8.len() + 2);
    assert_eq!(x9[x8.len()..], [align_degree(a, 8), align_degree(a, 4)]);
    // Features without the count (stored before version 9) read as degree 1.
    let mut old = a.clone();
    old.align_steps = [0, 0];
    assert_eq!(align_degree(&old, 8), 0.0);
}

#[test]
fn sells_chain_stops_at_the_split_threshold_from_version_8() {
    // 100 rows of 2 entries and one of 5,000, sorted in one window of 256: slices of width
    // 5,000, 2, 2 and 2 (the last of 5 rows): 5,006 warp steps over 4 lane groups, chunks of
    // the minimum 16, so the kernel splits what is wider than 32.
    let f = short_rows_and_one_long();
    let sell = KernelConfig::new(Variant::Sell);
    assert_eq!(chain_of(&f, &sell, 8), 32.0);
    assert_eq!(chain_of(&f, &sell, 7), 5000.0);
    // cuSPARSE's SELL walks the whole width.
    let vendor = KernelConfig::new(Variant::Vendor(VendorAlg::SellAlg1));
    assert_eq!(chain_of(&f, &vendor, 8), 5000.0);
    // Parameters whose slots the features lack: the longest row.
    let mut odd = sell.clone();
    odd.params.sell.c = 64;
    assert_eq!(chain_of(&f, &odd, 8), 5000.0);
    // 64 rows, one of 40: its slice is split too (wider than 32).
    assert_eq!(chain_of(&one_long_row(), &sell, 8), 32.0);
    assert_eq!(chain_of(&one_long_row(), &sell, 7), 40.0);
}

#[test]
fn sells_chain_keeps_the_rule_it_was_fitted_under() {
    // The counts of 80,000 rows of 100 entries but one slice of 32 rows of 350 (a band's edge):
    // 250,250 warp steps over 2,500 lane groups, chunks of 30, a GPU full enough for the skew
    // test (4 × the mean width 100.1): session 41's rule leaves the 350-wide slice whole.
    let mut f = short_rows_and_one_long();
    f.nrows = 80_000;
    f.max_nnz = 350;
    let counts = f.access.as_mut().unwrap();
    let s = counts.sell.iter_mut().find(|s| s.c == 32).unwrap();
    s.slots = (2_499 * 100 + 350) * 32;
    let sell = KernelConfig::new(Variant::Sell);
    assert_eq!(chain_of(&f, &sell, 11), 350.0);
    // A kernel rule that splits slices wider than 5 chunks would walk at most 150 steps: the
    // model does not follow the kernel's default there until a version of its own says so.
    use crate::backend::cuda::sell_split::{threshold, Rule};
    let wide = Rule {
        wide: 5.0,
        ..Rule::SESSION_41
    };
    assert_eq!(threshold(250_250, 2_500, RESIDENT_WARPS, wide), (30, 150));
    assert_eq!(
        threshold(250_250, 2_500, RESIDENT_WARPS, Rule::SESSION_41),
        (30, 400)
    );
}

#[test]
fn the_row_mix_tells_a_stack_of_long_rows_from_uniform_rows() {
    // 100 rows of 2 entries and one of 5,000: almost every entry in a row of ≥ 4,096.
    let f = short_rows_and_one_long();
    let m = row_mix(&f);
    // Bucket 2 (lengths 2–3) counts 3 entries a row, bucket 13 (4,096–8,191) 6,144.
    let long = 6144.0 / (6144.0 + 300.0);
    assert!(
        (m[0] - long).abs() < 1e-12 && (m[3] - long).abs() < 1e-12,
        "{m:?}"
    );
    assert_eq!((m[4], m[5]), (2.0, 1.0 / 101.0));
    // Rows of 2 and one of 40: nothing in rows of ≥ 256.
    let m = row_mix(&one_long_row());
    assert_eq!((m[2], m[3]), (0.0, 0.0));
}

#[test]
fn version_7_charges_ell_only_the_values_its_kernel_loads() {
    let f = one_long_row();
    let ell = KernelConfig::parse_label("ell").unwrap();
    // Width 40: the warp of the long row loads 40 values a row, the other warp 2.
    let skipped = (64.0 * 40.0 - (40.0 + 2.0) * 32.0) * 8.0;
    let v6 = bytes(&f, &ell, 8, 1e9, 6).unwrap();
    let v7 = bytes(&f, &ell, 8, 1e9, 7).unwrap();
    assert!((v6 - v7 - skipped).abs() < 1e-9, "{v6} {v7}");
    // The trees see the ELL part's steps and the share of its values loaded.
    let d = device(1e12, 1e9);
    let (x7, _, _) = features(&f, &ell, 8, &d, 0.0, 7).unwrap();
    let (x6, _, _) = features(&f, &ell, 8, &d, 0.0, 6).unwrap();
    assert_eq!(x7.len(), x6.len() + 2);
    assert!((x7[x7.len() - 1] - 42.0 / 80.0).abs() < 1e-12, "{x7:?}");
    // Other kernels keep their bytes.
    let csr = KernelConfig::parse_label("csr-scalar").unwrap();
    assert_eq!(
        bytes(&f, &csr, 8, 1e9, 6).unwrap(),
        bytes(&f, &csr, 8, 1e9, 7).unwrap()
    );
    // HYB of width 2 loads every value it stores.
    let mut hyb = KernelConfig::parse_label("hyb").unwrap();
    hyb.params.hyb.width = Some(2);
    assert_eq!(ell_values(&f, &hyb), Some((128.0, 128.0)));
}

#[test]
fn the_chain_is_the_longest_row_in_steps_of_the_thread_mapping() {
    let f = one_long_row();
    let csr = |t| Variant::Csr { threads_per_row: t };
    assert_eq!(chain(&f, csr(1), VERSION), 40.0);
    assert_eq!(chain(&f, csr(8), VERSION), 5.0);
    assert_eq!(chain(&f, csr(32), VERSION), 2.0);
    assert_eq!(chain(&f, Variant::Jad, VERSION), 40.0);
    assert_eq!(
        chain(&f, Variant::Vendor(VendorAlg::SellAlg1), VERSION),
        40.0
    );
    // BSR (version 4): one warp per block row of 4 rows, 8 blocks per trip. Row 5's 40
    // columns 5..=44 and its block row's short rows span block columns 1..=11: 2 trips;
    // every other block row 1 trip. Version 3 counted the longest row in steps of 4.
    assert_eq!(chain(&f, Variant::Bsr, VERSION), 2.0);
    assert_eq!(steps(&f, Variant::Bsr, VERSION), 17.0);
    assert_eq!(chain(&f, Variant::Bsr, 3), 10.0);
    assert_eq!(
        steps(&f, Variant::Bsr, 3),
        f.access.as_ref().unwrap().warp_steps[0] as f64
    );
    for balanced in [
        Variant::CsrMerge,
        Variant::Coo,
        Variant::Hyb,
        Variant::Vendor(VendorAlg::CsrAlg1),
    ] {
        assert_eq!(chain(&f, balanced, VERSION), 0.0, "{balanced:?}");
    }
}

#[test]
fn x_is_read_once_when_it_fits_and_per_warp_when_far_larger_than_the_l2() {
    let f = one_long_row();
    let a = f.access.as_ref().unwrap();
    let once = a.cols_used as f64 * 8.0;
    let requested = a.x_sectors_f64 as f64 * 32.0;
    assert!(requested > once, "the test matrix must re-request sectors");
    // Fits: read once, every re-request hits.
    assert_eq!(x_traffic(&f, 8, 1e9), (once, 1.0));
    // A cache share of a tenth of x: 90 % of the re-requests go to DRAM.
    let (t, hit) = x_traffic(&f, 8, once / 5.0);
    assert!((hit - 0.1).abs() < 1e-12);
    assert!((t - (once + 0.9 * (requested - once))).abs() < 1e-9);
    // Continuous where version 0 switched (x = half the L2).
    let (below, _) = x_traffic(&f, 8, 2.0 * once * (1.0 + 1e-9));
    let (above, _) = x_traffic(&f, 8, 2.0 * once * (1.0 - 1e-9));
    assert!((above - below).abs() < 1e-6 * once);
}

#[test]
fn a_model_stored_without_a_version_keeps_the_version_0_base() {
    let json = r#"{"precision":"f64","device":{"floor_s":2e-6,"bandwidth":1e12,"l2_bytes":50e6},
        "configs":[{"config":"ell","base":0.0,"trees":[],"sigma":0.1,"n":1}]}"#;
    let m: OwnModel = serde_json::from_str(json).unwrap();
    assert_eq!(m.version, 0);
    // With an L2 small next to x, version 0 reads the per-warp sectors, version 1 blends.
    let f = one_long_row();
    let cfg = KernelConfig::parse_label("ell").unwrap();
    let a = f.access.as_ref().unwrap();
    let l2 = a.cols_used as f64 * 8.0; // x = the L2: half of it is x's share
    let v0 = bytes(&f, &cfg, 8, l2, 0).unwrap();
    let v1 = bytes(&f, &cfg, 8, l2, 1).unwrap();
    let (xt, hit) = x_traffic(&f, 8, l2);
    assert!((hit - 0.5).abs() < 1e-12);
    assert!((v0 - v1 - (a.x_sectors_f64 as f64 * 32.0 - xt)).abs() < 1e-6);
    assert!(v1 < v0);
    let p0 = m.parts(&f, "ell").unwrap();
    assert!((p0.bytes - bytes(&f, &cfg, 8, 50e6, 0).unwrap()).abs() < 1e-9);
    assert!(m.validate().is_ok());
    // A model of a version newer than this binary is refused, not read with missing inputs.
    let newer = OwnModel {
        version: VERSION + 1,
        ..m
    };
    let e = newer.validate().unwrap_err().to_string();
    assert!(e.contains(&format!("version {}", VERSION + 1)), "{e}");
}

#[test]
fn the_relative_correction_is_blended_evenly_with_the_own_one() {
    let json = r#"{"precision":"f64","device":{"floor_s":2e-6,"bandwidth":1e12,"l2_bytes":50e6},
        "version":2,
        "configs":[{"config":"ell","base":0.2,"trees":[],"sigma":0.1,"n":1,"rel_base":-0.1,
            "rel_trees":[{"f":[],"t":[],"l":[],"r":[],"v":[0.05]}]}],
        "reference":{"config":"csr-merge","base":0.4,"trees":[],"sigma":0.0,"n":1}}"#;
    let m: OwnModel = serde_json::from_str(json).unwrap();
    m.validate().unwrap();
    let f = one_long_row();
    let p = m.parts(&f, "ell").unwrap();
    // ½ · 0.2 + ½ · (0.4 + (−0.1 + 0.05))
    assert!(
        (p.correction - (0.1 + 0.5 * 0.35)).abs() < 1e-6,
        "{}",
        p.correction
    );
    // Without a reference (a version-1 model), the own trees alone.
    let v1 = OwnModel {
        reference: None,
        ..m.clone()
    };
    assert!((v1.parts(&f, "ell").unwrap().correction - 0.2).abs() < 1e-12);
}

#[test]
fn the_configurations_of_one_matrix_share_the_reference_and_predict_the_same() {
    use crate::matrix::generate::{stencil, Stencil};
    use crate::model::{Bounded, Model, Prediction, StoredModel};
    let exact = |r: &Result<Prediction>| match r {
        Ok(p) => format!(
            "{:x} {:?} {:?}",
            p.seconds.to_bits(),
            p.uncertainty.map(f64::to_bits),
            p.clamped
        ),
        Err(e) => format!("error: {e}"),
    };
    let matrices = [
        one_long_row(),
        Features::compute(&stencil(Stencil::D2P5, 100, u64::MAX).unwrap()),
    ];
    let mut checked = 0;
    for (_, profile) in crate::profile::Profile::load_embedded_all().unwrap() {
        for section in &profile.precisions {
            for m in section.bounded_models(None).unwrap() {
                let StoredModel::Sparsecast(own) = &m.model else {
                    continue;
                };
                // The relative corrections are there to share a reference.
                assert!(own.reference.is_some());
                assert!(own.configs.iter().any(|c| !c.rel_trees.is_empty()));
                let cfgs = Model::configs(&m);
                let unbounded = Bounded {
                    model: &m.model,
                    bounds: None,
                };
                for f in &matrices {
                    for model in [&m as &dyn Model, &m.model, &unbounded] {
                        let all = model.predict_detail_configs(f, &cfgs);
                        assert_eq!(all.len(), cfgs.len());
                        for (c, got) in cfgs.iter().zip(&all) {
                            let one = model.predict_detail_config(f, c);
                            assert_eq!(exact(got), exact(&one), "{}", c.label());
                        }
                        checked += all.iter().filter(|p| p.is_ok()).count();
                    }
                }
            }
        }
    }
    // Without embedded profiles (`SPARSECAST_NO_EMBED`) there is nothing to compare.
    if !crate::profile::embedded().is_empty() {
        assert!(checked > 100, "{checked}");
    }
}

#[test]
fn the_base_is_the_larger_of_streaming_and_the_chain() {
    let d = device(1e12, 50e6);
    let p = |bytes: f64, chain_s: f64| Parts {
        bytes,
        chain_s,
        correction: 0.0,
        sigma: 0.1,
        steps: 0.0,
        issue_s: 0.0,
    };
    assert!((p(1e6, 0.0).ln_base(&d).exp() - 3e-6).abs() < 1e-12);
    assert!((p(1e6, 5e-6).ln_base(&d).exp() - 7e-6).abs() < 1e-12);
    assert!((p(1e7, 5e-6).ln_base(&d).exp() - 12e-6).abs() < 1e-12);
}

#[test]
fn the_uncertainty_follows_the_size_class_that_has_enough_errors() {
    assert_eq!(sigma_class(999.0), 0);
    assert_eq!(sigma_class(1e4), 1);
    assert_eq!(sigma_class(5e6), 3);
    assert_eq!(sigma_class(3e8), 4);
    // 40 small matrices erring 1 %, 40 of 10⁶–10⁷ erring 8 %, 5 above 10⁷ erring 50 %.
    let mut errs: Vec<(f64, f64)> = (0..40).map(|_| (0.01, 2e3)).collect();
    errs.extend((0..40).map(|_| (0.08, 2e6)));
    errs.extend((0..5).map(|_| (0.5, 2e7)));
    let (all, by) = sigmas(&errs);
    assert_eq!(all, 0.08);
    // Classes without 30 errors fall back on the overall median.
    assert_eq!(by, vec![0.01, 0.08, 0.08, 0.08, 0.08]);
    let c = OwnConfig {
        config: "ell".into(),
        base: 0.0,
        trees: Vec::new(),
        sigma: all,
        sigma_by_nnz: vec![0.01, 0.02, 0.03, 0.08, 0.2],
        step_s: 0.0,
        n: 85,
        rel_base: 0.0,
        rel_trees: Vec::new(),
        issue_s: 0.0,
    };
    assert_eq!(c.sigma_for(500.0), 0.01);
    assert_eq!(c.sigma_for(2e6), 0.08);
    // A model stored before the classes: one sigma for every size.
    let old = OwnConfig {
        sigma_by_nnz: Vec::new(),
        ..c
    };
    assert_eq!(old.sigma_for(2e8), 0.08);
    assert_eq!(sigmas(&[]), (0.1, Vec::new()));
}

#[test]
fn the_one_sigma_holds_the_share_of_errors_a_normal_one_sigma_holds() {
    // Errors 0.001 … 0.100: the one-sigma is the 69th smallest (68.27 % of 100 below it),
    // not the median (0.051).
    let mut v: Vec<f64> = (1..=100).rev().map(|i| i as f64 / 1000.0).collect();
    assert_eq!(one_sigma(&mut v), Some(0.069));
    let within = v.iter().filter(|&&e| e <= 0.069).count();
    assert_eq!(within, 69);
    assert_eq!(one_sigma(&mut [0.3]), Some(0.3));
    assert_eq!(one_sigma(&mut []), None);
    let errs: Vec<(f64, f64)> = (1..=100).map(|i| (i as f64 / 1000.0, 2e3)).collect();
    assert_eq!(sigmas(&errs).0, 0.069);
}

/// A table's time of `config`: `ok` with `t`, else skipped; stored under the kernel revision
/// `kernel`.
fn config_time(config: &str, t: Option<f64>, kernel: Option<String>) -> ConfigTime {
    ConfigTime {
        config: config.into(),
        status: if t.is_some() {
            Status::Ok
        } else {
            Status::Skipped
        },
        median_s: t,
        warm_mean_s: t,
        spread: t.map(|_| 0.01),
        footprint_bytes: None,
        reason: None,
        kernel,
    }
}

/// A training row of matrix "m" in f64 with these features and times.
fn table_row(features: Features, times: Vec<ConfigTime>) -> TableRow {
    TableRow {
        schema: TABLE_SCHEMA,
        matrix: "m".into(),
        family: "m".into(),
        source: crate::evaluate::record::SourceInfo::Recipe("test".into()),
        precision: Precision::F64,
        backend: "cpu".into(),
        device: "test".into(),
        protocol: Default::default(),
        features,
        times,
        cost: None,
    }
}

#[test]
fn examples_near_their_matrixs_best_weigh_more() {
    let time = |config: &str, t: Option<f64>| config_time(config, t, None);
    let a = crate::Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 2.0]).unwrap();
    let mut row = table_row(
        Features::compute(&a),
        vec![
            time("ell", Some(2e-5)),
            time("csr-merge", Some(1e-5)),
            time("coo", Some(1.3e-5)),
        ],
    );
    // Its features are current: no row lacks the version's counts, until one does.
    let old = {
        let mut r = row.clone();
        r.features.access.as_mut().unwrap().row_len_sectors = Default::default();
        r
    };
    assert_eq!(fit::rows_without_counts(&[&row, &row]), 0);
    assert_eq!(fit::rows_without_counts(&[&row, &old]), 1);
    let w = |t: f64, row: &TableRow| fit::near_best_weight(row, t.ln(), 2.0, 1.2);
    // The best itself and one within the ratio weigh more; one beyond it, and one slower
    // still, weigh 1.
    assert_eq!(w(1e-5, &row), 3.0);
    assert_eq!(w(1e-5 * 1.2 * 0.999, &row), 3.0);
    assert_eq!(w(1e-5 * 1.2 * 1.001, &row), 1.0);
    assert_eq!(w(2e-5, &row), 1.0);
    // A row without a measured configuration has no best: every example weighs 1.
    row.times = vec![time("ell", None)];
    assert_eq!(w(1e-5, &row), 1.0);
}

#[test]
fn version_10_tells_a_scattered_long_row_from_a_banded_one() {
    // 100 banded rows of 2 entries under one row of 400: its columns every 8th (every entry its
    // own sector at either value size) or consecutive (8 or 4 to a sector).
    let make = |stride: u32| {
        let (mut rows, mut cols) = (Vec::new(), Vec::new());
        for r in 0..101u32 {
            if r == 100 {
                rows.extend([r; 400]);
                cols.extend((0..400).map(|k| k * stride));
            } else {
                rows.extend([r; 2]);
                cols.extend([r, r + 1]);
            }
        }
        let vals = vec![1.0f64; rows.len()];
        Features::compute(&crate::Csr::from_triplets(101, 3200, &rows, &cols, &vals).unwrap())
    };
    let (scattered, banded) = (make(8), make(1));
    let loc = |f: &Features, vb| long_row_locality(f.access.as_ref().unwrap(), vb);
    // Scattered: a sector per entry, ln 1 = 0, and more than the matrix's own.
    let s = loc(&scattered, 8);
    assert!(s[0].abs() < 1e-12 && s[1] > 0.0 && (s[1] - s[2]).abs() < 1e-12);
    // Banded: one sector per 4 entries (f64) or 8 (f32), below the matrix's mean.
    let b = loc(&banded, 8);
    assert!((b[0] - 0.25f64.ln()).abs() < 1e-12 && b[1] < 0.0);
    assert!((loc(&banded, 4)[0] - 0.125f64.ln()).abs() < 1e-12);
    // The trees read them last from version 10, not before.
    let d = device(3e12, 50e6);
    let cfg = KernelConfig::new(Variant::Csr { threads_per_row: 1 });
    let (x10, _, _) = features(&scattered, &cfg, 8, &d, 1e-7, 10).unwrap();
    let (x9, _, _) = features(&scattered, &cfg, 8, &d, 1e-7, 9).unwrap();
    assert_eq!(x10.len(), x9.len() + 3);
    assert_eq!(x10[x9.len()..], s);
}

#[test]
fn version_11_gives_the_widths_cusparse_sell_walks() {
    // Rows of one length k, n rows: the slices are walked at k rounded up to 8 where n is a
    // multiple of 8, to 16 otherwise, and only where k exceeds that granularity.
    let make = |n: u32, k: u32| {
        let rows: Vec<u32> = (0..n)
            .flat_map(|r| std::iter::repeat(r).take(k as usize))
            .collect();
        let cols: Vec<u32> = (0..n)
            .flat_map(|r| (0..k).map(move |j| (r * 7 + j * 13) % (4 * n)))
            .collect();
        let vals = vec![1.0f64; rows.len()];
        let m = crate::Csr::from_triplets(n as usize, 4 * n as usize, &rows, &cols, &vals);
        Features::compute(&m.unwrap())
    };
    let w = |n, k| vendor_sell_width(&make(n, k));
    assert_eq!(w(64, 9), [1.0, (16.0f64 / 9.0).ln()]);
    assert_eq!(w(64, 8), [1.0, 0.0]);
    assert_eq!(w(64, 17), [1.0, (24.0f64 / 17.0).ln()]);
    assert_eq!(w(65, 9), [0.0, 0.0]);
    assert_eq!(w(65, 16), [0.0, 0.0]);
    assert_eq!(w(65, 17), [0.0, (32.0f64 / 17.0).ln()]);
    // Features stored without the warp histogram keep the flag and a ratio of 1.
    let mut old = make(64, 9);
    old.access.as_mut().unwrap().warp_hist.clear();
    assert_eq!(vendor_sell_width(&old), [1.0, 0.0]);
    // The trees read them last from version 11, not before.
    let f = make(64, 9);
    let d = device(3e12, 50e6);
    let cfg = KernelConfig::parse_label("cusparse-sell").unwrap();
    let (x11, ..) = features(&f, &cfg, 4, &d, 1e-7, 11).unwrap();
    let (x10, ..) = features(&f, &cfg, 4, &d, 1e-7, 10).unwrap();
    assert_eq!(x11.len(), x10.len() + 2);
    assert_eq!(x11[x10.len()..], vendor_sell_width(&f));
}

#[test]
fn sell_times_of_another_split_rule_train_no_model_of_the_shipped_kernel() {
    use crate::backend::cuda::sell_split::Rule;
    let a = crate::Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 2.0]).unwrap();
    let row = |kernel: Option<String>, stack: bool| {
        let mut features = Features::compute(&a);
        if stack {
            // A stack as the features see it: 2,200 slices of 32 rows of 20 entries and one of
            // rows of 72, C = 32, σ = 256. 44,072 warp steps over 8,448 warps: chunks of 16;
            // session 41's skew test leaves slices up to 4 × the mean width (20.03) whole,
            // `wide=4` splits above 4 chunks (64): the slice of 72 tells them apart.
            features.nrows = 2_201 * 32;
            features.max_nnz = 72;
            let access = features.access.as_mut().unwrap();
            let sell = access.sell.iter_mut().find(|s| (s.c, s.sigma) == (32, 256));
            sell.expect("the features count SELL-32-256").slots = 44_072 * 32;
        }
        table_row(features, vec![config_time("sell", Some(1e-5), kernel)])
    };
    let wide = Some(Rule::parse("wide=4").unwrap().label());
    let rows = [
        row(None, true),                            // a table before session 80: kept
        row(Some(Rule::SESSION_41.label()), true),  // named: kept
        row(wide.clone(), true),                    // another split of this matrix: left out
        row(wide, false),                           // two rows: neither rule splits anything
        row(Some("sell-split=fast".into()), false), // unreadable: left out
    ];
    assert_eq!(kept_by(&rows, fit::keep_sell_times_as_modelled), [0, 1, 3]);
}

/// The indices of `rows` (one configuration's times, all `ok`) whose example `keep` keeps.
fn kept_by(rows: &[TableRow], keep: fn(&mut [ConfigSet<'_>])) -> Vec<usize> {
    let refs: Vec<&TableRow> = rows.iter().collect();
    let mut sets = crate::learn::dataset::per_config(&refs, Precision::F64).unwrap();
    assert_eq!(sets.len(), 1);
    assert_eq!(sets[0].examples.len(), rows.len());
    keep(&mut sets);
    (0..rows.len())
        .filter(|&i| {
            sets[0]
                .examples
                .iter()
                .any(|(r, _)| std::ptr::eq(*r, &rows[i]))
        })
        .collect()
}

/// The sequence [`fit::keep_hyb_times_as_modelled`] models on `rows` (HYB's times) and the
/// indices of the rows whose example it keeps (the others counted as left out).
fn hyb_kept(rows: &[TableRow]) -> (HybLaunch, Vec<usize>) {
    let refs: Vec<&TableRow> = rows.iter().collect();
    let mut sets = crate::learn::dataset::per_config(&refs, Precision::F64).unwrap();
    let (modelled, left_out) = fit::keep_hyb_times_as_modelled(&mut sets);
    let kept: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            sets[0]
                .examples
                .iter()
                .any(|(r, _)| std::ptr::eq(*r, &rows[i]))
        })
        .collect();
    assert_eq!(kept.len() + left_out, rows.len());
    (modelled, kept)
}

/// 5,000 rows of 1 entry, with or without a last row of 9: Bell & Garland's width is 1 (at least
/// 4,096 rows reach it), so the long row's tail is HYB's COO part.
fn hyb_fixture(long: bool) -> Features {
    let mut rows: Vec<u32> = (0..5_000).collect();
    let mut cols = vec![0u32; 5_000];
    if long {
        rows.extend([5_000; 9]);
        cols.extend(0..9);
    }
    let vals = vec![1.0; rows.len()];
    let nrows = if long { 5_001 } else { 5_000 };
    let a = crate::Csr::<f64>::from_triplets(nrows, 9, &rows, &cols, &vals).unwrap();
    Features::compute(&a)
}

/// A HYB time of `seconds` measured with `sequence` on the fixture (with or without a COO part).
fn hyb_row(coo: bool, seconds: f64, sequence: HybLaunch) -> TableRow {
    let kernel = sequence.revision().map(String::from);
    table_row(
        hyb_fixture(coo),
        vec![config_time("hyb", Some(seconds), kernel)],
    )
}

#[test]
fn the_fit_models_the_hyb_sequence_most_short_times_measured() {
    use HybLaunch::{Plain, Programmatic};
    assert!(
        hyb_fixture(true).hyb_coo_nnz > 0,
        "the fixture has a COO part"
    );
    assert_eq!(hyb_fixture(false).hyb_coo_nnz, 0);
    let keep = hyb_kept;
    let (short, long) = (5e-6, 2.0 * fit::HYB_SEQUENCES_AGREE_FROM_S);
    // Tables of the plain sequence (every table before session 83), one row re-timed.
    let rows = [
        hyb_row(true, short, Plain),
        hyb_row(true, short, Plain),
        hyb_row(true, short, Programmatic), // the other sequence, short: left out
        hyb_row(true, long, Programmatic),  // long: the two agree, kept
        hyb_row(false, short, Programmatic), // one kernel either way: kept
    ];
    assert_eq!(keep(&rows), (Plain, vec![0, 1, 3, 4]));
    // Re-timed under the programmatic sequence where it matters: the plain times left are long
    // ones (kept) and one short one (left out).
    let rows = [
        hyb_row(true, short, Programmatic),
        hyb_row(true, short, Programmatic),
        hyb_row(true, short, Plain),
        hyb_row(true, long, Plain),
        hyb_row(false, short, Plain),
    ];
    assert_eq!(keep(&rows), (Programmatic, vec![0, 1, 3, 4]));
    // Only long times or no COO part: nothing to tell, the plain sequence, nothing left out.
    let rows = [
        hyb_row(true, long, Programmatic),
        hyb_row(false, short, Programmatic),
    ];
    assert_eq!(keep(&rows), (Plain, vec![0, 1]));
}

#[test]
fn a_model_of_the_programmatic_sequence_says_so_and_older_models_read_plain() {
    let rows: Vec<TableRow> = (0..40)
        .map(|i| hyb_row(i % 2 == 0, 4e-6 + 1e-7 * i as f64, HybLaunch::Programmatic))
        .collect();
    let refs: Vec<&TableRow> = rows.iter().collect();
    let m = fit::fit_with(&refs, Precision::F64, 0).unwrap();
    assert_eq!(m.hyb_launch, HybLaunch::Programmatic);
    let json = serde_json::to_string(&m).unwrap();
    assert!(
        json.contains(r#""hyb_launch":"programmatic""#),
        "{json:.200}"
    );
    let back: OwnModel = serde_json::from_str(&json).unwrap();
    assert_eq!(back.hyb_launch, HybLaunch::Programmatic);
    // A model stored before session 83 has no field: the plain sequence, and none is written.
    let plain = OwnModel {
        hyb_launch: HybLaunch::Plain,
        ..back
    };
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("hyb_launch"));
    assert_eq!(
        serde_json::from_str::<OwnModel>(&json).unwrap().hyb_launch,
        HybLaunch::Plain
    );
}

#[test]
fn version_12_gives_hybs_trees_its_coo_part() {
    // 5,000 rows of 1 entry and one of 9: HYB's width is 1, its COO part the long row's 8.
    let f = hyb_fixture(true);
    assert_eq!((f.hyb_width, f.hyb_coo_nnz), (1, 8));
    let hyb = KernelConfig::parse_label("hyb").unwrap();
    let l = |x: f64| x.ln_1p();
    let parts = hyb_parts(&f, &hyb);
    // The histogram puts the row of 9 in [8, 16) at its middle length: 1 row, 11.5 − 1 beyond.
    assert_eq!(parts[0], l(8.0));
    assert!((parts[1] - 8.0 / 5_009.0).abs() < 1e-12, "{parts:?}");
    assert_eq!(parts[2], l(1.0));
    assert_eq!(parts[4], l(1.0));
    // Another fixed width estimates its COO part from the histogram.
    let wide = KernelConfig::parse_label("hyb").map(|mut c| {
        c.params.hyb.width = Some(4);
        c
    });
    let p4 = hyb_parts(&f, &wide.unwrap());
    assert_eq!(p4[0], l(11.5 - 4.0));
    assert_eq!(p4[2], l(1.0));
    // Without a COO part, and for every other configuration, nothing.
    assert_eq!(hyb_parts(&hyb_fixture(false), &hyb)[..3], [0.0; 3]);
    let ell = KernelConfig::parse_label("ell").unwrap();
    assert_eq!(hyb_parts(&f, &ell), [0.0; 5]);
    // The trees read them last from version 12, not before.
    let d = device(3e12, 50e6);
    let (x12, ..) = features(&f, &hyb, 8, &d, 1e-7, 12).unwrap();
    let (x11, ..) = features(&f, &hyb, 8, &d, 1e-7, 11).unwrap();
    assert_eq!(x12.len(), x11.len() + 5);
    assert_eq!(x12[x11.len()..], parts);
}

#[test]
fn rows_beyond_a_width_come_from_the_log2_histogram() {
    // Buckets: length 0 (3 rows), [1, 2) 4 rows, [2, 4) 2 rows, [4, 8) 2 rows.
    let h = [3, 4, 2, 2];
    assert_eq!(rows_beyond(&h, 7.0), (0.0, 0.0));
    // Width 5: lengths 6 and 7 of [4, 8) lie beyond, half the bucket, at 6.5 on average.
    assert_eq!(rows_beyond(&h, 5.0), (1.0, 1.5));
    // Width 0: every non-empty row, each bucket at its middle.
    let (rows, entries) = rows_beyond(&h, 0.0);
    assert_eq!(rows, 8.0);
    assert_eq!(entries, 4.0 * 1.0 + 2.0 * 2.5 + 2.0 * 5.5);
}

/// 4,992 rows of 1 entry and, after them, 16 adjacent rows of 4,000: HYB's width is 1 and its
/// COO part the 16 long rows' 63,984 entries beyond it, one chunk a warp (few entries), each
/// row over ≈ 125 of the walk's warps, all on one 128-byte line of y in f32 and f64 alike.
fn long_hyb_fixture() -> Features {
    let mut rows: Vec<u32> = (0..4_992).collect();
    let mut cols = vec![0u32; 4_992];
    for r in 4_992..5_008 {
        rows.extend(std::iter::repeat(r).take(4_000));
        cols.extend(0..4_000);
    }
    let vals = vec![1.0; rows.len()];
    let a = crate::Csr::<f64>::from_triplets(5_008, 4_000, &rows, &cols, &vals).unwrap();
    Features::compute(&a)
}

#[test]
fn hyb_line_carries_and_their_bound_say_where_the_walk_merges() {
    use crate::backend::cuda::launch::MERGE_FROM;
    use crate::features::access::hyb_may_reach;
    let long = long_hyb_fixture();
    let c = long.access.as_ref().unwrap().hyb_line_carries.unwrap();
    // 16 rows × 125 or 126 warps (63,984 entries from offset 0: row k's 3,999 from 3,999k).
    assert!((16 * 125..=16 * 126).contains(&c[0]), "{c:?}");
    assert_eq!(c[0], c[1], "16 rows fit one line in both precisions");
    assert!(hyb_may_reach(&long, 4, MERGE_FROM) && hyb_may_reach(&long, 8, MERGE_FROM));
    // Without the count (features of an older table) the bound still says it may.
    let mut old = long.clone();
    old.access.as_mut().unwrap().hyb_line_carries = None;
    assert!(hyb_may_reach(&old, 4, MERGE_FROM) && hyb_may_reach(&old, 8, MERGE_FROM));
    // The count, where present, decides: these 16 rows never reach 10,000.
    assert!(!hyb_may_reach(&long, 4, 10_000));
    // A COO part of 8 entries cannot, by the bound alone either.
    let mut small = hyb_fixture(true);
    assert_eq!(
        small.access.as_ref().unwrap().hyb_line_carries,
        Some([0, 0])
    );
    small.access.as_mut().unwrap().hyb_line_carries = None;
    assert!(!hyb_may_reach(&small, 4, MERGE_FROM) && !hyb_may_reach(&small, 8, MERGE_FROM));
    // Split at another width the count no longer describes HYB's COO part.
    let mut split = long.clone();
    let a = crate::Csr::<f64>::from_triplets(1, 1, &[0], &[0], &[1.0]).unwrap();
    split.split_hyb_at(&a, 0);
    assert_eq!(split.access.as_ref().unwrap().hyb_line_carries, None);
}

#[test]
fn version_13_tells_hybs_trees_where_its_coo_part_merges() {
    let long = long_hyb_fixture();
    let c = long.access.as_ref().unwrap().hyb_line_carries.unwrap()[1];
    let hyb = KernelConfig::parse_label("hyb").unwrap();
    assert_eq!(hyb_merged(&long, &hyb, 8), [1.0, (c as f64).ln_1p()]);
    // Below the cut, for another configuration, at another fixed width: nothing.
    assert_eq!(hyb_merged(&hyb_fixture(true), &hyb, 8), [0.0; 2]);
    let ell = KernelConfig::parse_label("ell").unwrap();
    assert_eq!(hyb_merged(&long, &ell, 8), [0.0; 2]);
    let mut wide = hyb.clone();
    wide.params.hyb.width = Some(8);
    assert_eq!(hyb_merged(&long, &wide, 8), [0.0; 2]);
    // The trees read them last from version 13, not before.
    let d = device(3e12, 50e6);
    let (x13, ..) = features(&long, &hyb, 8, &d, 1e-7, 13).unwrap();
    let (x12, ..) = features(&long, &hyb, 8, &d, 1e-7, 12).unwrap();
    assert_eq!(x13.len(), x12.len() + 2);
    assert_eq!(x13[x12.len()..], hyb_merged(&long, &hyb, 8));
}

#[test]
fn the_merged_sequence_keeps_programmatic_times_only_where_hyb_cannot_merge() {
    use HybLaunch::{Programmatic, ProgrammaticMerged};
    let row = |f: Features, seconds: f64, sequence: HybLaunch| {
        let kernel = sequence.revision().map(String::from);
        table_row(f, vec![config_time("hyb", Some(seconds), kernel)])
    };
    let mut old = long_hyb_fixture();
    old.access.as_mut().unwrap().hyb_line_carries = None;
    let (short, long) = (5e-6, 2.0 * fit::HYB_SEQUENCES_AGREE_FROM_S);
    let rows = [
        row(long_hyb_fixture(), short, ProgrammaticMerged), // re-timed merged: kept
        row(hyb_fixture(true), short, Programmatic),        // cannot merge: the same kernel, kept
        row(old.clone(), short, Programmatic),              // may merge, not re-timed: left out
        row(old, long, Programmatic),                       // at any length
        row(long_hyb_fixture(), long, Programmatic),        // its count says it merges
        row(hyb_fixture(false), short, Programmatic),       // no COO part: kept
    ];
    assert_eq!(hyb_kept(&rows), (ProgrammaticMerged, vec![0, 1, 5]));
    // One merged time, however long, makes the fit model the merged sequence: the programmatic
    // time whose count reaches the cut is left out, those that cannot merge kept.
    let rows = [
        row(hyb_fixture(true), short, Programmatic),
        row(hyb_fixture(true), short, Programmatic),
        row(long_hyb_fixture(), long, Programmatic),
        row(long_hyb_fixture(), long, ProgrammaticMerged),
    ];
    assert_eq!(hyb_kept(&rows), (ProgrammaticMerged, vec![0, 1, 3]));
    // Without a merged time the programmatic sequence, which keeps no merged time either.
    let rows = [
        row(hyb_fixture(true), short, Programmatic),
        row(long_hyb_fixture(), long, Programmatic),
    ];
    assert_eq!(hyb_kept(&rows), (Programmatic, vec![0, 1]));
}
