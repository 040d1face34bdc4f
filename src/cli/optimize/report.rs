//! What `optimize` prints: per matrix the paper's Table 3 line (strategy, formats), the blocks
//! with every candidate's prediction, every single format, and the measurements; over several
//! matrices a summary in the form of 004 §5.2.2 (mean improvement of the plan over each format on
//! the matrices it partitioned).

use super::measure::{improvement, Measured};
use crate::cli::common;
use crate::model::Ranked;
use crate::optimize::{OptimizeOptions, Optimum, Plan, Provenance, StripLayout};
use crate::{Csr, Precision, Scalar};
use serde::Serialize;

/// One block as reported.
#[derive(Debug, Serialize)]
pub struct BlockReport {
    /// 1-based, inclusive.
    pub strips: [usize; 2],
    /// `[start, end)`.
    pub rows: [usize; 2],
    /// The chosen kernel.
    pub kernel: String,
    /// `E[i, j]`.
    pub predicted_seconds: f64,
    /// Every candidate on this block (`null`: refused).
    pub candidates: Vec<(String, Option<f64>)>,
}

/// Everything `optimize` reports for one matrix.
#[derive(Debug, Serialize)]
pub struct MatrixReport {
    pub input: String,
    pub precision: Precision,
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
    pub model: String,
    pub profile: String,
    pub device: String,
    pub layout: StripLayout,
    /// Where the requested strip height came from.
    pub strip_source: String,
    pub max_strips: u64,
    /// `N(N+1)/2`.
    pub blocks_evaluated: u64,
    /// Candidate kernels per block.
    pub kernels: usize,
    pub distinct_row_lengths: usize,
    pub histogram_entries: usize,
    /// Wall-clock seconds of the strip table, and of the `E` table + DP.
    pub seconds_strip_table: f64,
    pub seconds_dp: f64,
    /// The paper's "Optimal Strategy" and "Optimal Format(s)".
    pub strategy: String,
    pub formats: String,
    /// `T[1, N]`.
    pub predicted_seconds: f64,
    pub blocks: Vec<BlockReport>,
    /// Every single format on the whole matrix, ranked.
    pub singles: Vec<Ranked>,
    pub plan: Plan,
    pub measured: Option<Measured>,
}

impl MatrixReport {
    /// Assemble the report of one matrix.
    pub fn new<T: Scalar>(
        source: &str,
        m: &Csr<T>,
        by: &Provenance,
        opts: &OptimizeOptions,
        opt: &Optimum,
        plan: Plan,
        measured: Option<Measured>,
    ) -> MatrixReport {
        let (strategy, formats) = plan.strategy();
        MatrixReport {
            input: source.to_string(),
            precision: T::PRECISION,
            nrows: m.nrows,
            ncols: m.ncols,
            nnz: m.nnz(),
            model: by.model.clone(),
            profile: by.profile.clone(),
            device: by.device.clone(),
            layout: opt.layout.clone(),
            strip_source: opt.strip_source.clone(),
            max_strips: opts.max_strips,
            blocks_evaluated: opt.blocks_evaluated,
            kernels: opt.variants.len(),
            distinct_row_lengths: opt.distinct_lengths,
            histogram_entries: opt.histogram_entries,
            seconds_strip_table: opt.seconds_table,
            seconds_dp: opt.seconds_dp,
            strategy,
            formats,
            predicted_seconds: opt.predicted,
            blocks: opt
                .blocks
                .iter()
                .map(|b| BlockReport {
                    strips: [b.strips.0 + 1, b.strips.1 + 1],
                    rows: [b.rows.start, b.rows.end],
                    kernel: b.variant.name(),
                    predicted_seconds: b.predicted,
                    candidates: b.candidates.iter().map(|(v, t)| (v.name(), *t)).collect(),
                })
                .collect(),
            singles: opt.singles.clone(),
            plan,
            measured,
        }
    }
}

fn opt_seconds(t: Option<f64>) -> String {
    t.map_or("—".into(), common::fmt_seconds)
}

fn percent(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{:.1} %", 100.0 * x))
}

