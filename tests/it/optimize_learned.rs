//! The feature-based optimizer (`src/optimize/learned.rs`): the program over plans with distinct
//! adjacent configurations against brute force, every block predicted on its own rows' features,
//! the adoption rule, and the answer running correctly on the CPU backend.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::backend::{Backend, KernelConfig, Overlap, PreparedSpmv, Variant, VendorAlg};
use sparsecast::features::Features;
use sparsecast::formats::FormatParams;
use sparsecast::matrix::generate::GeneratorSpec;
use sparsecast::model::Model;
use sparsecast::optimize::learned::{bandwidth_seconds, Alternate};
use sparsecast::optimize::merged::{brute_force, brute_force_max, solve_merged};
use sparsecast::optimize::{
    optimize_learned, stack_rows, LearnedOptions, MatrixIdentity, Plan, PlanRule, PreparedPlan,
};
use sparsecast::{Csr, Precision, Result};

#[test]
fn merged_program_equals_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    for case in 0..400 {
        let n = rng.random_range(1..=7);
        let c = rng.random_range(1..=3);
        let table: Vec<f64> = (0..n * n * c)
            .map(|_| {
                if rng.random_bool(0.05) {
                    f64::INFINITY
                } else {
                    rng.random_range(0..6) as f64 + rng.random_range(0.0..1.0)
                }
            })
            .collect();
        let w = |i: usize, j: usize, k: usize| table[(i * n + j) * c + k];
        let want = brute_force(n, c, &w);
        match solve_merged(n, c, w) {
            None => assert!(want.is_infinite(), "case {case}: {want}"),
            Some((blocks, total)) => {
                assert!(
                    (total - want).abs() <= 1e-9,
                    "case {case}: {total} vs {want}"
                );
                assert_eq!(blocks.first().unwrap().first, 0);
                assert_eq!(blocks.last().unwrap().last, n - 1);
                assert!(blocks.windows(2).all(|p| p[0].last + 1 == p[1].first));
                assert!(blocks.windows(2).all(|p| p[0].config != p[1].config));
                let sum: f64 = blocks.iter().map(|b| b.cost).sum();
                assert!((sum - total).abs() <= 1e-9);
            }
        }
    }
}

/// A model whose configurations cost differently by row length: row-per-thread pays the longest
/// row per row, warp-per-row pays 32 per row, COO pays per entry; a vendor configuration pays a
/// bit less than COO. Uncertainty: `sigma` × the prediction.
struct Toy {
    sigma: f64,
}

impl Model for Toy {
    fn name(&self) -> &str {
        "toy"
    }
    fn precision(&self) -> Precision {
        Precision::F64
    }
    fn variants(&self) -> Vec<Variant> {
        self.configs().iter().map(|c| c.variant).collect()
    }
    fn configs(&self) -> Vec<KernelConfig> {
        [
            Variant::Csr { threads_per_row: 1 },
            Variant::Csr {
                threads_per_row: 32,
            },
            Variant::Coo,
            Variant::Vendor(VendorAlg::CooAlg2),
        ]
        .into_iter()
        .map(KernelConfig::new)
        .collect()
    }
    fn predict(&self, f: &Features, v: Variant, p: &FormatParams) -> Result<f64> {
        self.predict_config(
            f,
            &KernelConfig {
                params: p.clone(),
                ..KernelConfig::new(v)
            },
        )
    }
    fn predict_config(&self, f: &Features, cfg: &KernelConfig) -> Result<f64> {
        let (n, nnz) = (f.nrows as f64, f.nnz as f64);
        let work = match cfg.variant {
            Variant::Csr { threads_per_row: 1 } => n * f.max_nnz as f64 * 0.02,
            Variant::Csr { .. } => n * 32.0 * 0.02 * (f.max_nnz as f64 / 32.0).ceil(),
            Variant::Vendor(_) => nnz * 0.9,
            _ => nnz,
        };
        Ok(2e-6 + work * 1e-9)
    }
    fn uncertainty_config(&self, f: &Features, cfg: &KernelConfig) -> Option<f64> {
        Some(self.sigma * self.predict_config(f, cfg).ok()?)
    }
}

