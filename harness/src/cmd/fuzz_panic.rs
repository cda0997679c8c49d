//! `rpcrdma-harness fuzz-panic` (hidden; run on the host after the peer's machine died): the
//! journal's last line (`fuzz --journal`) is the case that was running, the console log holds
//! the panic; together they are a finding (`kernel-panic`, or the oops's `kernel-report` when
//! `panic_on_oops` made it fatal), saved as a reproducer file that `replay` reads, and judged
//! against the profile's `findings`, with the findings the run journaled before it died.
//! Without a journal (the machine died while `serve --fuzz` mutated what it sent a client,
//! which is not journaled) the panic alone is judged, with no reproducer.

use std::path::{Path, PathBuf};

use clap::Args;
use rpcrdma_conformance::fuzz::kernel_log::panic_report;
use rpcrdma_conformance::fuzz::{journal, Class, Kind, Reproducer};

use crate::exit::{usage, Ending, HarnessError, Outcome};

#[derive(Debug, Args)]
pub struct FuzzPanicArgs {
    /// The journal `fuzz --journal` wrote (its last complete line is the case that was running);
    /// without it the panic is judged alone and no reproducer is written.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// The peer machine's console log, holding the panic ("Kernel panic - not syncing:").
    #[arg(long, value_name = "FILE")]
    pub console: PathBuf,
    /// Where the reproducer file goes (numbered after the files there).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// An expectation profile: a panic its `findings` list (`kernel-panic: SIGNATURE`) is known.
    #[arg(long, value_name = "PROFILE")]
    pub expect: Option<PathBuf>,
}

/// The number after the highest `NNN-` prefix of the files in `dir`.
fn next_number(dir: &Path) -> usize {
    let highest = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.split('-').next()?.parse::<usize>().ok())
        .max();
    highest.unwrap_or(0) + 1
}

/// A console log or journal, at most [`crate::input::MAX_CONSOLE`] bytes (the machine may have
/// written bytes that are not UTF-8: read lossily).
fn read(path: &Path, what: &str) -> Result<String, HarnessError> {
    let limit = crate::input::MAX_CONSOLE;
    match std::fs::File::open(path).and_then(|f| crate::input::read_at_most(f, limit)) {
        Err(e) => Err(usage(format!("{what} {}: {e}", path.display()))),
        Ok(None) => Err(usage(format!("{what} {}: longer than {} MiB", path.display(), limit >> 20))),
        Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

pub fn run(args: FuzzPanicArgs) -> Outcome {
    let profile = crate::profiles::load(args.expect.as_deref())?;
    let journal = match &args.journal {
        Some(path) => {
            let text = read(path, "--journal")?;
            let entry = journal::last_entry(&text).map_err(|e| usage(format!("--journal {}: {e}", path.display())))?;
            Some((text, entry))
        }
        None => None,
    };
    let panic = panic_report(&read(&args.console, "--console")?).ok_or_else(|| {
        usage(format!(
            "--console {}: no \"Kernel panic - not syncing:\" line after the last boot",
            args.console.display()
        ))
    })?;
    // An oops the kernel made fatal because panic_on_oops is set is the oops's finding, as a
    // run that lived through it would have classified it; any other panic is one of its own.
    let class = if panic.oops_made_fatal { Class::KernelReport } else { Class::KernelPanic };
    let kind = Kind { class, detail: panic.signature.clone() };
    let known_note = |kind: &Kind| {
        let known = profile.as_ref().and_then(|p| p.known_finding(&kind.to_string()));
        (known.is_some(), known.map_or(String::new(), |k| format!(" (known: {})", k.reason)))
    };
    let Some((text, (mut repro, skip))) = journal else {
        let (known, note) = known_note(&kind);
        println!("finding: {kind} (no journal: no reproducer){note}");
        println!("the console showed:\n    {}", panic.lines.join("\n    "));
        return Ok(if known { Ending::AsExpected } else { Ending::Failed });
    };
    repro.kind = kind;
    repro.observed =
        format!("{}; the machine panicked, its console showed:\n{}\n", repro.observed, panic.lines.join("\n"));
    std::fs::create_dir_all(&args.out)
        .map_err(|e| HarnessError::Environment(format!("--out {}: {e}", args.out.display())))?;
    // The findings the run made before the machine died, from their journal lines, then the
    // panic's; each saved, said, and judged against the profile.
    let mut all_known = true;
    let before = journal::findings(&text);
    for (label, r) in before.iter().map(|r| ("finding before the panic", r)).chain([("finding", &repro)]) {
        let path = save(&args.out, r)?;
        let (known, note) = known_note(&r.kind);
        all_known &= known;
        println!("{label}: {} -> {}{note}", r.kind, path.display());
    }
    // What a resumed run has left of a message budget (the run script passes the rest on).
    let (cases, messages) = journal::cases_sent(&text);
    println!("sent before the panic: {messages} messages in {cases} cases (the last counted whole)");
    println!("resume: --seed {} --skip-cases {skip}", repro.seed);
    Ok(if all_known { Ending::AsExpected } else { Ending::Failed })
}

/// Writes `r` into `dir` as `NNN-CLASS.json` (numbered after the files there).
fn save(dir: &Path, r: &Reproducer) -> Result<PathBuf, HarnessError> {
    let name = crate::fuzz_target::finding_name(next_number(dir), r.kind.class.name(), "");
    crate::fuzz_target::save_finding(dir, &name, &r.to_json()).map_err(HarnessError::Environment)
}
