//! Time the prediction of every configuration for one matrix with the embedded profile's models
//! (issue 14's "≤ 1 ms beyond reading it"); the same path as `sparsecast predict`
//! ([`sparsecast::model::rank`]).
//!
//! ```sh
//! cargo run --release --example predict_cost -- FILE.mtx.gz [REPEATS] [PROFILE]
//! ```
//!
//! (`PROFILE`: a profile file instead of the embedded one.)
//!
//! Prints one line per model and precision: milliseconds per matrix (median of the repeats),
//! the configurations ranked, and the seconds the features took.

use sparsecast::features::Features;
use sparsecast::formats::FormatParams;
use sparsecast::matrix::mm;
use sparsecast::model::{rank, Model};
use sparsecast::profile::Profile;
use sparsecast::Csr;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or_else(|| anyhow::anyhow!("usage: predict_cost FILE [REPEATS] [PROFILE]"))?;
    let repeats: usize = args.get(1).map_or(Ok(200), |s| s.parse())?;
    let a: Csr<f64> = mm::read(std::path::Path::new(path))?;
    let t = Instant::now();
    let features = Features::compute(&a);
    let features_s = t.elapsed().as_secs_f64();
    let (name, profile) = match args.get(2) {
        Some(p) => (p.as_str(), Profile::load(std::path::Path::new(p))?),
        None => Profile::load_embedded()?.ok_or_else(|| anyhow::anyhow!("no profile"))?,
    };
    println!(
        "profile {name}; features {:.3} ms; {repeats} repeats",
        1e3 * features_s
    );
    let params = FormatParams::default();
    for section in &profile.precisions {
        for m in section.bounded_models(None)? {
            let mut ms: Vec<f64> = (0..repeats)
                .map(|_| rank(&m, &features, &params).predict_seconds * 1e3)
                .collect();
            ms.sort_by(f64::total_cmp);
            let n = rank(&m, &features, &params).rows.len();
            println!(
                "{:<12} {}  {:.3} ms per matrix (median; min {:.3}), {n} configurations",
                m.name(),
                m.precision(),
                ms[ms.len() / 2],
                ms[0]
            );
        }
    }
    Ok(())
}