/// 4000 short rows (length 4) on top of 64 rows of length 2000.
fn two_parts() -> Csr<f64> {
    let short = serde_json::from_str::<GeneratorSpec>(
        r#"{"family":"random","rows":4000,"cols":4096,"row_len":{"dist":"constant","nnz":4},"seed":3}"#,
    )
    .unwrap()
    .generate()
    .unwrap();
    let long = serde_json::from_str::<GeneratorSpec>(
        r#"{"family":"random","rows":64,"cols":4096,"row_len":{"dist":"constant","nnz":2000},"seed":4}"#,
    )
    .unwrap()
    .generate()
    .unwrap();
    stack_rows(&[short, long]).unwrap()
}

#[test]
fn every_block_is_predicted_on_its_own_rows_and_the_plan_pays() {
    let a = two_parts();
    let model = Toy { sigma: 0.0 };
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(3);
    opts.rule = PlanRule {
        floor_s: 2e-6,
        block_s: 1e-7,
        overlap: Overlap::Serial,
    };
    let opt = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    // The change point is a cut; the long rows are their own block.
    assert!(opt.cuts.contains(&4000), "{:?}", opt.cuts);
    for b in &opt.plan {
        let f = Features::compute(&a.slice_rows(b.rows.start, b.rows.end));
        assert_eq!(b.predicted, model.predict_config(&f, &b.config).unwrap());
        // Its runners-up: the next-fastest non-vendor candidates on the same rows, fastest
        // first, each with its own prediction there (the toy has 3 non-vendor candidates).
        assert_eq!(b.runners_up.len(), 2, "{:?}", b.runners_up);
        assert!(b
            .runners_up
            .iter()
            .all(|(c, _)| c != &b.config && !c.variant.is_vendor()));
        assert!(b.runners_up[0].1 <= b.runners_up[1].1);
        for (c, t) in &b.runners_up {
            assert_eq!(*t, model.predict_config(&f, c).unwrap());
        }
    }
    let times: Vec<f64> = opt.plan.iter().map(|b| b.predicted).collect();
    assert!((opt.plan_predicted - opts.rule.plan_time(&times)).abs() < 1e-15);
    // Brute force over the cuts and candidates (vendor excluded from blocks by default).
    let n = opt.cuts.len() - 1;
    let cand: Vec<KernelConfig> = model
        .configs()
        .into_iter()
        .filter(|c| !c.variant.is_vendor())
        .collect();
    let w = |i: usize, j: usize, k: usize| {
        let f = Features::compute(&a.slice_rows(opt.cuts[i], opt.cuts[j + 1]));
        opts.rule
            .block_cost(model.predict_config(&f, &cand[k]).unwrap())
    };
    let want = brute_force(n, cand.len(), &w) + opts.rule.offset();
    assert!(
        (opt.plan_predicted - want).abs() < 1e-12,
        "{} vs {want}",
        opt.plan_predicted
    );
    assert!(opt.plan.len() >= 2);
    assert!(opt.plan.windows(2).all(|p| p[0].config != p[1].config));
    // No uncertainty: a plan faster than every single configuration is adopted.
    let best = opt.best_single().unwrap().seconds.unwrap();
    assert!(opt.plan_predicted < best);
    assert!(opt.adopted, "{}", opt.verdict);
    assert_eq!(opt.chosen(), opt.plan);
}

