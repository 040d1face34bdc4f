//! The `sparsecast` command-line program: one file per subcommand.

use clap::{Parser, Subcommand};

mod bench;
mod common;
mod device;
mod evaluate;
mod features;
mod generate;
mod instrument;
mod noise;
mod optimize;
mod predict;
mod selftest;
mod spmv;

/// sparsecast — predict, rank and optimize SpMV (y = A·x) run time on GPUs.
///
/// Give it a sparse matrix (Matrix Market, plain or gzip-compressed): it computes the features the
/// performance models use, runs and times every storage format on the CPU or a CUDA GPU, and
/// generates the benchmark matrices the models are fitted on.
#[derive(Parser, Debug)]
#[command(
    name = "sparsecast",
    version,
    about,
    long_about,
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Features(features::Args),
    Generate(generate::Args),
    Spmv(spmv::Args),
    Bench(bench::Args),
    Selftest(selftest::Args),
    Device(device::Args),
    Instrument(instrument::Args),
    Predict(predict::Args),
    Optimize(optimize::Args),
    Evaluate(evaluate::Args),
    Noise(noise::Args),
}

/// Parse the command line, run the subcommand, print errors on stderr; returns the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Features(a) => features::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Spmv(a) => spmv::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Selftest(a) => selftest::run(a),
        Command::Device(a) => device::run(a),
        Command::Instrument(a) => instrument::run(a),
        Command::Predict(a) => predict::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Evaluate(a) => evaluate::run(a),
        Command::Noise(a) => noise::run(a),
    };
    match res {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}
