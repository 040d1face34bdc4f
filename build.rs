//! Embeds the committed device profiles (`profiles/<gpu>.json.gz`, or an uncompressed
//! `profiles/<gpu>.json`) that exist at build time, so that a profile measured later is picked up
//! by adding its file, without a code change. They are embedded gzip-compressed (the learned
//! models make each profile ≈ 13 MB of JSON, ≈ 2 MB compressed; a `.json` is compressed here) and
//! decompressed when loaded.

use std::path::Path;

/// `(file stem, description)` of the GPU profiles that may be embedded, in preference order.
const PROFILES: [(&str, &str); 2] = [("h200", "NVIDIA H200"), ("h100", "NVIDIA H100")];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let mut items = Vec::new();
    // `SPARSECAST_NO_EMBED=1`: a binary without profiles (smaller, for the device machine, where
    // `collect`, `bench` and `selftest` need none and `--profile` names one).
    println!("cargo:rerun-if-env-changed=SPARSECAST_NO_EMBED");
    let embed = std::env::var_os("SPARSECAST_NO_EMBED").map_or(true, |v| v.is_empty() || v == "0");
    for (stem, desc) in PROFILES.into_iter().filter(|_| embed) {
        let gz_rel = format!("profiles/{stem}.json.gz");
        let json_rel = format!("profiles/{stem}.json");
        println!("cargo:rerun-if-changed={gz_rel}");
        println!("cargo:rerun-if-changed={json_rel}");
        let (gz_path, json_path) = (
            Path::new(&root).join(&gz_rel),
            Path::new(&root).join(&json_rel),
        );
        let (rel, bytes) = if gz_path.exists() {
            let bytes = std::fs::read(&gz_path).expect("reading a profile");
            // A committed file that does not decompress to text fails the build, not a run.
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut flate2::read::MultiGzDecoder::new(bytes.as_slice()),
                &mut text,
            )
            .unwrap_or_else(|e| panic!("{gz_rel} is not gzip-compressed UTF-8 text: {e}"));
            (gz_rel, bytes)
        } else if json_path.exists() {
            let json = std::fs::read(&json_path).expect("reading a profile");
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            std::io::Write::write_all(&mut enc, &json).expect("compressing a profile");
            (json_rel, enc.finish().expect("compressing a profile"))
        } else {
            continue;
        };
        let gz = Path::new(&out).join(format!("{stem}.json.gz"));
        std::fs::write(&gz, bytes).expect("writing a compressed profile");
        items.push(format!(
            "({:?}, include_bytes!({:?}).as_slice())",
            format!("{rel} ({desc})"),
            gz.display().to_string()
        ));
    }
    println!("cargo:rerun-if-changed=profiles");
    let code = format!("vec![{}]", items.join(", "));
    std::fs::write(Path::new(&out).join("embedded_profiles.rs"), code)
        .expect("writing the embedded-profile list");
}
