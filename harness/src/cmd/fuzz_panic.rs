//! `rpcrdma-harness fuzz-panic` (hidden; run on the host after the peer's machine died): the
//! journal's last line (`fuzz --journal`) is the case that was running, the console log holds
//! the panic; together they are a finding (`kernel-panic`, or the oops's `kernel-report` when
//! `panic_on_oops` made it fatal), saved as a reproducer file that `replay` reads, and judged
//! against the profile's `findings`, with the findings the run journaled before it died.
//! The journal of `serve --fuzz --journal` (the machine was a client, and died while we
//! mutated what we sent it) gives the last mutated message sent: the panic's finding is a
//! `serve --fuzz` finding file of it, which `replay --listen` serves again. Without a journal
//! the panic alone is judged, with no reproducer. A kind an earlier boot's finding file in the
//! same directory holds is judged, not saved again.

use std::path::{Path, PathBuf};

use clap::Args;
use rpcrdma_conformance::fuzz::kernel_log::panic_report;
use rpcrdma_conformance::fuzz::{journal, Class, Kind, Reproducer};

use crate::client_finding;
use crate::exit::{usage, Ending, HarnessError, Outcome};

#[derive(Debug, Args)]
pub struct FuzzPanicArgs {
    /// The journal `fuzz --journal` or `serve --fuzz --journal` wrote (its last complete line is
    /// the case that was running, or the last mutated message sent); without it the panic is
    /// judged alone and no reproducer is written. Repeatable for `serve --fuzz` journals (one
    /// a `serve` process): the last mutated message of them all is the finding's.
    #[arg(long, value_name = "FILE")]
    pub journal: Vec<PathBuf>,
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
    let mut journals = Vec::new();
    for path in &args.journal {
        journals.push((path, read(path, "--journal")?));
    }
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
    let known_note = |kind: &str| {
        let known = profile.as_ref().and_then(|p| p.known_finding(kind));
        (known.is_some(), known.map_or(String::new(), |k| format!(" (known: {})", k.reason)))
    };
    if journals.is_empty() {
        let (known, note) = known_note(&kind.to_string());
        println!("finding: {kind} (no journal: no reproducer){note}");
        println!("the console showed:\n    {}", panic.lines.join("\n    "));
        return Ok(if known { Ending::AsExpected } else { Ending::Failed });
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| HarnessError::Environment(format!("--out {}: {e}", args.out.display())))?;
    let mut saved = Saved::read(&args.out);
    let client = journals.iter().filter_map(|(_, text)| client_finding::journal::read(text)).reduce(|a, b| a.merge(b));
    if let Some(client) = client {
        return client_panic(&args.out, &mut saved, client, &kind, &panic.lines, &known_note);
    }
    let [(journal_path, text)] = &journals[..] else {
        return Err(usage("--journal more than once: only serve --fuzz journals are read together"));
    };
    let (mut repro, skip) =
        journal::last_entry(text).map_err(|e| usage(format!("--journal {}: {e}", journal_path.display())))?;
    repro.kind = kind;
    repro.observed =
        format!("{}; the machine panicked, its console showed:\n{}\n", repro.observed, panic.lines.join("\n"));
    // The findings the run made before the machine died, from their journal lines, then the
    // panic's; each saved (unless an earlier boot saved its kind), said, and judged against the
    // profile.
    let mut all_known = true;
    let before = journal::findings(text);
    for (label, r) in before.iter().map(|r| ("finding before the panic", r)).chain([("finding", &repro)]) {
        let (known, note) = known_note(&r.kind.to_string());
        all_known &= known;
        let name = crate::fuzz_target::finding_name(next_number(&args.out), r.kind.class.name(), "");
        let file = saved.save(&args.out, &r.kind.to_string(), &name, &r.to_json())?;
        println!("{label}: {} -> {file}{note}", r.kind);
    }
    // What a resumed run has left of a message budget (the run script passes the rest on).
    let (cases, messages) = journal::cases_sent(text);
    println!("sent before the panic: {messages} messages in {cases} cases (the last counted whole)");
    println!("resume: --seed {} --skip-cases {skip}", repro.seed);
    Ok(if all_known { Ending::AsExpected } else { Ending::Failed })
}

/// The kinds of the finding files in `--out` (an earlier boot's among them), each with its file.
struct Saved(Vec<(String, PathBuf)>);

impl Saved {
    fn read(dir: &Path) -> Saved {
        let files = std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| {
            let path = e.ok()?.path();
            let text = std::fs::read_to_string(&path).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            // A reproducer's kind is its class and detail; a client finding's, a string.
            let kind = match &v["kind"] {
                serde_json::Value::String(k) => k.clone(),
                k => Reproducer::from_json(&v).map(|r| r.kind.to_string()).unwrap_or_else(|_| k.to_string()),
            };
            Some((kind, path))
        });
        Saved(files.collect())
    }

    /// Writes `v` as `dir/name` unless a file there holds `kind`: the file that holds it, said.
    fn save(&mut self, dir: &Path, kind: &str, name: &str, v: &serde_json::Value) -> Result<String, HarnessError> {
        if let Some((_, p)) = self.0.iter().find(|(k, _)| k == kind) {
            return Ok(format!("{} (saved already: not written again)", p.display()));
        }
        let path = crate::fuzz_target::save_finding(dir, name, v).map_err(HarnessError::Environment)?;
        self.0.push((kind.to_string(), path.clone()));
        Ok(path.display().to_string())
    }
}

/// The machine died while `serve --fuzz` mutated what it sent it (a client): the findings
/// journaled before, then the panic's, a `serve --fuzz` finding file of the last mutated
/// message sent (which came last before the panic; that it caused it is inferred).
fn client_panic(
    out: &Path,
    saved: &mut Saved,
    journal: client_finding::journal::Read,
    kind: &Kind,
    console: &[String],
    known_note: &dyn Fn(&str) -> (bool, String),
) -> Outcome {
    let mut all_known = true;
    let file_name =
        |kind: &str| crate::fuzz_target::finding_name(next_number(out), &crate::fuzz_target::file_safe(kind), "");
    for f in &journal.findings {
        let k = f["kind"].as_str().unwrap_or("kernel-report").to_string();
        let (known, note) = known_note(&k);
        all_known &= known;
        let file = saved.save(out, &k, &file_name(&k), f)?;
        println!("finding before the panic: {k} -> {file}{note}");
    }
    let kind = kind.to_string();
    let (known, note) = known_note(&kind);
    all_known &= known;
    match &journal.last {
        Some(last) => {
            let profile: Vec<String> = last["profile"]
                .as_array()
                .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            let after = last["after_mutation"].clone();
            let v = client_finding::finding(last["seed"].as_u64().unwrap_or(0), &profile, &kind, console, Some(after));
            let file = saved.save(out, &kind, &file_name(&kind), &v)?;
            println!("finding: {kind} -> {file}{note}");
            println!(
                "mutated before the panic: {} messages; the last ({}, XID {}) is the finding's",
                journal.mutations,
                last["after_mutation"]["how"].as_str().unwrap_or("?"),
                last["after_mutation"]["xid"].as_str().unwrap_or("?")
            );
        }
        None => {
            println!("finding: {kind} (no message was mutated before it: no reproducer){note}");
            println!("the console showed:\n    {}", console.join("\n    "));
        }
    }
    Ok(if all_known { Ending::AsExpected } else { Ending::Failed })
}
