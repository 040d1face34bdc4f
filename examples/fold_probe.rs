//! Where one configuration's held-out error on the large stacks comes from (session 54): the
//! `sparsecast` model fitted (quick, f64) on the other folds of `train`'s family cross-validation,
//! and each held-out large stack (≥ 10⁶ non-zeros) of fold `FOLD` predicted three ways, with
//! no device bounds (`train`'s records clamp to them): the whole model, its own trees alone
//! (no relative blend), and the physical base alone. One line per matrix: `ln(predicted /
//! measured)` of the three, `log2` of the ELL index bytes (`width × rows × 4`), the fold and the
//! matrix.
//!
//! ```sh
//! for k in 0 1 2 3 4; do
//!   cargo run --release --example fold_probe -- $k ell data/corpus/h200*.jsonl.gz > ell-$k.txt
//! done
//! ```
//!
//! Session 54 found with it that the model predicted `ell` within 10 % on 77 % of the held-out
//! stacks whose index array passes 2²⁷ bytes, where `train`'s records had 40 %: the bandwidth
//! ceiling, counting the padding values the kernel skips, had raised those predictions.
use sparsecast::corpus::table::read_all;
use sparsecast::learn::dataset::{fold_of, split};
use sparsecast::learn::own::fit_with;
use sparsecast::Precision;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        anyhow::bail!("usage: fold_probe FOLD (0-4) CONFIGURATION TABLE…");
    }
    let fold: usize = args[0].parse()?;
    let label = args[1].clone();
    let mut rows = read_all(&args[2..])?;
    rows.retain(|r| r.precision == Precision::F64);
    let refs: Vec<&_> = rows.iter().collect();
    let (train, test) = split(&refs, 5, fold);
    eprintln!("train {} test {}", train.len(), test.len());
    let full = fit_with(&train, Precision::F64, 0)?;
    let mut own = full.clone();
    own.reference = None;
    let mut base = own.clone();
    for c in &mut base.configs {
        c.trees.clear();
        c.base = 0.0;
    }
    for r in test {
        if r.features.nnz < 1_000_000 || !r.matrix.contains("stack") {
            continue;
        }
        let Some(t) = r
            .times
            .iter()
            .find(|c| c.config == label)
            .and_then(|c| c.median_s)
        else {
            continue;
        };
        let f = &r.features;
        let p =
            |m: &sparsecast::learn::own::OwnModel| m.predict_label(f, &label).unwrap_or(f64::NAN);
        println!(
            "{:+.3} {:+.3} {:+.3} {:.1} {} {}",
            (p(&full) / t).ln(),
            (p(&own) / t).ln(),
            (p(&base) / t).ln(),
            ((f.max_nnz as f64) * (f.nrows as f64) * 4.0).log2(),
            fold_of(&r.family, 5),
            r.matrix
        );
    }
    Ok(())
}
