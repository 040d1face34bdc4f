//! The matrices of an evaluation: every Matrix Market file under the corpus directories, plus a
//! generated set ([`super::generated`]), each with a stable identifier.
//!
//! Identifiers are what resuming keys on, so they must not depend on where the corpus lies or
//! how it was named on the command line: a file's id is the name of its corpus directory
//! followed by its path inside it (`suitesparse/cage11.mtx.gz`); a generated matrix's id starts
//! with `gen/` ([`super::generated`]). Two files with the same id (two corpus directories of the
//! same name holding the same file name) are refused rather than silently merged.

use super::generated::Recipe;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Where a matrix comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MatrixSource {
    /// A Matrix Market file (plain or gzip).
    File(PathBuf),
    /// Generated on the fly, never stored.
    Generated(Recipe),
}

/// One matrix of the evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct CorpusEntry {
    /// Stable identifier (see the module documentation).
    pub id: String,
    /// Where it comes from.
    pub source: MatrixSource,
    /// A rough estimate of its non-zeros, used only to weight the progress bar's ETA.
    pub est_nnz: u64,
}

impl CorpusEntry {
    /// A short display name: the file stem without `.mtx`/`.mtx.gz`, or the generator name.
    pub fn short_name(&self) -> String {
        short_name(&self.id)
    }
}

/// The short display name of an id (see [`CorpusEntry::short_name`]).
pub fn short_name(id: &str) -> String {
    let last = id.rsplit('/').next().unwrap_or(id);
    strip_mtx(last).to_string()
}

/// `name` without a trailing `.mtx.gz` or `.mtx` (any case).
fn strip_mtx(name: &str) -> &str {
    let lower = name.to_ascii_lowercase();
    for ext in [".mtx.gz", ".mtx"] {
        if lower.ends_with(ext) {
            return &name[..name.len() - ext.len()];
        }
    }
    name
}

/// Whether a file name is a Matrix Market file (`.mtx` or `.mtx.gz`, any case).
pub fn is_matrix_file(name: &str) -> bool {
    strip_mtx(name).len() < name.len()
}

/// Every `.mtx` / `.mtx.gz` file under `dirs` (recursively; symbolic links to files are
/// followed, links to directories are not, so a link cannot make the walk loop), sorted by id.
pub fn discover(dirs: &[PathBuf]) -> Result<Vec<CorpusEntry>> {
    let mut out: Vec<CorpusEntry> = Vec::new();
    for dir in dirs {
        let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
        if !meta.is_dir() {
            return Err(Error::Invalid(format!(
                "{}: --corpus expects a directory of Matrix Market files",
                dir.display()
            )));
        }
        let root = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
        let label = root
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("corpus")
            .to_string();
        let mut files = Vec::new();
        walk(&root, &mut files)?;
        for path in files {
            let rel = path.strip_prefix(&root).unwrap_or(&path);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let id = format!("{label}/{}", rel.join("/"));
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            out.push(CorpusEntry {
                id,
                est_nnz: estimate_nnz(&path, bytes),
                source: MatrixSource::File(path),
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    for w in out.windows(2) {
        if w[0].id == w[1].id {
            let path = |e: &CorpusEntry| match &e.source {
                MatrixSource::File(p) => p.display().to_string(),
                MatrixSource::Generated(_) => e.id.clone(),
            };
            return Err(Error::Invalid(format!(
                "two corpus files have the same id '{}': {} and {} (rename one corpus directory)",
                w[0].id,
                path(&w[0]),
                path(&w[1])
            )));
        }
    }
    Ok(out)
}

/// Collect the matrix files under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            walk(&path, out)?;
        } else if is_matrix_file(&entry.file_name().to_string_lossy()) {
            // A file, or a link to one (a dangling link is reported when it is read).
            let is_dir_link = ft.is_symlink() && std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            if !is_dir_link {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Non-zeros guessed from the file size: about 4 bytes per entry compressed, 20 plain (the
/// SuiteSparse files average 2.5–6.5 bytes per stored entry gzip-compressed).
fn estimate_nnz(path: &Path, bytes: u64) -> u64 {
    let gz = path.to_string_lossy().to_ascii_lowercase().ends_with(".gz");
    (bytes / if gz { 4 } else { 20 }).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_extensions() {
        assert!(is_matrix_file("a.mtx") && is_matrix_file("B.MTX.GZ"));
        assert!(!is_matrix_file("a.mtx.bz2") && !is_matrix_file("mtx") && !is_matrix_file("a.gz"));
        assert_eq!(short_name("suitesparse/sub/cage11.mtx.gz"), "cage11");
        assert_eq!(short_name("gen/stencil3d27-12"), "stencil3d27-12");
    }

    #[test]
    fn discovers_recursively_sorted_with_stable_ids() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("corp");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        for f in ["b.mtx", "a.mtx.gz", "sub/c.MTX", "notes.txt", "x.mtx.bz2"] {
            std::fs::write(root.join(f), b"x").unwrap();
        }
        let e = discover(std::slice::from_ref(&root)).unwrap();
        let ids: Vec<&str> = e.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["corp/a.mtx.gz", "corp/b.mtx", "corp/sub/c.MTX"]);
        // The same directory through another path gives the same ids.
        let again = discover(&[root.join("sub").join("..")]).unwrap();
        assert_eq!(again.len(), 3);
        assert_eq!(again[0].id, "corp/a.mtx.gz");
        // Listing it twice is refused, not merged.
        let err = discover(&[root.clone(), root.clone()]).unwrap_err();
        assert!(err.to_string().contains("same id"), "{err}");
        // A file instead of a directory, and a missing directory.
        assert!(discover(&[root.join("b.mtx")]).is_err());
        assert!(discover(&[root.join("missing")]).is_err());
    }
}
