//! Which matrix a plan belongs to: its size and a checksum of its sparsity pattern, so that a plan
//! is not silently applied to another matrix.
//!
//! The checksum covers the row pointers and column indices, not the values: a plan depends only on
//! where the entries are, so it stays valid for the same pattern with new values (a common case in
//! solvers). It is SHA-256 (the `sha2` crate) computed in two levels so that it runs in parallel:
//! the row pointers (as little-endian `u64`) and the column indices (little-endian `u32`) are cut
//! into chunks of [`CHUNK`] elements, each chunk is hashed, and the final digest hashes the sizes
//! and the chunk digests in order. Chunk boundaries do not depend on the thread count, so the value
//! is the same on every machine. It guards against mistakes, not against an adversary.

use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Elements per hashed chunk.
pub const CHUNK: usize = 1 << 20;

/// The identity of a matrix as a plan records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixIdentity {
    /// Where the matrix was read from (informational: a plan may be applied to a moved copy).
    pub source: String,
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// [`pattern_checksum`], as `sha256-chunked:<hex>`.
    pub pattern_checksum: String,
}

impl MatrixIdentity {
    /// The identity of `a`, read from `source`.
    pub fn of<T: Scalar>(source: &str, a: &Csr<T>) -> MatrixIdentity {
        MatrixIdentity {
            source: source.to_string(),
            nrows: a.nrows as u64,
            ncols: a.ncols as u64,
            nnz: a.nnz() as u64,
            pattern_checksum: pattern_checksum(a),
        }
    }

    /// Fail unless `a` is the matrix this identity describes (sizes first, then the checksum).
    /// `what` names the plan in the message.
    pub fn check<T: Scalar>(&self, what: &str, a: &Csr<T>) -> Result<()> {
        let sizes = (a.nrows as u64, a.ncols as u64, a.nnz() as u64);
        if sizes != (self.nrows, self.ncols, self.nnz) {
            return Err(Error::Invalid(format!(
                "{what} was made for a {} × {} matrix with {} non-zeros ({}), not for this {} × {} \
                 matrix with {} non-zeros",
                self.nrows, self.ncols, self.nnz, self.source, sizes.0, sizes.1, sizes.2
            )));
        }
        let sum = pattern_checksum(a);
        if sum != self.pattern_checksum {
            return Err(Error::Invalid(format!(
                "{what} was made for another matrix of the same size ({}): its sparsity pattern \
                 checksum is {}, this matrix's is {sum}",
                self.source, self.pattern_checksum
            )));
        }
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The checksum of `a`'s sparsity pattern (see the module documentation).
pub fn pattern_checksum<T: Scalar>(a: &Csr<T>) -> String {
    let ptr_chunks: Vec<[u8; 32]> = a
        .row_ptr
        .par_chunks(CHUNK)
        .map(|c| {
            let mut buf = Vec::with_capacity(8 * c.len());
            for &p in c {
                buf.extend_from_slice(&(p as u64).to_le_bytes());
            }
            Sha256::digest(&buf).into()
        })
        .collect();
    let col_chunks: Vec<[u8; 32]> = a
        .col_idx
        .par_chunks(CHUNK)
        .map(|c| {
            let mut buf = Vec::with_capacity(4 * c.len());
            for &j in c {
                buf.extend_from_slice(&j.to_le_bytes());
            }
            Sha256::digest(&buf).into()
        })
        .collect();
    let mut h = Sha256::new();
    for v in [a.nrows as u64, a.ncols as u64, a.nnz() as u64] {
        h.update(v.to_le_bytes());
    }
    for d in ptr_chunks.iter().chain(&col_chunks) {
        h.update(d);
    }
    format!("sha256-chunked:{}", hex(&h.finalize()))
}
