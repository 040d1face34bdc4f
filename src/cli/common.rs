//! Helpers shared by the subcommands.
