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

/// The generator specs of a JSON input file's text: one spec, a stack in the short form
/// `{"stack": [spec, …]}` (returned as [`GeneratorSpec::Stack`]), or an array of those. `file`
/// names the input in the error. `predict` and `optimize` read their JSON inputs through this,
/// so a file one accepts the other accepts too.
pub fn specs_from_json(text: &str, file: &str) -> Result<Vec<GeneratorSpec>> {
    let bad = |e: serde_json::Error| {
        crate::Error::parse(
            file.to_string(),
            // A spec is parsed from a `serde_json::Value`, which carries no position (line 0):
            // name the first line instead.
            e.line().max(1) as u64,
            format!("expected a generator spec, {{\"stack\": [specs]}}, or an array of those: {e}"),
        )
    };
    let v: serde_json::Value = serde_json::from_str(text).map_err(bad)?;
    let items = match v {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    items
        .into_iter()
        .map(|item| {
            if item.get("stack").is_some() {
                serde_json::from_value::<StackSpec>(item).map(|s| s.spec())
            } else {
                serde_json::from_value::<GeneratorSpec>(item)
            }
            .map_err(bad)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_inputs_take_specs_short_stacks_and_arrays_of_both() {
        let part = r#"{"family":"banded","n":50,"half_bandwidth":2,"seed":1}"#;
        let one = specs_from_json(part, "a.json").unwrap();
        assert_eq!(one.len(), 1);
        let both = format!(r#"[{part}, {{"stack": [{part}, {part}]}}]"#);
        let specs = specs_from_json(&both, "b.json").unwrap();
        assert_eq!(specs.len(), 2);
        let stacked = specs[1].generate().unwrap();
        assert_eq!(stacked.nrows, 2 * one[0].generate().unwrap().nrows);
        // The short form names the matrix as the generator's own stack does.
        let long = format!(r#"{{"family":"stack","parts":[{part},{part}]}}"#);
        assert_eq!(
            specs[1].name(),
            specs_from_json(&long, "c.json").unwrap()[0].name()
        );
        let err = specs_from_json(r#"{"stack": [{"family":"nope"}]}"#, "d.json").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("d.json") && msg.contains("expected a generator spec"),
            "{msg}"
        );
    }
}
