//! Golden vectors: every `vectors/**/*.vec` file decodes (or fails) as it says, every valid
//! one re-encodes to the same bytes, and its full decoding matches a reviewed snapshot.
//! The file format is described in `vectors/README.md`.

mod ext;
mod format;
mod rpc;
mod v1;
mod v2;

use std::path::{Path, PathBuf};

use format::{Expect, Vector};
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

/// Decodes one vector with the summarizer for its `kind`.
fn summarize(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
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
        other => panic!("{}: unknown kind {other}", v.name),
    }
}

fn vector_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            vector_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "vec") {
            out.push(p);
        }
    }
}

fn check_vector(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    let v = Vector::parse(&text).map_err(|e| format!("parse error: {e}"))?;
    let stem = path.file_stem().unwrap().to_str().unwrap();
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
                    format::hex(&v.bytes),
                    format::hex(b)
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

#[test]
fn golden_vectors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let mut files = Vec::new();
    vector_files(&root, &mut files);
    files.sort();
    assert!(files.len() >= 40, "only {} vectors found under {}", files.len(), root.display());
    let mut failures = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().with_extension("");
        let snap_name = rel.to_str().unwrap().replace('/', "__");
        match check_vector(f) {
            Ok(decoding) => {
                let mut settings = insta::Settings::clone_current();
                settings.set_snapshot_path("snapshots");
                settings.set_prepend_module_to_snapshot(false);
                settings.set_input_file(f);
                settings.bind(|| insta::assert_snapshot!(snap_name, decoding));
            }
            Err(e) => failures.push(format!("{}: {e}", rel.display())),
        }
    }
    assert!(failures.is_empty(), "{} of {} vectors failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}
