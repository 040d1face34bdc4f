//! Finite-difference stencils on regular grids with Dirichlet boundaries (neighbours outside the
//! grid are dropped, not wrapped). Grid points are numbered with `x` fastest:
//! row `(z·n + y)·n + x`. Values are the negative Laplacian: `-1` for every neighbour and the
//! neighbour count of an interior point (4, 6 or 26) on the diagonal — kept at the interior
//! value on the boundary too, so every row is weakly diagonally dominant.

use super::build;
use crate::matrix::Csr;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which stencil.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stencil {
    /// 2-D 5-point stencil on an `n × n` grid.
    #[serde(rename = "2d5")]
    D2P5,
    /// 3-D 7-point stencil on an `n × n × n` grid.
    #[serde(rename = "3d7")]
    D3P7,
    /// 3-D 27-point stencil on an `n × n × n` grid.
    #[serde(rename = "3d27")]
    D3P27,
}

impl Stencil {
    /// Grid dimensions (2 or 3).
    pub fn dims(self) -> u32 {
        match self {
            Stencil::D2P5 => 2,
            _ => 3,
        }
    }

    /// Points of the stencil (5, 7 or 27).
    pub fn points(self) -> usize {
        match self {
            Stencil::D2P5 => 5,
            Stencil::D3P7 => 7,
            Stencil::D3P27 => 27,
        }
    }

    /// Short label for matrix names: `2d5`, `3d7`, `3d27`.
    pub fn label(self) -> &'static str {
        match self {
            Stencil::D2P5 => "2d5",
            Stencil::D3P7 => "3d7",
            Stencil::D3P27 => "3d27",
        }
    }

    /// Exact number of non-zeros on an `n`-point-wide grid, boundary truncation included:
    /// 5-point `n² + 4n(n−1)`, 7-point `n³ + 6n²(n−1)`, 27-point `(3n−2)³` (each axis offers
    /// 3 positions, 2 at the two ends).
    pub fn nnz(self, n: u64) -> u128 {
        let n = n as u128;
        if n == 0 {
            return 0;
        }
        match self {
            Stencil::D2P5 => n * n + 4 * n * (n - 1),
            Stencil::D3P7 => n * n * n + 6 * n * n * (n - 1),
            Stencil::D3P27 => (3 * n - 2).pow(3),
        }
    }
}

/// The stencil matrix on a grid of `n` points per side. Refuses `n = 0`, a grid whose point
/// count exceeds 32-bit column indices, and a matrix over `max_bytes`.
pub fn stencil(kind: Stencil, n: usize, max_bytes: u64) -> Result<Csr<f64>> {
    let what = format!("{}-point stencil", kind.points());
    if n == 0 {
        return Err(Error::Invalid(format!("{what}: grid size n must be ≥ 1")));
    }
    let rows = check_grid(&what, n, kind.dims())?;
    build::check_budget(&what, rows as u128, kind.nnz(n as u64), max_bytes)?;
    let diag = (kind.points() - 1) as f64;
    let row_ptr = build::counts_by(rows, |r| {
        let p = point(r, n, kind.dims());
        match kind {
            Stencil::D2P5 | Stencil::D3P7 => {
                let d = kind.dims() as usize;
                1 + p[..d]
                    .iter()
                    .map(|&c| (c > 0) as usize + (c + 1 < n) as usize)
                    .sum::<usize>()
            }
            Stencil::D3P27 => p.iter().map(|&c| span(c, n).len()).product(),
        }
    });
    let bounds = build::balanced_chunks(&row_ptr);
    Ok(build::fill_chunks(
        rows,
        rows,
        row_ptr,
        &bounds,
        |mut ch| {
            for r in ch.rows.clone() {
                let (ci, cv) = ch.row_mut(r);
                let p = point(r, n, kind.dims());
                let mut w = 0usize;
                let mut push = |col: usize, v: f64| {
                    ci[w] = col as u32;
                    cv[w] = v;
                    w += 1;
                };
                match kind {
                    Stencil::D2P5 | Stencil::D3P7 => {
                        // Offsets in increasing column order: the highest axis first, below then
                        // above the diagonal.
                        let d = kind.dims() as usize;
                        let stride = |a: usize| n.pow(a as u32);
                        for (a, &c) in p[..d].iter().enumerate().rev() {
                            if c > 0 {
                                push(r - stride(a), -1.0);
                            }
                        }
                        push(r, diag);
                        for (a, &c) in p[..d].iter().enumerate() {
                            if c + 1 < n {
                                push(r + stride(a), -1.0);
                            }
                        }
                    }
                    Stencil::D3P27 => {
                        for z in span(p[2], n) {
                            for y in span(p[1], n) {
                                for x in span(p[0], n) {
                                    let col = (z * n + y) * n + x;
                                    push(col, if col == r { diag } else { -1.0 });
                                }
                            }
                        }
                    }
                }
                debug_assert_eq!(w, ci.len());
            }
        },
    ))
}

/// `n^dims` as a row count, refused beyond 32-bit column indices.
fn check_grid(what: &str, n: usize, dims: u32) -> Result<usize> {
    let rows = (n as u128).checked_pow(dims).unwrap_or(u128::MAX);
    build::check_dim(what, "grid points", rows)
}

/// Grid coordinates `[x, y, z]` of row `r` (`z = 0` in 2-D).
#[inline]
fn point(r: usize, n: usize, dims: u32) -> [usize; 3] {
    if dims == 2 {
        [r % n, r / n, 0]
    } else {
        [r % n, (r / n) % n, r / (n * n)]
    }
}

/// Neighbour coordinates `c−1..=c+1` clipped to the grid.
#[inline]
fn span(c: usize, n: usize) -> std::ops::Range<usize> {
    c.saturating_sub(1)..(c + 2).min(n)
}
