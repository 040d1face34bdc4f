//! Time the prediction of every configuration for one matrix with the embedded profiles'
//! models (issue 14's "≤ 1 ms beyond reading it"); the same path as `sparsecast predict`
//! ([`sparsecast::model::rank_with`] over [`Coverage::Configs`], the second stage included).
//!
//! ```sh
//! cargo run --release --example predict_cost -- FILE.mtx.gz [REPEATS] [PROFILE]
//! MODELS=sparsecast cargo run --release --example predict_cost -- data/cage11.mtx.gz 300
//! ```
//!
//! (`PROFILE`: a profile file instead of every embedded one; `MODELS`: a comma-separated list of
//! the models to time, all by default; `SWEEP_MIB`: the buffer of the cold rankings, 64 MiB by
//! default — more than the caches of a core, but a server's shared L3 may hold more: the
//! 2-core Xeon these were measured on reports 480 MiB.)
//!
//! The features are computed once, as `predict` does; then per profile, precision and model it
//! prints milliseconds per matrix of
//!
//! * **first**: the first ranking after the profile was loaded;
//! * **warm**: the median and least of `REPEATS` rankings one after the other (the trees in
//!   the caches, what a loop over many matrices sees at best);
//! * **cold**: the median of (at most 100) rankings each after sweeping a 64 MiB buffer through
//!   the caches (closer to what one `predict` of one matrix pays beyond reading it);
//!
//! with the configurations ranked and a checksum of the predicted seconds (equal before and
//! after a change that must not change a prediction).

use sparsecast::features::Features;
use sparsecast::formats::FormatParams;
use sparsecast::matrix::mm;
use sparsecast::model::{rank_with, Coverage, Model, Ranking};
use sparsecast::profile::Profile;
use sparsecast::Csr;
use std::hint::black_box;
use std::time::Instant;

/// MiB swept through the caches before a cold ranking, unless `SWEEP_MIB` says otherwise.
const SWEEP_MIB: usize = 64;

/// Touch every cache line of `buf` (a write, so that the lines are owned, then evicted dirty).
fn sweep(buf: &mut [u64]) {
    for v in buf.iter_mut().step_by(8) {
        *v = v.wrapping_add(1);
    }
    black_box(&buf);
}

fn millis(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or_else(|| anyhow::anyhow!("usage: predict_cost FILE [REPEATS] [PROFILE]"))?;
    let repeats: usize = args.get(1).map_or(Ok(200), |s| s.parse())?.max(1);
    let cold_repeats = repeats.clamp(1, 100);
    let models: Option<Vec<String>> = std::env::var("MODELS")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|s| s.split(',').map(str::to_string).collect());
    let sweep_mib: usize = std::env::var("SWEEP_MIB").map_or(Ok(SWEEP_MIB), |s| s.parse())?;
    let a: Csr<f64> = mm::read(std::path::Path::new(path))?;
    let t = Instant::now();
    let features = Features::compute(&a);
    let features_s = t.elapsed().as_secs_f64();
    let profiles = match args.get(2) {
        Some(p) => vec![(p.as_str(), Profile::load(std::path::Path::new(p))?)],
        None => Profile::load_embedded_all()?,
    };
    println!(
        "{path}: features {:.3} ms; warm: {repeats} repeats, cold: {cold_repeats} after a \
         {sweep_mib} MiB sweep",
        1e3 * features_s,
    );
    let params = FormatParams::default();
    let family = std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.split('.').next().unwrap_or(n).to_string());
    let mut buf = vec![0u64; (sweep_mib << 20) / 8];
    for (name, profile) in &profiles {
        println!("{name}");
        for section in &profile.precisions {
            for m in section.bounded_models(models.as_deref())? {
                let rank = || {
                    let t = Instant::now();
                    let r: Ranking =
                        rank_with(&m, &features, &params, Coverage::Configs, family.as_deref());
                    (1e3 * t.elapsed().as_secs_f64(), r)
                };
                let (first, r) = rank();
                let mut warm: Vec<f64> = (0..repeats).map(|_| rank().0).collect();
                let mut cold: Vec<f64> = (0..cold_repeats)
                    .map(|_| {
                        sweep(&mut buf);
                        rank().0
                    })
                    .collect();
                let ((wm, wmin), (cm, _)) = (millis(&mut warm), millis(&mut cold));
                let predicted = r.rows.iter().filter(|x| x.seconds.is_some()).count();
                // Order-sensitive, over every predicted second and the recommendation.
                let checksum = r.rows.iter().fold(0u64, |h, x| {
                    let s = x.seconds.map_or(0, f64::to_bits) ^ x.picked as u64;
                    h.rotate_left(5) ^ s
                });
                println!(
                    "  {:<12} {}  first {first:.3} ms, warm {wm:.3} ms (min {wmin:.3}), \
                     cold {cm:.3} ms; {predicted}/{} configurations, best {}, checksum {checksum:016x}",
                    m.name(),
                    m.precision(),
                    r.rows.len(),
                    r.best().map_or("-".to_string(), |b| b.config.label()),
                );
            }
        }
    }
    Ok(())
}
