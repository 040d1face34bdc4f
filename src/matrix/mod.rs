//! The canonical in-memory matrix ([`Csr`]), Matrix Market I/O ([`mm`]) and the deterministic
//! matrix generators ([`generate`]).

pub mod csr;
pub mod generate;
pub mod mm;

pub use csr::Csr;
