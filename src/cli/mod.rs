//! The `sparsecast` command-line program: one file per subcommand.

use clap::{Parser, Subcommand};

mod accuracy;
mod bench;
mod collect;
mod common;
mod crossarch;
mod device;
mod evaluate;
mod features;
mod generate;
mod instrument;
mod instrument_bounds;
mod instrument_cross;
mod instrument_own;
mod instrument_plan;
mod measured_on;
mod noise;
mod optimize;
mod predict;
mod profiles;
mod refeature;
mod score;
mod selftest;
mod spmv;
mod train;

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
    Accuracy(accuracy::Args),
    Profiles(profiles::Args),
    Noise(noise::Args),
    Collect(collect::Args),
    Train(train::Args),
    Crossarch(crossarch::Args),
    Score(score::Args),
    Refeature(refeature::Args),
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
        Command::Accuracy(a) => accuracy::run(a),
        Command::Profiles(a) => profiles::run(a),
        Command::Noise(a) => noise::run(a),
        Command::Collect(a) => collect::run(a),
        Command::Train(a) => train::run(a),
        Command::Crossarch(a) => crossarch::run(a),
        Command::Score(a) => score::run(a),
        Command::Refeature(a) => refeature::run(a),
    };
    match res {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {}", error_message(&e));
            1
        }
    }
}

/// The error and its causes on one line, each cause once: a cause whose text the message already
/// holds (an I/O error that names its path and its operating-system error) is not repeated.
fn error_message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_printed_once() {
        let io = std::io::Error::from_raw_os_error(2);
        let e = anyhow::Error::from(crate::Error::io("/x/y.json", io)).context("writing the plan");
        let m = error_message(&e);
        assert_eq!(m.matches("os error 2").count(), 1, "{m}");
        assert!(m.starts_with("writing the plan: /x/y.json: "), "{m}");
    }

    #[test]
    fn crossarch_help_states_the_exposed_share_in_use() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let help = cli
            .find_subcommand_mut("crossarch")
            .expect("a crossarch command")
            .render_long_help()
            .to_string();
        let share = format!("{} of", crate::learn::cross_bw::EXPOSED_SHARE);
        assert!(help.contains(&share), "{share:?} not in:\n{help}");
    }
}
