//! The crate's error type. Every failure a user can cause (bad input, a matrix that does not fit a
//! format or a kernel, a missing GPU) is an [`Error`] with enough context to act on; nothing panics.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in sparsecast.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input file: names the file, the 1-based line and what was expected.
    #[error("{file}:{line}: {msg}")]
    Parse {
        file: String,
        line: u64,
        msg: String,
    },
    /// An I/O failure on a path.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A storage format refuses a matrix (too wasteful, too large for 32-bit offsets, …).
    #[error("format {format}: {reason}")]
    FormatRefused { format: String, reason: String },
    /// A backend cannot run the requested kernel/configuration.
    #[error("{0}")]
    Unsupported(String),
    /// No CUDA driver or device is available.
    #[error("no CUDA device: {0}")]
    NoCuda(String),
    /// A CUDA driver, NVRTC or cuSPARSE call failed.
    #[error("CUDA error: {0}")]
    Cuda(String),
    /// Invalid arguments or inconsistent data.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// Wrap an `std::io::Error` with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A parse error at `file:line`.
    pub fn parse(file: impl Into<String>, line: u64, msg: impl Into<String>) -> Self {
        Error::Parse {
            file: file.into(),
            line,
            msg: msg.into(),
        }
    }

    /// A format refusing a matrix, with the reason.
    pub fn refused(format: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::FormatRefused {
            format: format.into(),
            reason: reason.into(),
        }
    }
}
