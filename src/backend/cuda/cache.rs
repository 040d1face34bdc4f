//! On-disk cache of compiled kernel modules (CUBIN), so that a second run does not compile again.
//!
//! * Location: `$SPARSECAST_CACHE`, else `$XDG_CACHE_HOME/sparsecast`, else
//!   `$HOME/.cache/sparsecast`; no cache at all when none of them is set.
//! * Key: SHA-256 over the full source text, every NVRTC option, the target architecture and the
//!   NVRTC version (each field length-prefixed, so no two different inputs serialize alike). A
//!   change to any of them is a different file; stale files are never read.
//! * File: `<module>-<first 32 hex digits of the key>.cubin`, holding a magic tag, the SHA-256 of
//!   the payload and the payload. A file that is truncated, altered or unreadable fails that check
//!   and is treated as absent (the module is compiled again and the file rewritten), never as an
//!   error. Files are written atomically ([`crate::util::write_atomic`]), so concurrent runs see
//!   either no file or a whole one.

use crate::util::write_atomic;
use crate::Result;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Magic tag at the start of every cache file (format version 1).
const MAGIC: &[u8; 8] = b"SCCUBIN1";

/// The cache directory from the environment, if any (see the module documentation).
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|k| std::env::var_os(k))
}

/// [`cache_dir`] with the environment given as a lookup function (empty values count as unset).
pub fn cache_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("SPARSECAST_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("sparsecast")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("sparsecast")))
}

/// The cache key of a compilation: 64 hex digits.
pub fn cache_key(
    source: &str,
    options: &[String],
    arch: &str,
    nvrtc_version: (i32, i32),
) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(source.as_bytes());
    field(&(options.len() as u64).to_le_bytes());
    for o in options {
        field(o.as_bytes());
    }
    field(arch.as_bytes());
    field(format!("{}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    hex(&h.finalize())
}

/// Path of a module's cache file in `dir`.
pub fn cache_path(dir: &Path, module: &str, key: &str) -> PathBuf {
    dir.join(format!("{module}-{}.cubin", &key[..32.min(key.len())]))
}

/// Read a cached module; `None` when the file is absent, unreadable or fails its checksum.
pub fn load(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    decode(&bytes)
}

/// Write a module atomically, creating the directory if needed.
pub fn store(path: &Path, payload: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    }
    let bytes = encode(payload);
    write_atomic(path, |w| w.write_all(&bytes))
}

/// Cache-file bytes for a payload: magic, SHA-256 of the payload, payload.
pub fn encode(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// The payload of cache-file bytes, or `None` if they are not a whole, unaltered file.
pub fn decode(bytes: &[u8]) -> Option<Vec<u8>> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    if rest.len() < 32 {
        return None;
    }
    let (sum, payload) = rest.split_at(32);
    if payload.is_empty() || Sha256::digest(payload).as_slice() != sum {
        return None;
    }
    Some(payload.to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cache_dir_precedence() {
        use std::collections::HashMap;
        let lookup = |m: HashMap<&'static str, &'static str>| {
            cache_dir_from(move |k| m.get(k).map(|v| v.into()))
        };
        let all = HashMap::from([
            ("SPARSECAST_CACHE", "/a"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(lookup(all), Some(PathBuf::from("/a")));
        let xdg = HashMap::from([
            ("SPARSECAST_CACHE", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(lookup(xdg), Some(PathBuf::from("/x/sparsecast")));
        let home = HashMap::from([("HOME", "/h")]);
        assert_eq!(lookup(home), Some(PathBuf::from("/h/.cache/sparsecast")));
        assert_eq!(lookup(HashMap::new()), None);
    }

    #[test]
    fn key_changes_with_every_input() {
        let base = cache_key("src", &opts(&["-a", "-b"]), "sm_90", (13, 0));
        assert_eq!(base.len(), 64);
        assert!(base.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(
            base,
            cache_key("src", &opts(&["-a", "-b"]), "sm_90", (13, 0))
        );
        let variants = [
            cache_key("src ", &opts(&["-a", "-b"]), "sm_90", (13, 0)),
            cache_key("src", &opts(&["-a"]), "sm_90", (13, 0)),
            cache_key("src", &opts(&["-b", "-a"]), "sm_90", (13, 0)),
            cache_key("src", &opts(&["-a-b"]), "sm_90", (13, 0)),
            cache_key("src", &opts(&["-a", "-b"]), "sm_80", (13, 0)),
            cache_key("src", &opts(&["-a", "-b"]), "sm_90", (13, 1)),
            cache_key("src", &opts(&["-a", "-b"]), "sm_90", (12, 9)),
        ];
        for (i, v) in variants.iter().enumerate() {
            assert_ne!(&base, v, "variant {i} collides");
        }
        // Field boundaries are part of the key: moving text between fields changes it.
        assert_ne!(
            cache_key("ab", &opts(&["c"]), "sm_90", (13, 0)),
            cache_key("a", &opts(&["bc"]), "sm_90", (13, 0))
        );
    }

    #[test]
    fn roundtrip_and_corruption_detected() {
        let payload = b"\x7fELF some cubin bytes".to_vec();
        let enc = encode(&payload);
        assert_eq!(decode(&enc), Some(payload.clone()));
        // Truncated, altered, empty, wrong magic: all rejected.
        assert_eq!(decode(&enc[..enc.len() - 1]), None);
        let mut bad = enc.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&bad), None);
        let mut bad_sum = enc.clone();
        bad_sum[MAGIC.len()] ^= 1;
        assert_eq!(decode(&bad_sum), None);
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&encode(&[])), None);
        let mut wrong_magic = enc.clone();
        wrong_magic[0] = b'X';
        assert_eq!(decode(&wrong_magic), None);
    }

    #[test]
    fn store_load_and_corrupt_file_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        let key = cache_key("s", &[], "sm_90", (13, 0));
        let path = cache_path(&dir.path().join("sub"), "csr", &key);
        assert!(path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("csr-"));
        assert_eq!(load(&path), None);
        store(&path, b"payload").unwrap();
        assert_eq!(load(&path).as_deref(), Some(&b"payload"[..]));
        std::fs::write(&path, b"garbage").unwrap();
        assert_eq!(load(&path), None);
        store(&path, b"again").unwrap();
        assert_eq!(load(&path).as_deref(), Some(&b"again"[..]));
    }
}
