//! `rpcrdma-harness vectors verify [DIR]`: decode every golden vector and check it says
//! what its file says (outcome, facts, violations, byte-identical re-encoding).

use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::exit::{usage, Ending, Outcome};
use crate::outln;

#[derive(Debug, Subcommand)]
pub enum VectorsCommand {
    /// Check every .vec file under DIR; without DIR, the vectors built into this binary (the
    /// repository's vectors/ tree it was compiled from), so an installed binary needs no
    /// source tree.
    Verify {
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Also print each vector's full decoding.
        #[arg(short, long)]
        verbose: bool,
    },
}

pub fn run(cmd: VectorsCommand) -> Outcome {
    let VectorsCommand::Verify { dir, verbose } = cmd;
    let results = match &dir {
        None => {
            let embedded = verify_embedded();
            if embedded.is_empty() && !crate::signals::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(usage("this binary was built without golden vectors; give a DIR"));
            }
            outln!("{} golden vectors built into this binary", embedded.len());
            embedded
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(usage(format!("{} is not a directory of golden vectors", dir.display())));
            }
            let results = verify_dir(dir);
            if results.is_empty() {
                return Err(usage(format!("no .vec files under {}", dir.display())));
            }
            results
        }
    };
    let (pass, fail) = if crate::output::ascii() { ("+", "x") } else { ("✔", "×") };
    let (pass, fail) = (crate::output::paint(pass, "32"), crate::output::paint(fail, "1;31"));
    let mut failed = 0;
    for r in &results {
        match &r.result {
            Ok(decoding) => {
                outln!("{} {}", pass, r.name);
                if verbose {
                    for line in decoding.lines() {
                        outln!("    {line}");
                    }
                }
            }
            Err(e) => {
                failed += 1;
                outln!("{} {}: {e}", fail, r.name);
            }
        }
    }
    outln!("{} passed, {} failed, 0 skipped", results.len() - failed, failed);
    Ok(if failed > 0 { Ending::Failed } else { Ending::AsExpected })
}

/// One vector file's verdict: its name relative to the root and the decoding or the problem.
struct Verdict {
    name: String,
    result: Result<String, String>,
}

/// Every `.vec` file under `dir`, sorted; symbolic links are not followed (no loops), and an
/// unreadable directory is a failed entry rather than a crash.
fn vector_files(dir: &Path, files: &mut Vec<PathBuf>, problems: &mut Vec<Verdict>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(Verdict { name: dir.display().to_string(), result: Err(e.to_string()) });
            return;
        }
    };
    for entry in entries.flatten() {
        let p = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => vector_files(&p, files, problems),
            Ok(_) if p.extension().is_some_and(|e| e == "vec") => files.push(p),
            _ => {}
        }
    }
}

/// What the library's verifier assumes of a file, checked first so a stray file is a failed
/// vector, not a crash: readable UTF-8 text of a sane size, a parsable vector of a known kind.
fn precheck(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > crate::input::MAX_INPUT as u64 {
        return Err(format!("{} bytes: not a golden vector", meta.len()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let v = rpcrdma_vectors::Vector::parse(&text).map_err(|e| format!("parse error: {e}"))?;
    if !rpcrdma_vectors::KINDS.contains(&v.kind.as_str()) {
        return Err(format!("unknown kind {} (known: {})", v.kind, rpcrdma_vectors::KINDS.join(", ")));
    }
    if path.file_stem().and_then(|s| s.to_str()).is_none() {
        return Err("the file name is not UTF-8".into());
    }
    Ok(())
}

/// The vectors compiled into the binary; a signal stops after the current vector, as in
/// [`verify_dir`].
fn verify_embedded() -> Vec<Verdict> {
    let mut out = Vec::new();
    for (name, text) in rpcrdma_vectors::embedded_files() {
        if crate::signals::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let stem = name.rsplit('/').next().unwrap_or(name);
        out.push(Verdict { name: name.to_string(), result: rpcrdma_vectors::check_text(stem, text) });
    }
    out
}

fn verify_dir(root: &Path) -> Vec<Verdict> {
    let mut files = Vec::new();
    let mut out = Vec::new();
    vector_files(root, &mut files, &mut out);
    files.sort();
    for f in files {
        // A signal stops after the current vector (the exit status then says so).
        if crate::signals::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let name = f.strip_prefix(root).unwrap_or(&f).with_extension("").to_string_lossy().replace('\\', "/");
        let result = precheck(&f).and_then(|()| rpcrdma_vectors::check_vector(&f));
        out.push(Verdict { name, result });
    }
    out
}
