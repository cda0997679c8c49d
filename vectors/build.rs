//! Embeds every golden vector in the library, so checks can send a vector's exact bytes
//! without reading files at run time.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "vec") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files = Vec::new();
    for family in ["v1", "rpc", "ext", "v2"] {
        println!("cargo:rerun-if-changed={}", root.join(family).display());
        collect(&root.join(family), &mut files);
    }
    files.sort();
    let mut src = String::from("/// Every golden vector: (name, file text), names as `v1/msg-no-chunks-null-call`.\npub static EMBEDDED: &[(&str, &str)] = &[\n");
    for f in &files {
        let name = f.strip_prefix(&root).unwrap().with_extension("");
        writeln!(src, "    ({:?}, include_str!({:?})),", name.to_string_lossy(), f.display().to_string()).unwrap();
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, src).unwrap();
}