#[test]
fn a_gain_within_the_uncertainty_keeps_the_best_single_configuration() {
    let a = two_parts();
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(3);
    opts.rule.block_s = 1e-7;
    let toy = Toy { sigma: 0.1 };
    let opt = optimize_learned(&a, &toy, &opts, &|_, _| {}).unwrap();
    // The gain in units of the summed uncertainties decides, on either side of it.
    let best = opt.best_single().unwrap();
    let (t_s, u_s) = (
        best.seconds.unwrap(),
        best.sigma.unwrap() * best.seconds.unwrap(),
    );
    let ratio = (t_s - opt.plan_predicted) / (u_s + opt.plan_uncertainty);
    assert!(ratio > 0.0);
    opts.adopt_sigmas = ratio * 0.99;
    assert!(
        optimize_learned(&a, &toy, &opts, &|_, _| {})
            .unwrap()
            .adopted
    );
    opts.adopt_sigmas = ratio * 1.01;
    let opt = optimize_learned(&a, &toy, &opts, &|_, _| {}).unwrap();
    assert!(opt.plan.len() >= 2);
    assert!(!opt.adopted);
    assert!(opt.verdict.contains("does not exceed"), "{}", opt.verdict);
    let chosen = opt.chosen();
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0].rows, 0..a.nrows);
    // The best single configuration may be a cuSPARSE one (here the toy's cheapest).
    assert_eq!(chosen[0].config, opt.best_single().unwrap().config);
    assert_eq!(
        opt.chosen_predicted(),
        opt.best_single().unwrap().seconds.unwrap()
    );
    // A split's blocks carry the block factor on their sigma: the plan's uncertainty is the
    // factor × Σ σ_b·T_b, so a larger factor asks for a larger gain.
    let sum: f64 = opt.plan.iter().map(|b| b.sigma * b.predicted).sum();
    assert!(
        (opt.plan_uncertainty - opts.block_sigma * sum).abs() <= 1e-12 * sum,
        "{} vs {} × {sum}",
        opt.plan_uncertainty,
        opts.block_sigma
    );
    opts.block_sigma *= 2.0;
    let wider = optimize_learned(&a, &toy, &opts, &|_, _| {}).unwrap();
    assert!((wider.plan_uncertainty - 2.0 * opt.plan_uncertainty).abs() <= 1e-12 * sum);
}

#[test]
fn the_answer_runs_on_the_cpu_backend() {
    let a = two_parts();
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(4);
    opts.rule.block_s = 0.0;
    let opt = optimize_learned(&a, &Toy { sigma: 0.0 }, &opts, &|_, _| {}).unwrap();
    let blocks: Vec<_> = opt
        .chosen()
        .iter()
        .map(|b| (b.rows.clone(), b.config.clone()))
        .collect();
    let plan = Plan::by_rows(MatrixIdentity::of("two", &a), Precision::F64, &blocks).unwrap();
    let be = sparsecast::backend::cpu::CpuBackend::new();
    let mut p = PreparedPlan::new(&be as &dyn Backend<f64>, &a, &plan, "plan").unwrap();
    let x: Vec<f64> = (0..a.ncols).map(|i| (i % 7) as f64 - 3.0).collect();
    p.set_x(&x).unwrap();
    p.run().unwrap();
    let y = p.y().unwrap();
    for (r, yr) in y.iter().enumerate() {
        let (c, v) = a.row(r);
        let want: f64 = c.iter().zip(v).map(|(&c, &v)| v * x[c as usize]).sum();
        assert!((yr - want).abs() <= 1e-9 * (1.0 + want.abs()), "row {r}");
    }
}

#[test]
fn concurrent_plans_are_costed_as_they_run_and_equal_brute_force() {
    let a = two_parts();
    let model = Toy { sigma: 0.0 };
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(4);
    opts.rule = PlanRule::for_overlap(Overlap::Concurrent, 2e-6);
    // A slow device (100 GB/s): the blocks' bytes at the ceiling are reported beside them (not
    // part of the plan's time, see optimize::rule).
    opts.bounds = Some(sparsecast::model::DeviceBounds {
        launch_floor_s: 2e-6,
        dram_gbs: 100.0,
        l2_gbs: 100.0,
        l2_bytes: 0,
        l2_read_gbs: None,
    });
    let opt = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    assert_eq!(opt.rule.overlap, Overlap::Concurrent);
    let times: Vec<f64> = opt.plan.iter().map(|b| b.predicted).collect();
    let betas: Vec<f64> = opt.plan.iter().map(|b| b.bandwidth_s.unwrap()).collect();
    assert!(betas.iter().all(|b| b.is_finite() && *b > 0.0), "{betas:?}");
    assert!((opt.plan_predicted - opts.rule.plan_time(&times)).abs() < 1e-15);
    // Brute force over every plan of the cuts: max(chain, largest block).
    let n = opt.cuts.len() - 1;
    let cand: Vec<KernelConfig> = model
        .configs()
        .into_iter()
        .filter(|c| !c.variant.is_vendor())
        .collect();
    let f = |i: usize, j: usize| Features::compute(&a.slice_rows(opt.cuts[i], opt.cuts[j + 1]));
    let alone = |i: usize, j: usize, k: usize| model.predict_config(&f(i, j), &cand[k]).unwrap();
    let w = |i: usize, j: usize, k: usize| {
        let fb = f(i, j);
        let t = model.predict_config(&fb, &cand[k]).unwrap();
        assert!(bandwidth_seconds(&fb, &cand[k], 8, 100.0) > 0.0);
        opts.rule.block_cost(t)
    };
    let want = brute_force_max(n, cand.len(), opts.rule.offset(), &w, &alone);
    assert!(
        (opt.plan_predicted - want).abs() < 1e-12,
        "{} vs {want}",
        opt.plan_predicted
    );
    // Never below the largest block alone.
    assert!(opt.plan_predicted >= times.iter().cloned().fold(0.0, f64::max));
    // The serial rule on the same matrix costs the chain of whole kernels: never less.
    let mut serial = opts.clone();
    serial.rule = PlanRule {
        overlap: Overlap::Serial,
        ..opts.rule
    };
    let s = optimize_learned(&a, &model, &serial, &|_, _| {}).unwrap();
    assert!(s.plan_predicted >= opt.plan_predicted - 1e-15);
}

