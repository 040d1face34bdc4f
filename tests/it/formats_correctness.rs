//! Every format, through every non-vendor variant of the CPU backend, in f32 and f64, against the
//! f64 reference SpMV (`Csr::spmv_reference`), on seeded random matrices and on edge cases.
//!
//! The error of each `y[i]` is bounded relative to `Σ_j |a_ij x_j|` (1e-5 in f32, 1e-12 in f64);
//! a row whose terms are all zero must give exactly 0. `y` is poisoned with NaN before every run,
//! so an element a kernel forgets to write fails the test. Formats that refuse a matrix must do
//! so with `Error::FormatRefused`, and each case lists exactly which formats it expects to refuse.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::{Backend, KernelConfig, Variant};
use sparsecast::formats::{
    BsrParams, EllParams, FormatKind, FormatParams, HybParams, SegTileParams, SellParams,
};
use sparsecast::{Csr, Error, Scalar};
use std::collections::BTreeSet;

/// A matrix whose row `i` gets `len(i, rng)` entries at distinct random columns, values in
/// [-1, 1].
fn random_csr(
    seed: u64,
    nrows: usize,
    ncols: usize,
    len: impl Fn(usize, &mut ChaCha8Rng) -> usize,
) -> Csr<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
    for i in 0..nrows {
        let n = len(i, &mut rng).min(ncols);
        let mut picked = BTreeSet::new();
        while picked.len() < n {
            picked.insert(rng.random_range(0..ncols as u32));
        }
        for c in picked {
            rows.push(i as u32);
            cols.push(c);
            vals.push(rng.random_range(-1.0..1.0));
        }
    }
    Csr::from_triplets(nrows, ncols, &rows, &cols, &vals).unwrap()
}

/// A banded matrix: entries at offsets `band` around the diagonal.
fn banded(n: usize, band: &[i64]) -> Csr<f64> {
    let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
    for i in 0..n as i64 {
        for &o in band {
            let j = i + o;
            if (0..n as i64).contains(&j) {
                rows.push(i as u32);
                cols.push(j as u32);
                vals.push(1.0 + (i * 7 + o).rem_euclid(13) as f64 / 8.0);
            }
        }
    }
    Csr::from_triplets(n, n, &rows, &cols, &vals).unwrap()
}

/// Parameter sets every case runs with: the defaults, small C/σ/b with a forced HYB width (the
/// default HYB width of a matrix with fewer than 4096 rows is 0: all-COO), and unsorted SELL with
/// an ELL width 3 beyond the longest row of `m`.
fn param_sets(m: &Csr<f64>) -> Vec<(&'static str, FormatParams)> {
    let longest = (0..m.nrows).map(|i| m.row_len(i)).max().unwrap_or(0);
    // SEG-TILE's segment minimum is lifted in every set, so that it runs on these small
    // matrices (its refusal is tested with the format, src/formats/segtile.rs).
    let segtile = |width| SegTileParams {
        width,
        min_segment: 0.0,
    };
    let small = FormatParams {
        sell: SellParams { c: 4, sigma: 8 },
        bsr: BsrParams { block: 3 },
        hyb: HybParams { width: Some(2) },
        segtile: segtile(4),
        ..FormatParams::default()
    };
    let unsorted = FormatParams {
        sell: SellParams { c: 3, sigma: 1 },
        bsr: BsrParams { block: 1 },
        hyb: HybParams { width: Some(1) },
        ell: EllParams {
            width: Some(longest + 3),
        },
        segtile: segtile(65536),
        ..FormatParams::default()
    };
    let default = FormatParams {
        segtile: segtile(0),
        ..FormatParams::default()
    };
    vec![
        ("default", default),
        ("small", small),
        ("unsorted", unsorted),
    ]
}

/// Check `y` against the f64 reference.
fn check_y<T: Scalar>(a: &Csr<T>, x: &[T], y: &[T], tol: f64, ctx: &str) {
    assert_eq!(y.len(), a.nrows, "{ctx}: y has the wrong length");
    let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
    let reference = a.spmv_reference(&xf);
    for i in 0..a.nrows {
        let (c, v) = a.row(i);
        let scale: f64 = c
            .iter()
            .zip(v)
            .map(|(&c, &v)| (v.as_f64() * xf[c as usize]).abs())
            .sum();
        let got = y[i].as_f64();
        assert!(!got.is_nan(), "{ctx}: y[{i}] not written (NaN)");
        let err = (got - reference[i]).abs();
        assert!(
            err <= tol * scale,
            "{ctx}: y[{i}] = {got}, reference {}, error {err} > {tol} × {scale}",
            reference[i]
        );
    }
}

/// Run every non-vendor variant on `m` in precision `T` with every parameter set; returns the
/// formats that refused (with any parameter set).
fn run_all<T: Scalar>(name: &str, m: &Csr<f64>, tol: f64) -> BTreeSet<FormatKind> {
    let a: Csr<T> = m.cast();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let x: Vec<T> = (0..a.ncols)
        .map(|_| T::cast_f64(rng.random_range(-1.0..1.0)))
        .collect();
    let backend = CpuBackend::new();
    let mut refused = BTreeSet::new();
    for (pname, params) in param_sets(m) {
        for v in Variant::ours() {
            assert!(Backend::<T>::supports(&backend, v));
            let cfg = KernelConfig {
                params: params.clone(),
                ..KernelConfig::new(v)
            };
            let ctx = format!("{name} {} {v} params={pname}", T::PRECISION);
            let mut k = match backend.prepare(&a, &cfg) {
                Ok(k) => k,
                Err(Error::FormatRefused { format, reason }) => {
                    assert_eq!(format, v.format().name(), "{ctx}: refusal names the format");
                    assert!(!reason.is_empty(), "{ctx}: refusal without a reason");
                    refused.insert(v.format());
                    continue;
                }
                Err(e) => panic!("{ctx}: unexpected error {e}"),
            };
            k.set_x(&x).unwrap();
            k.poison_y().unwrap();
            k.run().unwrap();
            check_y(&a, &x, &k.y().unwrap(), tol, &ctx);
        }
    }
    refused
}

