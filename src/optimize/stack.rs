//! Heterogeneous test matrices: generated matrices stacked on top of each other (rows of the
//! first, then rows of the second, …), e.g. a power-law block on a stencil block — the kind of
//! matrix where one format per row block can beat any single format.
//!
//! A stack is written as JSON `{"stack": [spec, spec, …]}` with one
//! [`GeneratorSpec`] per part: the optimizer's short form of the generator family
//! [`GeneratorSpec::Stack`] (`{"family":"stack","parts":[…]}`), which owns the stacking.

pub use crate::matrix::generate::stack_rows;
use crate::matrix::generate::GeneratorSpec;
use crate::{Csr, Result};
use serde::{Deserialize, Serialize};

/// Generated matrices stacked by rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// The parts, top to bottom.
    pub stack: Vec<GeneratorSpec>,
}

impl StackSpec {
    /// `stack-<part>+<part>…`.
    pub fn name(&self) -> String {
        self.spec().name()
    }

    /// The same matrix as a generator spec (`{"family":"stack","parts":[…]}`).
    pub fn spec(&self) -> GeneratorSpec {
        GeneratorSpec::Stack {
            parts: self.stack.clone(),
        }
    }

    /// Generate every part and stack them.
    pub fn generate(&self) -> Result<Csr<f64>> {
        self.spec().generate()
    }
}
