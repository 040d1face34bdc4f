use super::fit::Prepared;
use super::*;

/// A training matrix of `n` rows of `len` non-zeros (its shape: only size and row length
/// vary) whose configurations `a`, `b`, `c` measured `t` and were predicted `p`.
fn case(family: &str, n: usize, len: usize, t: [f64; 3], p: [f64; 3]) -> Case {
    let rows: Vec<u32> = (0..(n * len) as u32).map(|k| k / len as u32).collect();
    let cols: Vec<u32> = (0..(n * len) as u32).map(|k| k % n as u32).collect();
    let m = crate::Csr::<f64>::from_triplets(n, n, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
    let f = Features::compute(&m);
    Case {
        matrix: format!("{family}-{n}x{len}"),
        family: family.into(),
        f64: true,
        shape: shape(&f).unwrap(),
        cands: ["a", "b", "c"]
            .iter()
            .zip(t.iter().zip(p))
            .map(|(c, (&t, p))| Cand {
                config: c.to_string(),
                measured: t,
                predicted: p,
            })
            .collect(),
    }
}

/// Matrices of short rows where the model predicts `a` fastest but `b` runs fastest, and
/// matrices of long rows where it predicts right (`a`). (The slow times vary a little
/// from matrix to matrix: the trees' `f32` thresholds would round a split between regrets
/// that are all exactly equal.)
fn corpus() -> Vec<Case> {
    (0..60)
        .map(|k| {
            let n = 200 + 7 * k;
            let slow = 2.0 + 0.01 * k as f64;
            if k % 2 == 0 {
                case(
                    &format!("short{k}"),
                    n,
                    2,
                    [slow, 1.0, 3.0],
                    [1.0, 1.1, 3.0],
                )
            } else {
                case(
                    &format!("long{k}"),
                    n,
                    40,
                    [1.0, slow, 3.0],
                    [1.0, 1.1, 3.0],
                )
            }
        })
        .collect()
}

#[test]
fn the_stage_learns_where_the_argmin_misses_and_says_so_in_its_cross_validation() {
    let cases = corpus();
    let scores = cross_validate(&cases, 5).unwrap();
    assert_eq!(scores.len(), 1);
    let s = &scores[0];
    assert_eq!((s.precision.as_str(), s.matrices), ("f64", 60));
    // The argmin (`a`) is right on the long-row half only; the stage learns the short rows.
    assert!((s.argmin_within_5 - 0.5).abs() < 1e-9, "{s:?}");
    assert!(s.stage_within_5 > 0.9, "{s:?}");
    assert!(s.stage_fraction > s.argmin_fraction);
    // The argmin runs the short rows 2.0–2.58× slower than the best: 30 beyond 1.2×.
    assert_eq!(s.argmin_beyond_12, 30, "{s:?}");
    assert!((s.argmin_slowest - 2.58).abs() < 1e-9, "{s:?}");
    assert!(s.stage_beyond_12 < 6 && s.stage_slowest >= 1.0, "{s:?}");
    assert!(markdown(&scores, 5).contains("| f64 | 60 |"));
    assert!(markdown(&scores, 5).contains("| 30 → **"));
    // The same picks, one a case, for experiments on what follows the stage.
    let picks = cross_validated_picks(&cases, 5).unwrap();
    assert_eq!(picks.len(), cases.len());
    let again = score_stored(&cases, |c| {
        let i = cases.iter().position(|x| std::ptr::eq(x, c))?;
        Some(picks[i])
    });
    let (a, b) = (&again[0], &scores[0]);
    assert_eq!(
        (a.matrices, a.stage_beyond_12, a.stage_slowest),
        (b.matrices, b.stage_beyond_12, b.stage_slowest)
    );
    assert!(
        (a.stage_within_5 - b.stage_within_5).abs() < 1e-12,
        "{a:?} {b:?}"
    );
    assert!(
        (a.stage_fraction - b.stage_fraction).abs() < 1e-12,
        "{a:?} {b:?}"
    );
}

#[test]
fn a_stored_stage_picks_from_predictions_and_features_alone() {
    let cases = corpus();
    let [f32s, f64s] = fit(&cases).unwrap();
    assert!(f32s.is_none());
    let stage = f64s.unwrap();
    assert_eq!(stage.library.families.len(), 60);
    assert_eq!(stage.library.regrets.len(), 60 * 3);
    stage.validate().unwrap();
    let mut bad = stage.clone();
    bad.library.shapes.pop();
    assert!(bad.validate().is_err());
    // It survives the profile's JSON.
    let stage: PickStage = serde_json::from_str(&serde_json::to_string(&stage).unwrap()).unwrap();
    let pick = |len: usize| {
        let n = 333;
        let rows: Vec<u32> = (0..(n * len) as u32).map(|k| k / len as u32).collect();
        let cols: Vec<u32> = (0..(n * len) as u32).map(|k| k % n as u32).collect();
        let m =
            crate::Csr::<f64>::from_triplets(n, n, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
        let predicted = [("a", 1.0), ("b", 1.1), ("c", 3.0)].map(|(l, s)| (l.to_string(), s));
        stage.pick(&Features::compute(&m), &predicted, None)
    };
    assert_eq!(pick(2), Some(1), "short rows: b");
    assert_eq!(pick(40), Some(0), "long rows: the argmin");
    // One prediction: nothing to pick from.
    let m = crate::Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 1.0]).unwrap();
    assert_eq!(
        stage.pick(&Features::compute(&m), &[("a".into(), 1.0)], None),
        None
    );
}