/// Print one matrix's report as tables.
pub fn print(r: &MatrixReport) {
    println!(
        "{} — {} × {}, {} non-zeros — {}",
        r.input, r.nrows, r.ncols, r.nnz, r.precision
    );
    println!("model: {} (profile {}, {})", r.model, r.profile, r.device);
    println!(
        "strips: {} — requested {} rows ({})",
        r.layout.describe(r.max_strips),
        r.layout.requested_rows,
        r.strip_source
    );
    if r.layout.is_coarsened() {
        println!(
            "note: the matrix has more than {} strips of {} rows, so strips were made {}× taller",
            r.max_strips, r.layout.requested_rows, r.layout.coarsening
        );
    }
    println!(
        "evaluated {} blocks × {} kernels in {:.3} s (strip table {:.3} s; {} distinct row \
         lengths, {} histogram entries)",
        r.blocks_evaluated,
        r.kernels,
        r.seconds_dp,
        r.seconds_strip_table,
        r.distinct_row_lengths,
        r.histogram_entries
    );
    println!();
    println!("Optimal strategy:  {}", r.strategy);
    println!("Optimal format(s): {}", r.formats);
    let best = r.singles.first().filter(|s| s.seconds.is_some());
    match best {
        Some(b) if r.blocks.len() == 1 => println!(
            "Optimal time:      {} — splitting does not pay: the single best format, {}",
            common::fmt_seconds(r.predicted_seconds),
            b.config.variant
        ),
        Some(b) => println!(
            "Optimal time:      {} — {:.1} % below the best single format ({}, {})",
            common::fmt_seconds(r.predicted_seconds),
            100.0 * improvement(b.seconds, Some(r.predicted_seconds)).unwrap_or(f64::NAN),
            b.config.variant,
            opt_seconds(b.seconds)
        ),
        None => println!(
            "Optimal time:      {}",
            common::fmt_seconds(r.predicted_seconds)
        ),
    }
    let mut header: Vec<String> = ["block", "strips", "rows", "kernel", "predicted"]
        .map(String::from)
        .to_vec();
    if let Some(b) = r.blocks.first() {
        header.extend(b.candidates.iter().map(|(k, _)| k.clone()));
    }
    let mut t = common::table(&header.iter().map(String::as_str).collect::<Vec<_>>());
    for (k, b) in r.blocks.iter().enumerate() {
        let mut row = vec![
            (k + 1).to_string(),
            format!("[{}, {}]", b.strips[0], b.strips[1]),
            format!("{}..{}", b.rows[0], b.rows[1]),
            b.kernel.clone(),
            common::fmt_seconds(b.predicted_seconds),
        ];
        row.extend(b.candidates.iter().map(|(_, t)| opt_seconds(*t)));
        t.add_row(row);
    }
    println!("{t}");
    println!("single formats on the whole matrix:");
    let mut t = common::table(&["rank", "kernel", "predicted", "plan saves", "model input"]);
    for s in &r.singles {
        t.add_row(vec![
            s.rank.map_or("—".into(), |k| k.to_string()),
            s.config.variant.name(),
            opt_seconds(s.seconds),
            percent(improvement(s.seconds, Some(r.predicted_seconds))),
            s.note.clone(),
        ]);
    }
    println!("{t}");
    if let Some(ms) = &r.measured {
        print_measured(ms);
    }
    println!();
}

fn print_measured(ms: &Measured) {
    println!(
        "measured on {} ({}), {} runs, {} warm-up; the plan's y vs the f64 reference: max \
         relative error {:.2e}",
        ms.backend, ms.device, ms.protocol.runs, ms.protocol.warmup, ms.max_relative_error
    );
    println!(
        "plan time = the sum of its blocks' kernel times, run by run (launch overlap and gaps \
         excluded)"
    );
    let mut t = common::table(&[
        "kernel",
        "predicted",
        "measured",
        "median",
        "difference",
        "plan saves (measured)",
        "plan saves (predicted)",
    ]);
    let best_vendor = ms
        .vendor
        .iter()
        .find(|k| Some(&k.kernel) == ms.best_vendor.as_ref());
    for k in std::iter::once(&ms.plan)
        .chain(&ms.singles)
        .chain(best_vendor)
    {
        let name = if Some(&k.kernel) == ms.best_vendor.as_ref() {
            format!("best cuSPARSE: {}", k.kernel)
        } else {
            k.kernel.clone()
        };
        let measured = match &k.error {
            Some(e) => format!("not run: {}", e.chars().take(60).collect::<String>()),
            None => opt_seconds(k.measured_seconds),
        };
        t.add_row(vec![
            name,
            opt_seconds(k.predicted_seconds),
            measured,
            opt_seconds(k.median_seconds),
            percent(k.difference_rate),
            percent(k.plan_improvement),
            percent(k.predicted_plan_improvement),
        ]);
    }
    println!("{t}");
    if ms.vendor.is_empty() {
        println!("(no cuSPARSE algorithm on the {} backend)", ms.backend);
    }
}

/// Mean, median and extremes of some values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    fn of(mut v: Vec<f64>) -> Option<Stats> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(Stats {
            count: n,
            mean: v.iter().sum::<f64>() / n as f64,
            median: if n % 2 == 1 {
                v[n / 2]
            } else {
                0.5 * (v[n / 2 - 1] + v[n / 2])
            },
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// The plan against one kernel over the matrices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Versus {
    /// Kernel name, or `best cuSPARSE`.
    pub kernel: String,
    /// Measured improvement `(t_k − t_plan) / t_k` on the matrices the plan partitioned.
    pub partitioned: Option<Stats>,
    /// The same on every measured matrix.
    pub all: Option<Stats>,
    /// Predicted improvement on the partitioned matrices.
    pub predicted_partitioned: Option<Stats>,
}

