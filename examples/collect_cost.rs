//! Where `collect`'s host time goes for one matrix: the f32 cast, the features, the f64 reference
//! and, per configuration of the corpus, the conversion `prepare` does before any upload.
//!
//! ```sh
//! cargo run --release --example collect_cost -- '{"family":"stencil","stencil":"3d27","n":96}'
//! ```
//!
//! Prints milliseconds per step; the GPU-side part (upload, check, timing) is what `collect`'s
//! per-configuration `prepare_s` adds beyond these.

use sparsecast::backend::measure::Reference;
use sparsecast::backend::{KernelConfig, Variant};
use sparsecast::features::Features;
use sparsecast::formats::{AnyFormat, FormatKind, Summary};
use sparsecast::matrix::generate::GeneratorSpec;
use sparsecast::Csr;
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> anyhow::Result<()> {
    let spec: GeneratorSpec = serde_json::from_str(
        &std::env::args()
            .nth(1)
            .ok_or_else(|| anyhow::anyhow!("usage: collect_cost SPEC_JSON"))?,
    )?;
    let t = Instant::now();
    let a: Csr<f64> = spec.generate_with_limit(sparsecast::formats::default_max_bytes())?;
    println!("generate {:.1} ms, {} non-zeros", ms(t), a.nnz());
    let t = Instant::now();
    let a32: Csr<f32> = a.cast();
    println!("cast to f32 {:.1} ms", ms(t));
    let t = Instant::now();
    let _f = Features::compute(&a32);
    println!("features {:.1} ms", ms(t));
    let x: Vec<f32> = (0..a.ncols).map(|i| (i % 7) as f32).collect();
    let t = Instant::now();
    let _r = Reference::new(&a32, &x);
    println!("reference {:.1} ms", ms(t));
    let mut configs: Vec<KernelConfig> = Variant::ours()
        .into_iter()
        .filter(|v| v.format() != FormatKind::Csr)
        .map(KernelConfig::new)
        .collect();
    // Lehnert et al.'s SELL-C-σ (C = 512, σ = 2048), which the corpus also measures.
    configs.push(KernelConfig::parse_label("sell-c512-s2048")?);
    let mut total = 0.0;
    for cfg in configs {
        let v = cfg.variant;
        let t = Instant::now();
        let _summary = Summary::of(&a32, cfg.params.hyb.width);
        let summary_ms = ms(t);
        let t = Instant::now();
        let r = AnyFormat::convert(&a32, v.format(), &cfg.params);
        let conv = ms(t);
        total += summary_ms + conv;
        println!(
            "{:<16} summary {:6.1} ms  convert {:7.1} ms  {}",
            cfg.label(),
            summary_ms,
            conv,
            match r {
                Ok(f) => format!("{} bytes", f.as_dyn().footprint_bytes()),
                Err(e) => e.to_string(),
            }
        );
    }
    println!("conversions in all {total:.0} ms");
    Ok(())
}