/// The toy plus csr-merge: cheap per entry, dear per row — the best for the long rows, and for
/// the whole matrix as one configuration.
struct WithMerge(Toy);

impl Model for WithMerge {
    fn name(&self) -> &str {
        "toy-merge"
    }
    fn precision(&self) -> Precision {
        Precision::F64
    }
    fn configs(&self) -> Vec<KernelConfig> {
        let mut c = self.0.configs();
        c.push(KernelConfig::new(Variant::CsrMerge));
        c
    }
    fn variants(&self) -> Vec<Variant> {
        self.configs().iter().map(|c| c.variant).collect()
    }
    fn predict(&self, f: &Features, v: Variant, p: &FormatParams) -> Result<f64> {
        self.predict_config(
            f,
            &KernelConfig {
                params: p.clone(),
                ..KernelConfig::new(v)
            },
        )
    }
    fn predict_config(&self, f: &Features, cfg: &KernelConfig) -> Result<f64> {
        match cfg.variant {
            Variant::CsrMerge => Ok(2e-6 + (f.nnz as f64 * 0.01 + f.nrows as f64 * 0.3) * 1e-9),
            _ => self.0.predict_config(f, cfg),
        }
    }
    fn uncertainty_config(&self, f: &Features, cfg: &KernelConfig) -> Option<f64> {
        Some(self.0.sigma * self.predict_config(f, cfg).ok()?)
    }
}

#[test]
fn concurrent_plans_leave_out_csr_merge_which_stays_a_single_configuration() {
    let a = two_parts();
    let model = WithMerge(Toy { sigma: 0.0 });
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(4);
    opts.rule = PlanRule {
        overlap: Overlap::Serial,
        block_s: 0.0,
        ..opts.rule
    };
    let serial = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    let merge = |o: &sparsecast::optimize::learned::LearnedOptimum| {
        o.plan.iter().any(|b| b.config.variant == Variant::CsrMerge)
    };
    assert!(
        serial.plan.len() >= 2 && merge(&serial),
        "{:?}",
        serial.plan
    );
    opts.rule = PlanRule {
        overlap: Overlap::Concurrent,
        ..opts.rule
    };
    let conc = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    assert!(!merge(&conc), "{:?}", conc.plan);
    assert_eq!(
        conc.best_single().unwrap().config.variant,
        Variant::CsrMerge
    );
}

