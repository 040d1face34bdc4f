//! `sparsecast optimize`: the optimization analysis of 004 §4 — partition a matrix by rows, pick a
//! format per block with a model, report the optimal strategy beside every single format, save it
//! as a plan, and optionally run and time it.
//!
//! * this file — arguments, inputs, the driver;
//! * [`measure`] — `--measure`: run the plan, the single formats and cuSPARSE;
//! * [`report`] — what is printed (tables or JSON) and the summary over several matrices.

mod learned;
mod measure;
mod race;
mod report;
mod search;

use super::common;
use crate::backend::{BackendKind, BackendScalar, Opened, TimingProtocol};
use crate::formats::{EllParams, FormatParams, HybParams};
use crate::optimize::{
    block_model, optimize_with_progress, BlockModel, MatrixIdentity, OptimizeOptions, Plan,
    PlanRule, Provenance, DEFAULT_MAX_STRIPS,
};
use crate::{Csr, Precision};
use anyhow::{bail, Context};
use report::{MatrixReport, Summary};
use std::path::PathBuf;

/// Find the fastest row-block partitioning with one format per block (DP), and run it.
///
/// Find the fastest storage strategy for a matrix: cut it by rows into strips, predict every
/// block of consecutive strips in every format the model covers, and choose blocks and formats
/// with the dynamic program of Guo, Wang & Chen (TPDS 2014, Fig. 8 and 11). Prints the optimal
/// strategy (blocks as strip and row ranges, a format per block, the predicted total) beside every
/// single format's prediction, as the paper's Table 3. Where splitting does not pay, the answer is
/// the single best format.
///
/// With our own model (`sparsecast`, the default where the profile has it) or any other model
/// of full features, the matrix is cut into a few strips where its rows change, every block of
/// consecutive strips is predicted in every configuration from its own features, and the plan
/// (adjacent blocks always differ, the floor is paid once, every extra block costs
/// --block-cost-us) is the answer only if its predicted gain over the best single configuration,
/// cuSPARSE included, exceeds the model's uncertainty; otherwise that configuration is the
/// answer, and the output says why. `--model analytical` runs 004's program as below.
///
/// Strips hold S_CSR rows of the profile's device by default (--strip-rows overrides). A matrix
/// with more than --max-strips strips gets taller strips (a multiple of the height), and the
/// output says so.
///
/// --save-plan writes the strategy as an executable plan (JSON) that `sparsecast spmv --plan`
/// runs. --measure builds the plan on the backend, checks y against the f64 reference, and prints
/// measured against predicted times for the plan, every single format and the best cuSPARSE
/// algorithm (CUDA only); with several inputs it ends with a summary: the plan's mean measured
/// improvement over each format on the matrices it partitioned and on all of them.
///
/// Inputs are Matrix Market files (plain or gzip) or JSON files holding a generator spec (as
/// written by `sparsecast generate`), a stack {"stack": [spec, spec, …]} (a heterogeneous matrix
/// made of generated parts stacked by rows), or an array of those.
///
/// Examples:
///   sparsecast optimize matrix.mtx.gz --profile profiles/h200.json.gz
///   sparsecast optimize matrix.mtx.gz --strip-rows 672 --save-plan plan.json
///   sparsecast spmv matrix.mtx.gz --plan plan.json --out y.mtx
///   sparsecast optimize docs/optimizer-generated.json --measure --backend cuda --json > r.json
///   sparsecast optimize matrix.mtx.gz --tune --backend cuda --save-plan plan.json
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Matrix Market files, or JSON generator specs / stacks / arrays of them.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    profile: super::common::ProfileArgs,
    /// The profile's model that predicts every block (`sparsecast profiles` lists them; default:
    /// `sparsecast`, our own, where the profile has it, else `analytical`). `analytical` runs
    /// 004's faithful program on thousands of S_CSR strips; every other model runs on a few
    /// strips cut where the rows change, with every candidate block's full features.
    #[arg(long)]
    model: Option<String>,
    /// Run the optimizer under each of these models of the profile (comma-separated, e.g.
    /// `sparsecast,statistical`) and print their plans side by side: one line per block range
    /// (rows, configuration, predicted time) and each model's answer. Every model, analytical
    /// included, runs the feature-based program here (same cuts, same plan-time rule), so the
    /// plans differ only by the model. Not with --measure, --tune or --save-plan.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["model", "measure", "tune", "save_plan"])]
    models: Option<Vec<String>>,
    /// (Models other than analytical) Budget of feature passes over the matrix for the
    /// candidate blocks: N strips cost about (N+1)(N+2)/6 passes (10: N = 6).
    #[arg(long, default_value_t = 10.0)]
    feature_passes: f64,
    /// (Models other than analytical) The number of strips, overriding --feature-passes.
    #[arg(long)]
    strips: Option<usize>,
    /// Cost of every block beyond the first in a plan, µs (calibrated by
    /// scripts/device_optimizer.sh; default: 5 launch floors, the largest per-block cost
    /// measured on the H200 and H100).
    #[arg(long)]
    block_cost_us: Option<f64>,
    /// How a plan's blocks run, and so how the optimizer costs plans: `serial` (one after
    /// another) or `concurrent` (every block at once: a fork/join CUDA graph). Default: the
    /// measured choice, `concurrent` (faster on 20 of 21 heterogeneous plans measured on the
    /// H100 and H200; `backend::DEFAULT_OVERLAP`). Saved plans carry it. `--model analytical`
    /// is 004's serial program and always runs `serial`.
    #[arg(long, value_enum)]
    overlap: Option<crate::backend::Overlap>,
    /// With --measure (models other than analytical): time the DP's plan (two blocks or more)
    /// and the best single configuration of ours cut into each of these numbers of blocks
    /// (equal non-zeros), each both serially and concurrently, with both rules' predictions:
    /// the comparison of the execution modes (scripts/device_concurrent.sh).
    #[arg(long, value_delimiter = ',')]
    overlap_splits: Option<Vec<usize>>,
    /// A plan is adopted when its predicted gain exceeds this many one-sigma uncertainties
    /// (of the best single configuration plus the blocks').
    #[arg(long, default_value_t = crate::optimize::DEFAULT_ADOPT_SIGMAS)]
    adopt_sigmas: f64,
    /// Each row block's one-sigma uncertainty in a plan of two blocks or more is this many
    /// times the model's (calibrated on whole matrices; recorded device plans' blocks miss by
    /// 1.6–2.7× more: see docs/OPTIMIZER.md).
    #[arg(long, default_value_t = crate::optimize::DEFAULT_BLOCK_SIGMA)]
    block_sigma: f64,
    /// Let row blocks use cuSPARSE algorithms too (the CUDA backend runs them on a row block).
    #[arg(long)]
    vendor_blocks: bool,
    /// (Models other than analytical) Stop taking new inputs after this many seconds; the
    /// inputs left are listed as skipped (device scripts with a time limit).
    #[arg(long)]
    budget_s: Option<f64>,
    /// With --measure: time on a backend the profile was not measured with (dry runs of the
    /// device scripts on the CPU; the predictions are then not for this device).
    #[arg(long)]
    any_backend: bool,
    /// With --measure: also time the best single configuration cut at the strips (same
    /// configuration in every block), to calibrate --block-cost-us.
    #[arg(long)]
    calibrate: bool,
    /// Value precision to optimize for (the profile must have it).
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    /// Rows per strip (default: S_CSR of the profile's device).
    #[arg(long)]
    strip_rows: Option<u64>,
    /// Most strips; taller matrices get taller strips.
    #[arg(long, default_value_t = DEFAULT_MAX_STRIPS)]
    max_strips: u64,
    // --hyb-width, as HYB declares it: one width for every block (default: Bell & Garland's
    // rule per block).
    #[command(flatten)]
    hyb: HybParams,
    // --ell-width, as ELL declares it: one width for every block (default: the block's longest
    // row).
    #[command(flatten)]
    ell: EllParams,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to this file (atomically; gzip-compressed if it ends in `.gz`),
    /// whatever is printed (`--out` is another name of it).
    #[arg(long, visible_alias = "out", value_name = "FILE")]
    json_out: Option<PathBuf>,
    /// With several inputs: print only the summary table.
    #[arg(long)]
    summary_only: bool,
    /// Write the plan here (JSON, atomically; one input only).
    #[arg(long)]
    save_plan: Option<PathBuf>,
    /// Build and time the plan, every single format and the cuSPARSE algorithms.
    #[arg(long)]
    measure: bool,
    /// (Models other than analytical) Answer by measurement: time the DP's plan (two blocks or
    /// more, adopted or not), other candidate plans solved on the same block features (the same
    /// blocks run the other way, the other execution mode's rule, blocks costing one launch
    /// floor, cuSPARSE algorithms as blocks on CUDA; plans of two blocks or more, duplicates
    /// dropped), plans with one block changed (another block size, a runner-up; three
    /// best-first rounds over the plans within 10 % of the fastest, each row cut structure
    /// varied once before any twice), the N predicted-fastest single configurations (default
    /// 5), the predicted-fastest cuSPARSE algorithm and the fastest of each storage format
    /// those N leave out if predicted within 20 % of the fastest, then the other block sizes of
    /// the fastest measured single configuration of ours, on the backend; the (up to 4) within
    /// 5 % of the fastest are timed again side by side in up to 8 memory placements, and the
    /// fastest there, every placement of the race and of the search pooled, is the answer
    /// (--save-plan then writes it). With --measure everything is
    /// timed as well, and the tuned answer and the best single configuration are timed again
    /// side by side, so that they can be compared without the bias of picking the fastest of
    /// noisy times.
    #[arg(long, value_name = "N", num_args = 0..=1)]
    tune: Option<Option<usize>>,
    /// Backend for --measure; default: the profile's (a profile of another backend is refused).
    #[arg(long, value_enum)]
    backend: Option<BackendKind>,
    /// β for --measure (default: the profile's).
    #[arg(long)]
    runs: Option<usize>,
    /// α for --measure (default: the profile's).
    #[arg(long)]
    warmup: Option<usize>,
    /// Seed of x for --measure (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// What every input is optimized with.
