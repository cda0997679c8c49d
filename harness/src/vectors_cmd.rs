//! `rpcrdma-harness vectors verify [DIR]`: decode every golden vector and check it says
//! what its file says (outcome, facts, violations, byte-identical re-encoding).

use std::path::PathBuf;

use clap::Subcommand;

use crate::outln;

#[derive(Debug, Subcommand)]
pub enum VectorsCommand {
    /// Check every .vec file under DIR (default: ./vectors).
    Verify {
        #[arg(value_name = "DIR", default_value = "vectors")]
        dir: PathBuf,
        /// Also print each vector's full decoding.
        #[arg(short, long)]
        verbose: bool,
    },
}

pub fn run(cmd: VectorsCommand) -> i32 {
    let VectorsCommand::Verify { dir, verbose } = cmd;
    if !dir.is_dir() {
        eprintln!("error: {} is not a directory of golden vectors", dir.display());
        return 2;
    }
    let results = rpcrdma_vectors::verify_dir(&dir);
    if results.is_empty() {
        eprintln!("error: no .vec files under {}", dir.display());
        return 2;
    }
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
    i32::from(failed > 0)
}
