//! Seeds the fuzz corpora from the golden vectors: every vector's bytes go to the corpus of
//! each target that decodes its kind, as `fuzz/corpus/<target>/<family>_<name>`.
//!
//! Usage: `cargo run --manifest-path fuzz/seed-corpora/Cargo.toml [-- VECTORS_DIR CORPUS_DIR]`
//! (defaults: `vectors/` and `fuzz/corpus/` of this repository).

use std::path::{Path, PathBuf};

use rpcrdma_codec::{v1, Profile};
use rpcrdma_vectors::{vector_files, Vector};

/// Which targets get a vector of each kind. The structured target's input is an `arbitrary`
/// description, not wire bytes: header bytes still seed it (libFuzzer reads them as
/// descriptions), which gives it varied starting points.
fn targets(kind: &str, family: &str) -> &'static [&'static str] {
    match (kind, family) {
        ("header", "v2") => &["v2_header", "roundtrip", "v1_header"],
        ("header", _) => &["v1_header", "roundtrip", "v2_header", "structured"],
        ("msgp-payload", _) => &["v1_header", "roundtrip"],
        ("rpc", _) => &["rpc_header", "ccp"],
        ("private-data", _) => &["private_data"],
        ("ccp-call" | "ccp-reply", _) => &["ccp", "v1_header"],
        _ => &[],
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let vectors = args.first().map(PathBuf::from).unwrap_or_else(|| root.join("vectors"));
    let corpus = args.get(1).map(PathBuf::from).unwrap_or_else(|| root.join("fuzz/corpus"));
    let mut files = Vec::new();
    vector_files(&vectors, &mut files);
    files.sort();
    let mut written = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let v = Vector::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let family = f.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or("x");
        let mut seeds: Vec<(String, Vec<u8>, &[&str])> =
            vec![(format!("{family}_{}", v.name), v.bytes.clone(), targets(&v.kind, family))];
        // A v1 message's RPC payload seeds the RPC and CCP targets too.
        if v.kind == "header" && family == "v1" {
            if let Ok(m) = v1::Message::decode(&v.bytes, &Profile::default()) {
                if !m.payload.is_empty() {
                    seeds.push((format!("{family}_{}.payload", v.name), m.payload.to_vec(), &["rpc_header", "ccp"]));
                }
            }
        }
        for (name, bytes, targets) in seeds {
            for t in targets {
                let dir = corpus.join(t);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(&name), &bytes).unwrap();
                written += 1;
            }
        }
    }
    println!("seeded {written} corpus files from {} vectors into {}", files.len(), corpus.display());
}