#[test]
fn a_matrix_of_a_library_family_is_never_its_own_neighbour() {
    // Two families only: a query of family `short0` reads `long1`'s regrets alone.
    let cases = vec![
        case("short0", 300, 2, [2.0, 1.0, 3.0], [1.0, 1.1, 3.0]),
        case("long1", 300, 40, [1.0, 2.0, 3.0], [1.0, 1.1, 3.0]),
    ];
    let p = Prepared::new(&cases).unwrap();
    let rows = p.rows(0, &|_| true);
    // The KNN regret input (last) of candidate `b` is long1's ln 2, not short0's 0.
    let b = rows.iter().find(|(c, _)| *c == 1).unwrap();
    assert!((b.1.last().unwrap() - 2f64.ln()).abs() < 1e-9, "{:?}", b.1);
}

/// The library scan of a stored stage finds the same neighbours, in the same order and
/// with the same weights to the bit, as [`nearest`] over every row: rows at equal
/// distances (duplicates), a skipped family, fewer rows than neighbours, no neighbour.
#[test]
fn the_library_scan_finds_what_the_plain_selection_finds() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(58);
    for trial in 0..300 {
        let d = 1 + trial % 17;
        let n = rng.random_range(0..200usize);
        // Coarse coordinates, so that many rows tie; some rows repeated exactly.
        let mut shapes: Vec<i32> = (0..n * d).map(|_| rng.random_range(-3..=3) * 500).collect();
        for j in 1..n {
            if rng.random_bool(0.2) {
                let (a, b) = shapes.split_at_mut(j * d);
                b[..d].copy_from_slice(&a[(j - 1) * d..j * d]);
            }
        }
        let families: Vec<u32> = (0..n).map(|_| rng.random_range(0..8u32)).collect();
        let zs: Vec<f64> = (0..d).map(|_| rng.random_range(-2000.0..2000.0)).collect();
        let skip = rng.random_bool(0.5).then(|| rng.random_range(0..8u32));
        let k = trial % 8;
        let unit = 1.0 / (SCALE * SCALE);
        let plain = nearest(
            families.iter().enumerate().filter_map(|(j, &h)| {
                if Some(h) == skip {
                    return None;
                }
                let row = &shapes[j * d..(j + 1) * d];
                let d2: f64 = row
                    .iter()
                    .zip(&zs)
                    .map(|(&s, x)| (s as f64 - x).powi(2))
                    .sum();
                Some((j, d2 * unit))
            }),
            k,
        );
        let scan = nearest_rows(&shapes, &families, &zs, skip, k);
        let bits = |v: &[(usize, f64)]| -> Vec<(usize, u64)> {
            v.iter().map(|&(j, w)| (j, w.to_bits())).collect()
        };
        assert_eq!(
            bits(&scan),
            bits(&plain),
            "trial {trial}: d {d}, n {n}, k {k}"
        );
    }
}