/// `alternates` (what `optimize --tune` also times): each alternate's plan is the plan the
/// DP gives when that rule is the main one, from the same block predictions, and the main plan
/// does not change.
#[test]
fn alternate_rules_solve_the_same_program_as_the_main_rule_would() {
    let a = two_parts();
    let model = WithMerge(Toy { sigma: 0.0 });
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(4);
    let concurrent = PlanRule {
        block_s: 0.0,
        ..PlanRule::for_overlap(Overlap::Concurrent, 2e-6)
    };
    let cheap = PlanRule {
        block_s: 0.0,
        ..opts.rule
    };
    let alone = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    assert!(alone.alternates.is_empty());
    let alt = |rule| Alternate {
        rule,
        vendor_blocks: false,
        name: "test",
    };
    let vendor = Alternate {
        rule: opts.rule,
        vendor_blocks: true,
        name: "cuSPARSE blocks",
    };
    opts.alternates = vec![alt(concurrent), alt(cheap), vendor];
    let opt = optimize_learned(&a, &model, &opts, &|_, _| {}).unwrap();
    assert_eq!(opt.plan, alone.plan);
    assert_eq!(opt.plan_predicted, alone.plan_predicted);
    assert_eq!(opt.alternates.len(), 3);
    for (alt, solved) in &opt.alternates {
        let rule = alt.rule;
        let mut o = opts.clone();
        o.rule = rule;
        o.vendor_blocks = alt.vendor_blocks;
        o.alternates.clear();
        let want = optimize_learned(&a, &model, &o, &|_, _| {}).unwrap();
        let (plan, t) = solved.as_ref().unwrap();
        assert_eq!(plan, &want.plan, "{rule:?}");
        assert!((t - want.plan_predicted).abs() < 1e-15, "{rule:?}");
    }
    // The concurrent alternate leaves csr-merge out, the serial one with free blocks cuts.
    let (conc, _) = opt.alternates[0].1.as_ref().unwrap();
    assert!(conc.iter().all(|b| b.config.variant != Variant::CsrMerge));
    assert!(opt.alternates[1].1.as_ref().unwrap().0.len() >= 2);
}

/// [`Toy`] with a second stage that picks the second-fastest prediction, except for a matrix of
/// the family `own` (as a stage that leaves the matrix's own family out may decide otherwise).
struct PicksSecond(Toy);

impl Model for PicksSecond {
    fn name(&self) -> &str {
        "picks-second"
    }
    fn precision(&self) -> Precision {
        self.0.precision()
    }
    fn variants(&self) -> Vec<Variant> {
        self.0.variants()
    }
    fn configs(&self) -> Vec<KernelConfig> {
        self.0.configs()
    }
    fn predict(&self, f: &Features, v: Variant, p: &FormatParams) -> Result<f64> {
        self.0.predict(f, v, p)
    }
    fn predict_config(&self, f: &Features, cfg: &KernelConfig) -> Result<f64> {
        self.0.predict_config(f, cfg)
    }
    fn uncertainty_config(&self, f: &Features, cfg: &KernelConfig) -> Option<f64> {
        self.0.uncertainty_config(f, cfg)
    }
    fn pick(&self, _: &Features, p: &[(String, f64)], family: Option<&str>) -> Option<usize> {
        (p.len() >= 2 && family != Some("own")).then_some(1)
    }
}

#[test]
fn the_best_single_configuration_is_the_second_stages_pick_as_in_predict() {
    // Uniform rows: no split pays, the answer is a single configuration.
    let a = serde_json::from_str::<GeneratorSpec>(
        r#"{"family":"random","rows":3000,"cols":3000,"row_len":{"dist":"constant","nnz":8},"seed":5}"#,
    )
    .unwrap()
    .generate()
    .unwrap();
    let mut opts = LearnedOptions::new(2e-6);
    opts.strips = Some(2);
    let plain = optimize_learned(&a, &Toy { sigma: 0.1 }, &opts, &|_, _| {}).unwrap();
    let staged = optimize_learned(&a, &PicksSecond(Toy { sigma: 0.1 }), &opts, &|_, _| {}).unwrap();
    assert!(!plain.adopted && !staged.adopted, "{}", staged.verdict);
    // Without a stage, the fastest prediction; with one, its pick (the second-fastest) first,
    // the others in their order, and the answer runs it.
    assert_eq!(plain.best_single().unwrap().config, plain.singles[0].config);
    assert_eq!(
        staged.best_single().unwrap().config,
        plain.singles[1].config
    );
    assert_eq!(staged.singles[1].config, plain.singles[0].config);
    assert_eq!(staged.singles[2..], plain.singles[2..]);
    assert_eq!(staged.chosen()[0].config, plain.singles[1].config);
    assert!(
        staged.verdict.contains("second stage"),
        "{}",
        staged.verdict
    );
    // The stage is asked with the matrix's family, as `predict` asks it.
    opts.family = Some("own".into());
    let own = optimize_learned(&a, &PicksSecond(Toy { sigma: 0.1 }), &opts, &|_, _| {}).unwrap();
    assert_eq!(own.singles, plain.singles);
}
