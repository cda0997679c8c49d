//! Golden vectors for RPC-over-RDMA: the `.vec` format (see `vectors/README.md`), and a
//! verifier that decodes each vector with `rpcrdma-codec` and checks what the file says:
//! the outcome, the hand-written facts, the semantic-check violations, and that every valid
//! vector re-encodes to the same bytes.

mod ext;
pub mod format;
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}
mod rpc;
mod v1;
mod v2;

use std::path::{Path, PathBuf};

pub use format::{Expect, Vector};
use rpcrdma_codec::{DecodeError, Profile};

/// What a family's summarizer reports for one vector.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Every fact of the decoding, in order, as `(name, value)` (names from vectors/README.md).
    pub facts: Vec<(String, String)>,
    /// Semantic-check IDs, when the family has a check layer and the vector gives a role.
    pub violations: Option<Vec<String>>,
    /// The bytes the codec writes back from its decoding, when the family re-encodes.
    pub reencoded: Option<Vec<u8>>,
}

impl Decoded {
    pub fn fact(&mut self, name: impl Into<String>, value: impl ToString) {
        self.facts.push((name.into(), value.to_string()));
    }
}

/// A golden vector by name (`v1/notbool-writes-7`), from the copy built into the library.
pub fn embedded(name: &str) -> Option<Vector> {
    embedded::EMBEDDED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Vector::parse(text).unwrap_or_else(|e| panic!("embedded vector {n}: {e}")))
}

/// The names of all embedded vectors.
pub fn embedded_names() -> impl Iterator<Item = &'static str> {
    embedded::EMBEDDED.iter().map(|(n, _)| *n)
}

/// Every embedded vector as (name, file text), names as `v1/msg-no-chunks-null-call`.
pub fn embedded_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    embedded::EMBEDDED.iter().copied()
}

/// The vector kinds.
pub const KINDS: &[&str] = &["header", "rpc", "private-data", "ccp-call", "ccp-reply", "msgp-payload"];

/// Decodes one vector with the summarizer for its `kind`: every fact of the decoding.
pub fn summarize(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    match v.kind.as_str() {
        "header" => {
            // rdma_vers sits at byte 4 in every version (RFC 8166 4.2).
            if v.bytes.len() >= 8 && v.bytes[4..8] == [0, 0, 0, 2] {
                v2::summarize_header(v, profile)
            } else {
                v1::summarize_header(v, profile)
            }
        }
        "rpc" => rpc::summarize_message(&v.bytes),
        "private-data" | "ccp-call" | "ccp-reply" | "msgp-payload" => ext::summarize(v, profile),
        other => panic!("{}: unknown kind {other} (known: {})", v.name, KINDS.join(", ")),
    }
}

/// Every `.vec` file under `dir`, sorted.
pub fn vector_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            vector_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "vec") {
            out.push(p);
        }
    }
}

/// Checks one vector file: Ok with the full decoding as text (for review and snapshots),
/// or Err saying what differs from the file.
pub fn check_vector(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    check_text(path.file_stem().unwrap().to_str().unwrap(), &text)
}

/// Checks one vector given as its file's text and its file name without `.vec` (`stem`), as
/// [`check_vector`] does for a file.
pub fn check_text(stem: &str, text: &str) -> Result<String, String> {
    let v = Vector::parse(text).map_err(|e| format!("parse error: {e}"))?;
    if v.name != stem {
        return Err(format!("name {} differs from the file name", v.name));
    }
    let mut profile = Profile::default();
    for p in &v.profile {
        if !profile.apply(p) {
            return Err(format!("unknown profile {p}"));
        }
    }
    let outcome = summarize(&v, &profile);
    match (&v.expect, outcome) {
        (Expect::Error { kind, field, offset }, Err(e)) => {
            let got = format!("{} {} {}", e.kind.name(), e.field, e.offset);
            let want = format!("{kind} {field} {offset}");
            if got != want {
                return Err(format!("expected error `{want}`, got `{got}` ({e})"));
            }
            Ok(format!("error: {got}\n{e}\n"))
        }
        (Expect::Error { .. }, Ok(d)) => Err(format!("expected an error, decoded {:?}", d.facts)),
        (Expect::Ok, Err(e)) => Err(format!("expected ok, got error: {e}")),
        (Expect::Ok, Ok(d)) => {
            let mut problems = Vec::new();
            for (name, want) in &v.fields {
                match d.facts.iter().find(|(n, _)| n == name) {
                    None => problems.push(format!("no fact {name} (want {want})")),
                    Some((_, got)) if !format::same_value(got, want) => {
                        problems.push(format!("{name}: want {want}, got {got}"))
                    }
                    Some(_) => {}
                }
            }
            if let Some(want) = &v.violations {
                match &d.violations {
                    None => problems.push("the vector names violations but no check ran".into()),
                    Some(got) => {
                        let (mut g, mut w) = (got.clone(), want.clone());
                        g.sort();
                        w.sort();
                        if g != w {
                            problems.push(format!("violations: want {w:?}, got {g:?}"));
                        }
                    }
                }
            }
            match &d.reencoded {
                Some(b) if *b != v.bytes => problems.push(format!(
                    "re-encoding differs:\n  want {}\n  got  {}",
                    rpcrdma_codec::hex::Hex(&v.bytes),
                    rpcrdma_codec::hex::Hex(b)
                )),
                _ => {}
            }
            if !problems.is_empty() {
                return Err(problems.join("; "));
            }
            let mut s = String::new();
            for (n, val) in &d.facts {
                s.push_str(&format!("{n} = {val}\n"));
            }
            if let Some(vs) = &d.violations {
                s.push_str(&format!("violations = {vs:?}\n"));
            }
            Ok(s)
        }
    }
}

/// One file's result.
#[derive(Debug)]
pub struct FileResult {
    /// Path relative to the vectors root, without `.vec` (`v1/msg-no-chunks`).
    pub name: String,
    pub result: Result<String, String>,
}

/// Checks every vector under `root`.
pub fn verify_dir(root: &Path) -> Vec<FileResult> {
    let mut files = Vec::new();
    vector_files(root, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| FileResult {
            name: f.strip_prefix(root).unwrap_or(f).with_extension("").to_string_lossy().replace('\\', "/"),
            result: check_vector(f),
        })
        .collect()
}

/// Checks every vector built into the library (the `vectors/` tree it was compiled from), so
/// an installed binary verifies without the source tree.
pub fn verify_embedded() -> Vec<FileResult> {
    embedded_files()
        .map(|(name, text)| FileResult {
            name: name.to_string(),
            result: check_text(name.rsplit('/').next().unwrap_or(name), text),
        })
        .collect()
}
