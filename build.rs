//! Embeds the committed device profiles (`profiles/<gpu>.json`) that exist at build time, so that
//! a profile measured later (the H100's) is picked up by adding its file, without a code change.

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
            items.push(format!(
                "({:?}, include_str!({:?}))",
                format!("{rel} ({desc})"),
                path.display().to_string()
            ));
        }
    }
    println!("cargo:rerun-if-changed=profiles");
    let code = format!("vec![{}]", items.join(", "));
    std::fs::write(Path::new(&out).join("embedded_profiles.rs"), code)
        .expect("writing the embedded-profile list");
}
