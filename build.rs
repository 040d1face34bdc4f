//! Embeds the committed device profiles (`profiles/<gpu>.json`) that exist at build time, so that
//! a profile measured later (the H100's) is picked up by adding its file, without a code change.
//! They are gzip-compressed into the binary (the learned models make each profile ≈ 6 MB of JSON,
//! ≈ 1.5 MB compressed) and decompressed when loaded.

use std::path::Path;

/// `(file stem, description)` of the GPU profiles that may be embedded, in preference order.
const PROFILES: [(&str, &str); 2] = [("h200", "NVIDIA H200"), ("h100", "NVIDIA H100")];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let mut items = Vec::new();
    for (stem, desc) in PROFILES {
        let rel = format!("profiles/{stem}.json");
        println!("cargo:rerun-if-changed={rel}");
        let path = Path::new(&root).join(&rel);
        if path.exists() {
            let json = std::fs::read(&path).expect("reading a profile");
            let gz = Path::new(&out).join(format!("{stem}.json.gz"));
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            std::io::Write::write_all(&mut enc, &json).expect("compressing a profile");
            std::fs::write(&gz, enc.finish().expect("compressing a profile"))
                .expect("writing a compressed profile");
            items.push(format!(
                "({:?}, include_bytes!({:?}).as_slice())",
                format!("{rel} ({desc})"),
                gz.display().to_string()
            ));
        }
    }
    println!("cargo:rerun-if-changed=profiles");
    let code = format!("vec![{}]", items.join(", "));
    std::fs::write(Path::new(&out).join("embedded_profiles.rs"), code)
        .expect("writing the embedded-profile list");
}