/// The summary over several matrices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub matrices: usize,
    /// Plans of more than one block.
    pub partitioned: usize,
    pub measured: usize,
    /// The plan against each single format and the best cuSPARSE algorithm.
    pub versus: Vec<Versus>,
    /// The plan's difference rate |predicted − measured| / measured, on every measured matrix …
    pub plan_difference_rate: Option<Stats>,
    /// … and on the partitioned ones.
    pub plan_difference_rate_partitioned: Option<Stats>,
}

impl Summary {
    /// Summarize the reports.
    pub fn of(results: &[MatrixReport]) -> Summary {
        let parted = |r: &MatrixReport| r.blocks.len() > 1;
        let measured: Vec<(&MatrixReport, &Measured)> = results
            .iter()
            .filter_map(|r| r.measured.as_ref().map(|m| (r, m)))
            .collect();
        let mut kernels: Vec<String> = Vec::new();
        for (_, m) in &measured {
            for k in &m.singles {
                if !kernels.contains(&k.kernel) {
                    kernels.push(k.kernel.clone());
                }
            }
        }
        // In the model's order (that of every block's candidates), not the ranking's.
        if let Some(order) = results.first().and_then(|r| r.blocks.first()) {
            let pos = |k: &String| order.candidates.iter().position(|(n, _)| n == k);
            kernels.sort_by_key(|k| pos(k).unwrap_or(usize::MAX));
        }
        let best_vendor = "best cuSPARSE".to_string();
        kernels.push(best_vendor.clone());
        let find = |m: &'_ Measured, name: &str| {
            if name == best_vendor {
                m.vendor
                    .iter()
                    .find(|k| Some(&k.kernel) == m.best_vendor.as_ref())
                    .and_then(|k| k.plan_improvement.map(|x| (x, None)))
            } else {
                m.singles.iter().find(|k| k.kernel == name).and_then(|k| {
                    k.plan_improvement
                        .map(|x| (x, k.predicted_plan_improvement))
                })
            }
        };
        let versus = kernels
            .iter()
            .map(|name| {
                let all: Vec<(bool, f64, Option<f64>)> = measured
                    .iter()
                    .filter_map(|(r, m)| find(m, name).map(|(x, p)| (parted(r), x, p)))
                    .collect();
                Versus {
                    kernel: name.clone(),
                    partitioned: Stats::of(all.iter().filter(|a| a.0).map(|a| a.1).collect()),
                    all: Stats::of(all.iter().map(|a| a.1).collect()),
                    predicted_partitioned: Stats::of(
                        all.iter().filter(|a| a.0).filter_map(|a| a.2).collect(),
                    ),
                }
            })
            .filter(|v| v.all.is_some())
            .collect();
        let rate = |only_parted: bool| {
            Stats::of(
                measured
                    .iter()
                    .filter(|(r, _)| !only_parted || parted(r))
                    .filter_map(|(_, m)| m.plan.difference_rate)
                    .collect(),
            )
        };
        Summary {
            matrices: results.len(),
            partitioned: results.iter().filter(|r| parted(r)).count(),
            measured: measured.len(),
            versus,
            plan_difference_rate: rate(false),
            plan_difference_rate_partitioned: rate(true),
        }
    }
}

/// Print the summary of several matrices.
pub fn print_summary(s: &Summary) {
    println!(
        "summary: {} matrices, {} partitioned into more than one block, {} measured",
        s.matrices, s.partitioned, s.measured
    );
    if s.measured == 0 {
        return;
    }
    let mean = |x: &Option<Stats>| {
        x.as_ref().map_or("—".into(), |x| {
            format!("{:.1} % (n = {})", 100.0 * x.mean, x.count)
        })
    };
    let mut t = common::table(&[
        "plan vs",
        "mean saving, partitioned",
        "predicted, partitioned",
        "mean saving, all",
        "min … max, all",
    ]);
    for v in &s.versus {
        t.add_row(vec![
            v.kernel.clone(),
            mean(&v.partitioned),
            mean(&v.predicted_partitioned),
            mean(&v.all),
            v.all.as_ref().map_or("—".into(), |x| {
                format!("{:.1} % … {:.1} %", 100.0 * x.min, 100.0 * x.max)
            }),
        ]);
    }
    println!("{t}");
    let stats = |x: &Option<Stats>| {
        x.as_ref().map_or("—".into(), |x| {
            format!(
                "mean {:.1} %, median {:.1} %, max {:.1} % (n = {})",
                100.0 * x.mean,
                100.0 * x.median,
                100.0 * x.max,
                x.count
            )
        })
    };
    println!(
        "plan prediction |predicted − measured| / measured: all {}; partitioned {}",
        stats(&s.plan_difference_rate),
        stats(&s.plan_difference_rate_partitioned)
    );
    println!("(004 §5.2.2 on a Tesla C2050: 41.1 / 49.8 / 37.9 % over CSR / COO / HYB on the 6 of 22 matrices it partitioned; plan prediction error 5.1 %)");
}
