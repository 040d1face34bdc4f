//! `sparsecast spmv`: compute y = A·x with one kernel and write y as Matrix Market, so that anyone
//! can check a kernel against another tool.

use super::common::{self, KernelArgs};
use crate::backend::{BackendKind, BackendScalar, Variant};
use crate::Precision;
use std::path::PathBuf;

/// Compute y = A·x with one storage format / kernel and write y (Matrix Market array n×1).
///
/// x is read from --x (an n×1 Matrix Market array) or drawn uniformly from [-1, 1) with --seed.
/// The result is checked against the f64 CPU reference and the largest relative error is
/// reported on stderr.
///
/// With --plan, runs an executable plan from `sparsecast optimize --save-plan` instead: every block
/// with its own kernel on its rows (the plan must belong to this matrix).
///
/// Example: sparsecast spmv data/cage11.mtx.gz --format ell --seed 7 --out y.mtx
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Matrix Market file (.mtx or .mtx.gz).
    pub file: PathBuf,
    /// Kernel: csr-scalar, csr-t2 … csr-t16, csr-vector, csr-merge, coo, ell, hyb, jad, sell, dia,
    /// bsr, ell-bro, or a cuSPARSE algorithm (cusparse-csr-alg1, …; CUDA only).
    #[arg(long, default_value = "csr-vector")]
    pub format: String,
    /// Run this plan (JSON from `sparsecast optimize --save-plan`) instead of one format.
    #[arg(long, conflicts_with = "format")]
    pub plan: Option<PathBuf>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    pub backend: BackendKind,
    /// Value precision (default: the plan's with --plan, else f64).
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Read x from this n×1 Matrix Market array file.
    #[arg(long, conflicts_with = "seed")]
    pub x: Option<PathBuf>,
    /// Seed of the random x (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Output file for y (`-`: standard output).
    #[arg(long)]
    pub out: PathBuf,
    /// Write the x used here (Matrix Market array n×1). Default with a random x: beside y, as
    /// Y.x.mtx (not with `--out -`).
    #[arg(long, conflicts_with = "x")]
    pub save_x: Option<PathBuf>,
    #[command(flatten)]
    pub kernel: KernelArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let variant = Variant::parse(&a.format)?;
    let plan = a
        .plan
        .as_deref()
        .map(crate::optimize::Plan::load)
        .transpose()?;
    // A plan runs in the precision it was optimized for, unless --precision says otherwise.
    let precision = match (a.precision, &plan) {
        (Some(p), Some(plan)) if p != plan.precision => {
            eprintln!(
                "note: the plan was optimized for {}; running it in {p} as --precision asks",
                plan.precision
            );
            p
        }
        (Some(p), _) => p,
        (None, Some(plan)) => plan.precision,
        (None, None) => Precision::F64,
    };
    let m = common::load_matrix(&a.file)?;
    match precision {
        Precision::F32 => run_typed::<f32>(&a, variant, plan.as_ref(), m.cast()),
        Precision::F64 => run_typed::<f64>(&a, variant, plan.as_ref(), m),
    }
}

fn run_typed<T: BackendScalar>(
    a: &Args,
    variant: Variant,
    plan: Option<&crate::optimize::Plan>,
    m: crate::Csr<T>,
) -> anyhow::Result<()> {
    let backend = T::open_backend(a.backend)?;
    let x: Vec<T> = common::input_vector(a.x.as_deref(), a.seed, m.ncols)?;
    let cfg = a.kernel.config(variant);
    let (mut k, what) = match (plan, &a.plan) {
        (Some(plan), Some(p)) => {
            let what = format!("plan {} ({} blocks)", p.display(), plan.blocks.len());
            let k: Box<dyn crate::backend::PreparedSpmv<T>> = Box::new(
                crate::optimize::PreparedPlan::new(backend.as_ref(), &m, plan, &what)?,
            );
            (k, what)
        }
        _ => (backend.prepare(&m, &cfg)?, variant.to_string()),
    };
    k.set_x(&x)?;
    k.poison_y()?;
    k.run()?;
    let y = k.y()?;
    let err = common::max_relative_error(&m, &x, &y);
    crate::matrix::mm::write_vector(&a.out, &y)?;
    // A random x is saved, so that y can be checked with another tool.
    let x_out = match (&a.save_x, &a.x) {
        (Some(p), _) => Some(p.clone()),
        (None, None) if a.out.as_os_str() != "-" => Some(a.out.with_extension("x.mtx")),
        _ => None,
    };
    if let Some(p) = &x_out {
        crate::matrix::mm::write_vector(p, &x)?;
        eprintln!("x (seed {}) written to {}", a.seed, p.display());
    }
    eprintln!(
        "{}: {} × {}, {} non-zeros; {} on {} ({}); wrote {} ({} values); max relative error vs f64 reference {:.2e}",
        a.file.display(),
        m.nrows,
        m.ncols,
        m.nnz(),
        what,
        backend.name(),
        T::PRECISION,
        a.out.display(),
        y.len(),
        err
    );
    anyhow::ensure!(
        err <= common::tolerance::<T>(),
        "result differs from the f64 reference by {err:.2e} (tolerance {:.0e})",
        common::tolerance::<T>()
    );
    Ok(())
}
