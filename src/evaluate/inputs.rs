//! Fingerprints of the corpus files (size and modification time), kept in `OUT/inputs.json`, so
//! that a resumed run measures again a matrix whose file changed since its records were written
//! — a file that could not be read and was then fixed, or a file replaced by another.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The file of fingerprints in the output directory.
pub const INPUTS: &str = "inputs.json";

/// What identifies one version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Size in bytes.
    pub bytes: u64,
    /// Modification time: seconds and nanoseconds since the Unix epoch.
    pub modified_s: u64,
    pub modified_ns: u32,
}

impl Fingerprint {
    /// The fingerprint of `path` as it is now (`None` if it cannot be read).
    pub fn of(path: &Path) -> Option<Fingerprint> {
        let m = std::fs::metadata(path).ok()?;
        let t = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(Fingerprint {
            bytes: m.len(),
            modified_s: t.as_secs(),
            modified_ns: t.subsec_nanos(),
        })
    }
}

/// Fingerprints by matrix id.
pub type Fingerprints = BTreeMap<String, Fingerprint>;

/// Read `dir/inputs.json` (missing or unreadable: none known, so nothing is measured again).
pub fn load(dir: &Path) -> Fingerprints {
    std::fs::read_to_string(dir.join(INPUTS))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Write `dir/inputs.json` atomically.
pub fn save(dir: &Path, prints: &Fingerprints) -> Result<()> {
    let text = serde_json::to_string_pretty(prints)
        .map_err(|e| Error::Invalid(format!("cannot serialize the input fingerprints: {e}")))?;
    crate::util::write_atomic(&dir.join(INPUTS), |w| {
        w.write_all(text.as_bytes())?;
        w.write_all(b"\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_has_another_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.mtx");
        std::fs::write(&p, b"one").unwrap();
        let a = Fingerprint::of(&p).unwrap();
        assert_eq!(Fingerprint::of(&p), Some(a));
        std::fs::write(&p, b"other").unwrap();
        assert_ne!(Fingerprint::of(&p), Some(a));
        assert_eq!(Fingerprint::of(&dir.path().join("missing")), None);
        let mut all = Fingerprints::new();
        all.insert("corp/m.mtx".into(), a);
        save(dir.path(), &all).unwrap();
        assert_eq!(load(dir.path()), all);
    }
}