struct Setup<'a> {
    model: Box<dyn BlockModel + 'a>,
    by: Provenance,
    opts: OptimizeOptions,
    measure: Option<(Opened, TimingProtocol)>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.tune == Some(Some(0)) {
        bail!(
            "--tune 0 would time no single configuration of ours: give N ≥ 1 (default {})",
            crate::model::SHORTLIST
        );
    }
    let inputs = expand_inputs(&a.inputs)?;
    if a.save_plan.is_some() && inputs.len() != 1 {
        bail!(
            "--save-plan writes the plan of one matrix; {} inputs were given",
            inputs.len()
        );
    }
    // --tune times on the backend as --measure does (fewer kernels).
    let timing = a.measure || a.tune.is_some();
    let (profile_name, profile) = a
        .profile
        .load(timing && a.backend != Some(BackendKind::Cpu), 0)?;
    let section = profile.precision(a.precision)?;
    let measure = if timing {
        let kind = match a.backend {
            Some(k) => k,
            None if profile.backend == "cuda" => BackendKind::Cuda,
            None => BackendKind::Cpu,
        };
        if !a.any_backend {
            profile.check_backend(kind.name())?;
        }
        let protocol = TimingProtocol {
            runs: a.runs.unwrap_or(profile.timing.runs),
            warmup: a.warmup.unwrap_or(profile.timing.warmup),
            ..profile.timing.clone()
        };
        if protocol.runs == 0 || protocol.warmup >= protocol.runs {
            bail!(
                "--warmup {} leaves none of --runs {} to time",
                protocol.warmup,
                protocol.runs
            );
        }
        // One backend for every matrix (crate::backend::Opened says why), running HYB as the
        // profile's model predicts it.
        let opened = Opened::open(kind, 0)?;
        opened.follow_hyb_launch(profile.hyb_launch());
        Some((opened, protocol))
    } else {
        None
    };
    if let Some(names) = &a.models {
        return run_models(
            &a,
            section,
            names,
            profile_name,
            &profile.device_name,
            inputs,
        );
    }
    let model_name = a.model.clone().unwrap_or_else(|| {
        if section.models.iter().any(|m| m.name == "sparsecast") {
            "sparsecast".into()
        } else {
            "analytical".into()
        }
    });
    if model_name == "analytical" && a.tune.is_some() {
        bail!("--tune needs a feature-based model (e.g. sparsecast), not 004's analytical program");
    }
    if model_name == "analytical" && a.overlap == Some(crate::backend::Overlap::Concurrent) {
        bail!(
            "--model analytical is 004's program, which costs a plan as the sum of its blocks \
             run serially; --overlap concurrent needs a feature-based model (e.g. sparsecast)"
        );
    }
    if model_name != "analytical" {
        let by = Provenance {
            model: model_name.clone(),
            profile: profile_name,
            device: profile.device_name.clone(),
            precision: a.precision,
        };
        return run_learned(&a, section, &model_name, by, measure.as_ref(), inputs);
    }
    let setup = Setup {
        model: block_model(&model_name, section)?,
        by: Provenance {
            model: model_name.clone(),
            profile: profile_name,
            device: profile.device_name.clone(),
            precision: a.precision,
        },
        opts: OptimizeOptions {
            strip_rows: a.strip_rows,
            max_strips: a.max_strips,
            params: FormatParams {
                ell: a.ell.clone(),
                hyb: a.hyb.clone(),
                ..FormatParams::default()
            },
        },
        measure,
    };
    let quiet = a.json || (a.summary_only && inputs.len() > 1);
    let mut results = Vec::new();
    let several = inputs.len() > 1;
    // With several inputs, one that cannot be read or optimized is reported and skipped, and
    // the command fails at the end, after every other input was reported.
    let mut failed: Vec<(String, String)> = Vec::new();
    for (name, load) in inputs {
        let res = load()
            .with_context(|| format!("reading {name}"))
            .and_then(|m| match a.precision {
                Precision::F32 => one::<f32>(&a, &setup, &name, &m.cast()),
                Precision::F64 => one::<f64>(&a, &setup, &name, &m),
            });
        let r = match res {
            Ok(r) => r,
            // With --json, the report is printed whatever happens to one input.
            Err(e) if several || a.json => {
                eprintln!("skipped {name}: {e:#}");
                failed.push((name, format!("{e:#}")));
                continue;
            }
            Err(e) => return Err(e),
        };
        if !quiet {
            report::print(&r);
            if let Some(p) = &a.save_plan {
                println!("plan written to {}", p.display());
            }
        }
        results.push(r);
    }
    let summary = Summary::of(&results);
    let skipped: Vec<serde_json::Value> = failed
        .iter()
        .map(|(i, e)| serde_json::json!({ "input": i, "error": e }))
        .collect();
    let out = serde_json::json!({ "results": results, "summary": summary, "failed": skipped });
    if let Some(p) = &a.json_out {
        crate::util::write_data(p, |w| {
            serde_json::to_writer_pretty(&mut *w, &out).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if several {
        report::print_summary(&summary);
    }
    anyhow::ensure!(
        failed.is_empty(),
        "{} of {} inputs failed: {}",
        failed.len(),
        failed.len() + results.len(),
        failed
            .iter()
            .map(|(i, _)| i.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A plan whose y is wrong fails the command, after everything was printed.
    for r in &results {
        if let Some(ms) = &r.measured {
            anyhow::ensure!(
                ms.max_relative_error <= ms.tolerance,
                "{}: the plan's y differs from the f64 reference by {:.2e} (tolerance {:.0e})",
                r.input,
                ms.max_relative_error,
                ms.tolerance
            );
        }
    }
    Ok(())
}

/// The feature-based options of the arguments, with `floor` as the fixed cost of an SpMV and the
/// device's `bounds` (for the concurrent rule's bandwidth times).
fn learned_options(
    a: &Args,
    floor: f64,
    bounds: Option<crate::model::DeviceBounds>,
    cuda: bool,
) -> anyhow::Result<crate::optimize::LearnedOptions> {
    let mut opts = crate::optimize::LearnedOptions::new(floor);
    let overlap = a.overlap.unwrap_or(crate::backend::DEFAULT_OVERLAP);
    opts.rule = PlanRule::for_overlap(overlap, floor);
    opts.bounds = bounds;
    opts.feature_passes = a.feature_passes;
    opts.strips = a.strips;
    opts.adopt_sigmas = a.adopt_sigmas;
    opts.block_sigma = a.block_sigma;
    opts.vendor_blocks = a.vendor_blocks && cuda;
    if let Some(us) = a.block_cost_us {
        anyhow::ensure!(us.is_finite() && us >= 0.0, "--block-cost-us must be ≥ 0");
        opts.rule.block_s = us * 1e-6;
    }
    if a.tune.is_some() {
        // --tune times these programs' plans too (measurement decides): the other execution
        // mode's default rule; each mode with a block costing one launch floor (plans the
        // default per-block cost refuses); on CUDA, both modes' rules with cuSPARSE blocks.
        let other = overlap.other();
        let alt = |rule, vendor_blocks, name| crate::optimize::learned::Alternate {
            rule,
            vendor_blocks,
            name,
        };
        let (vb, conc) = (opts.vendor_blocks, PlanRule::for_overlap(other, floor));
        opts.alternates = vec![alt(conc, vb, "the other mode's rule")];
        for mode in [overlap, other] {
            let cheap = PlanRule {
                block_s: floor,
                ..PlanRule::for_overlap(mode, floor)
            };
            opts.alternates.push(alt(cheap, vb, "blocks of one floor"));
        }
        if cuda && !vb {
            opts.alternates
                .push(alt(opts.rule, true, "cuSPARSE blocks"));
            let name = "cuSPARSE blocks, the other mode's rule";
            opts.alternates.push(alt(conc, true, name));
        }
    }
    Ok(opts)
}

/// `--models a,b`: every input optimized under each named model, printed side by side.
fn run_models(
    a: &Args,
    section: &crate::profile::PrecisionProfile,
    names: &[String],
    profile_name: String,
    device: &str,
    inputs: Vec<(String, Loader)>,
) -> anyhow::Result<()> {
    anyhow::ensure!(!names.is_empty(), "--models needs at least one model name");
    let named = crate::model::registry::select(&section.models, Some(names))?;
    let models: Vec<(String, crate::model::Bounded<&dyn crate::model::Model>)> = named
        .iter()
        .map(|n| {
            (
                n.name.clone(),
                crate::model::Bounded {
                    model: n.model.model(),
                    bounds: section.bounds.clone(),
                },
            )
        })
        .collect();
    let floor = section.bounds.as_ref().map_or(2e-6, |b| b.launch_floor_s);
    let opts = learned_options(a, floor, section.bounds.clone(), true)?;
    let (mut results, mut failed) = (Vec::new(), Vec::<(String, String)>::new());
    for (src, load) in inputs {
        let res = load()
            .with_context(|| format!("reading {src}"))
            .and_then(|m| {
                models
                    .iter()
                    .map(|(name, model)| {
                        let by = Provenance {
                            model: name.clone(),
                            profile: profile_name.clone(),
                            device: device.to_string(),
                            precision: a.precision,
                        };
                        match a.precision {
                            Precision::F32 => learned::one::<f32>(
                                a,
                                model,
                                &opts,
                                &by,
                                None,
                                &src,
                                &m.cast(),
                                true,
                            ),
                            Precision::F64 => {
                                learned::one::<f64>(a, model, &opts, &by, None, &src, &m, true)
                            }
                        }
                    })
                    .collect::<anyhow::Result<Vec<_>>>()
            });
        match res {
            Ok(rs) => {
                if !a.json {
                    learned::print_side_by_side(&rs);
                }
                results.push(serde_json::json!({ "input": src, "models": rs }));
            }
            Err(e) => {
                eprintln!("skipped {src}: {e:#}");
                failed.push((src, format!("{e:#}")));
            }
        }
    }
    let skipped: Vec<serde_json::Value> = failed
        .iter()
        .map(|(i, e)| serde_json::json!({ "input": i, "error": e }))
        .collect();
    let out = serde_json::json!({ "models": names, "results": results, "failed": skipped });
    if let Some(p) = &a.json_out {
        crate::util::write_data(p, |w| {
            serde_json::to_writer_pretty(&mut *w, &out).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    anyhow::ensure!(
        failed.is_empty(),
        "{} of {} inputs failed",
        failed.len(),
        failed.len() + results.len()
    );
    Ok(())
}

/// Every input through the feature-based optimizer ([`learned`]).
fn run_learned(
    a: &Args,
    section: &crate::profile::PrecisionProfile,
    name: &str,
    by: Provenance,
    measure: Option<&(Opened, TimingProtocol)>,
    inputs: Vec<(String, Loader)>,
) -> anyhow::Result<()> {
    let named = crate::model::registry::select(&section.models, Some(&[name.to_string()]))?;
    let model = crate::model::Bounded {
        model: named[0].model.model(),
        bounds: section.bounds.clone(),
    };
    let floor = section.bounds.as_ref().map_or(2e-6, |b| b.launch_floor_s);
    let opts = learned_options(
        a,
        floor,
        section.bounds.clone(),
        measure.map_or(true, |m| m.0.kind() == BackendKind::Cuda),
    )?;
    let several = inputs.len() > 1;
    let quiet = a.json || (a.summary_only && several);
    let (mut results, mut failed) = (Vec::new(), Vec::<(String, String)>::new());
    let (t0, mut over) = (std::time::Instant::now(), Vec::new());
    for (src, load) in inputs {
        if a.budget_s.is_some_and(|b| t0.elapsed().as_secs_f64() > b) {
            over.push(src);
            continue;
        }
        // The family `predict` gives the same input (a file's stem), so that the second stage
        // recommends the same single configuration in both.
        let opts = crate::optimize::LearnedOptions {
            family: Some(crate::evaluate::corpus::short_name(&src)),
            ..opts.clone()
        };
        let res = load()
            .with_context(|| format!("reading {src}"))
            .and_then(|m| match a.precision {
                Precision::F32 => {
                    learned::one::<f32>(a, &model, &opts, &by, measure, &src, &m.cast(), quiet)
                }
                Precision::F64 => {
                    learned::one::<f64>(a, &model, &opts, &by, measure, &src, &m, quiet)
                }
            });
        match res {
            Ok(r) => {
                if !quiet {
                    learned::print(&r);
                }
                results.push(r);
            }
            Err(e) if several || a.json => {
                eprintln!("skipped {src}: {e:#}");
                failed.push((src, format!("{e:#}")));
            }
            Err(e) => return Err(e),
        }
    }
    let summary = learned::summarize(&results);
    let skipped: Vec<serde_json::Value> = failed
        .iter()
        .map(|(i, e)| serde_json::json!({ "input": i, "error": e }))
        .collect();
    if !over.is_empty() {
        eprintln!(
            "note: --budget-s {} reached: {} inputs not optimized",
            a.budget_s.unwrap_or(0.0),
            over.len()
        );
    }
    let out = serde_json::json!({ "results": results, "summary": summary, "failed": skipped,
        "over_budget": over });
    if let Some(p) = &a.json_out {
        crate::util::write_data(p, |w| {
            serde_json::to_writer_pretty(&mut *w, &out).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if several || measure.is_some() {
        learned::print_summary(&summary);
    }
    if !a.json {
        if let (Some(p), 1) = (&a.save_plan, results.len()) {
            println!("plan written to {}", p.display());
        }
    }
    anyhow::ensure!(
        failed.is_empty(),
        "{} of {} inputs failed",
        failed.len(),
        failed.len() + results.len()
    );
    for r in &results {
        if let Some(ms) = &r.measured {
            let tol = match a.precision {
                Precision::F32 => common::tolerance::<f32>(),
                Precision::F64 => common::tolerance::<f64>(),
            };
            anyhow::ensure!(
                ms.max_relative_error <= tol,
                "{}: the plan's y differs from the f64 reference by {:.2e} (tolerance {tol:.0e})",
                r.input,
                ms.max_relative_error
            );
        }
    }
    Ok(())
}

/// Optimize (and measure) one matrix.
fn one<T: BackendScalar>(
    a: &Args,
    s: &Setup,
    source: &str,
    m: &Csr<T>,
) -> anyhow::Result<MatrixReport> {
    // The DP over many strips can take a while: a bar of candidate blocks with an ETA.
    let pb = super::common::progress(0, &format!("optimizing {source}"));
    pb.set_message("candidate blocks");
    let opt = optimize_with_progress(m, s.model.as_ref(), &s.opts, &|done, total| {
        pb.set_length(total);
        pb.set_position(done);
    });
    pb.finish_and_clear();
    let opt = opt.with_context(|| source.to_string())?;
    let plan = Plan::from_optimum(&opt, MatrixIdentity::of(source, m), &s.by);
    if let Some(p) = &a.save_plan {
        plan.save(p)
            .with_context(|| format!("writing the plan to {}", p.display()))?;
    }
    let measured = match &s.measure {
        Some((be, protocol)) => Some(measure::measure_all(
            m,
            &plan,
            &opt,
            &s.opts.params,
            be.get::<T>(),
            protocol,
            a.seed,
        )?),
        None => None,
    };
    Ok(MatrixReport::new(
        source, m, &s.by, &s.opts, &opt, plan, measured,
    ))
}

type Loader = Box<dyn FnOnce() -> crate::Result<Csr<f64>>>;

/// Matrix Market files as they are; JSON files expanded to one input per spec or stack. Matrices
/// are loaded one at a time, when their turn comes.
fn expand_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<(String, Loader)>> {
    let mut out: Vec<(String, Loader)> = Vec::new();
    for path in inputs {
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
            for s in crate::optimize::stack::specs_from_json(&text, &path.display().to_string())? {
                out.push((s.name(), Box::new(move || s.generate())));
            }
        } else {
            let p = path.clone();
            out.push((
                path.display().to_string(),
                Box::new(move || crate::matrix::mm::read::<f64>(&p)),
            ));
        }
    }
    Ok(out)
}