/// Run `m` in both precisions and assert the set of refusing formats.
fn case(name: &str, m: Csr<f64>, expect_refused: &[FormatKind]) {
    m.validate().unwrap();
    let expect: BTreeSet<FormatKind> = expect_refused.iter().copied().collect();
    assert_eq!(
        run_all::<f64>(name, &m, 1e-12),
        expect,
        "{name} f64: refusals"
    );
    assert_eq!(
        run_all::<f32>(name, &m, 1e-5),
        expect,
        "{name} f32: refusals"
    );
}

#[test]
fn empty_matrices() {
    case("0x0", Csr::zeros(0, 0), &[]);
    case("5x0", Csr::zeros(5, 0), &[]);
    case("0x5", Csr::zeros(0, 5), &[]);
    case("7x9 no entries", Csr::zeros(7, 9), &[]);
}

#[test]
fn tiny_and_thin_shapes() {
    case(
        "1x1",
        Csr::from_triplets(1, 1, &[0], &[0], &[2.5]).unwrap(),
        &[],
    );
    // One full row: 37 diagonals × 1 row = 37 slots for 37 entries, DIA accepts.
    case("1xn", random_csr(1, 1, 37, |_, _| 37), &[]);
    // One full column: likewise 37 diagonals of 37 rows hold 37 entries: fill 37 > 10.
    case("nx1", random_csr(2, 37, 1, |_, _| 1), &[FormatKind::Dia]);
    case(
        "nx1 sparse",
        random_csr(3, 40, 1, |i, _| i % 3 / 2),
        &[FormatKind::Dia],
    );
}

#[test]
fn empty_rows_and_one_long_row() {
    // Half the rows empty, scattered columns: DIA refuses.
    case(
        "empty rows",
        random_csr(4, 300, 200, |_, r| {
            if r.random_bool(0.5) {
                0
            } else {
                r.random_range(1..6)
            }
        }),
        &[FormatKind::Dia],
    );
    // Row 17 holds 1500 entries, the others 0–3.
    case(
        "one long row",
        random_csr(5, 400, 2000, |i, r| {
            if i == 17 {
                1500
            } else {
                r.random_range(0..4)
            }
        }),
        &[FormatKind::Dia],
    );
}

#[test]
fn rectangular_random() {
    case(
        "wide",
        random_csr(6, 30, 700, |_, r| r.random_range(0..40)),
        &[FormatKind::Dia],
    );
    case(
        "tall",
        random_csr(7, 700, 30, |_, r| r.random_range(0..8)),
        &[FormatKind::Dia],
    );
    case(
        "square",
        random_csr(8, 500, 500, |_, r| r.random_range(0..20)),
        &[FormatKind::Dia],
    );
}

#[test]
fn banded_and_dense_blocks() {
    // Banded: DIA stores 5 diagonals of 600 rows for ~3000 entries, fill ≈ 1.
    case("banded", banded(600, &[-40, -1, 0, 1, 40]), &[]);
    // A dense 24 × 24 matrix: every format accepts.
    case("dense", random_csr(9, 24, 24, |_, _| 24), &[]);
}

#[test]
fn refusals_by_parameter() {
    // An ELL width below the longest row and an invalid σ are refused with FormatRefused.
    let m: Csr<f64> = random_csr(10, 50, 50, |i, _| if i == 3 { 9 } else { 2 });
    let backend = CpuBackend::new();
    let cfg = |v, params| KernelConfig {
        params,
        ..KernelConfig::new(v)
    };
    let ell = FormatParams {
        ell: EllParams { width: Some(8) },
        ..FormatParams::default()
    };
    match backend.prepare(&m, &cfg(Variant::Ell, ell)) {
        Err(Error::FormatRefused { format, reason }) => {
            assert_eq!(format, "ell");
            // The width the matrix needs: its longest row (row 3).
            assert!(
                reason.contains("longest row has 9 entries") && reason.contains("width 8"),
                "{reason}"
            );
        }
        other => panic!("expected an ELL refusal, got {:?}", other.map(|_| ())),
    }
    let sell = FormatParams {
        sell: SellParams { c: 4, sigma: 6 },
        ..FormatParams::default()
    };
    match backend.prepare(&m, &cfg(Variant::Sell, sell)) {
        Err(Error::FormatRefused { format, reason }) => {
            assert_eq!(format, "sell");
            assert!(
                reason.contains("σ = 6") && reason.contains("C = 4"),
                "{reason}"
            );
        }
        other => panic!("expected a SELL refusal, got {:?}", other.map(|_| ())),
    };
}

#[test]
fn large_enough_for_many_parallel_chunks() {
    // ~90 000 entries over 6000 rows: the conversions and kernels cut the work into several
    // chunks, and with ≥ 4096 rows HYB's automatic width is non-zero (both parts in use).
    case(
        "large random",
        random_csr(11, 6000, 5000, |i, r| {
            if i == 4321 {
                600
            } else {
                r.random_range(0..30)
            }
        }),
        &[FormatKind::Dia],
    );
    case(
        "large banded",
        banded(20_000, &[-300, -2, -1, 0, 1, 2, 300]),
        &[],
    );
}
