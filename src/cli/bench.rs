//! `sparsecast bench` (not yet implemented).

/// Not yet implemented.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_a: Args) -> anyhow::Result<()> {
    anyhow::bail!("bench: not yet implemented")
}
