//! `rpcrdma-harness fuzz`: the judge's structure-aware fuzzer against the embedded reference
//! responder (over the emulated fabric, restarted after each crash) or a peer over verbs;
//! reproducers into `--out`, a text report and `--json`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::expectations::KnownFinding;
use rpcrdma_conformance::fuzz::{self, Config, Finding, Report, Timing};
use serde_json::json;

use crate::exit::{Ending, HarnessError, Outcome};
use crate::fuzz_target::{default_timeout, finding_name, save_finding, seconds, seed_or_clock, target, WatchArgs};

#[derive(Debug, Args)]
pub struct FuzzArgs {
    #[command(flatten)]
    pub version: crate::peer_version::PeerVersionArgs,
    /// Fuzz a peer over verbs instead of the embedded reference responder.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub peer: Option<String>,
    /// Run this long.
    #[arg(long, value_name = "N", default_value_t = 60.0)]
    pub seconds: f64,
    /// The seed (a run is reproducible from it); from the clock by default, and printed.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Where reproducer files go.
    #[arg(long, value_name = "DIR", default_value = "fuzz-findings")]
    pub out: PathBuf,
    /// Stop after this many fuzz messages.
    #[arg(long, value_name = "N")]
    pub max_messages: Option<u64>,
    /// Write the report as JSON here; `-` writes it to standard output, and the text then goes
    /// to standard error.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seconds to wait for the liveness NULL's reply (four times that before calling it
    /// silence); 0.3 for the embedded responder, 1 for a peer by default.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub watch: WatchArgs,
    /// With --peer-pid-file: restart the peer (--restart-command) before the next case when
    /// its machine's MemAvailable is below this percentage of MemTotal and the peer holds at
    /// least an eighth of the memory (1 to 90).
    #[arg(long, value_name = "PERCENT", default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=90))]
    pub peer_memory_floor: u64,
    /// An expectation profile: findings it lists (`findings`, by kind) are expected and do
    /// not fail the run.
    #[arg(long, value_name = "PROFILE")]
    pub expect: Option<PathBuf>,
    /// Before sending each case (and each minimisation trial), append it to FILE as one line
    /// holding a reproducer classified `kernel-panic`, flushed (synced where FILE supports it):
    /// when a case kills the peer's machine, the last line is that case (`fuzz-panic`). Use a
    /// device the machine's death does not lose (a serial port the host writes to a file).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Generate and discard the first N cases of the seed's sequence without sending them:
    /// after a panic at case N (the journal's `skip_cases`), `--seed S --skip-cases N`
    /// continues past it. The cases after them are exactly those `--seed S` alone sends after
    /// its first N only with `--no-feedback`: coverage feedback (the corpus built from the
    /// peer's answers to the skipped cases) is lost, so mutated cases differ.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip_cases: u64,
    /// No coverage feedback: every case is generated afresh (no corpus), so the sequence of
    /// cases depends on the seed alone and `--skip-cases` resumes it exactly.
    #[arg(long)]
    pub no_feedback: bool,
    /// Send every case on a fresh connection with a NULL after it: slower against a slow
    /// peer, and another sequence of cases than the default, where a case goes on over the
    /// previous case's connection while the peer keeps it healthy (at most 32 cases a
    /// connection) and its own last call proves liveness where it can (docs/fuzzing.md,
    /// "Cases and connections"). Reproducers of either kind replay as their run sent them.
    #[arg(long, conflicts_with = "reverse")]
    pub fresh_connections: bool,
    /// The default since connections are reused (kept so scripts that ask for it still run).
    #[arg(long, hide = true, conflicts_with_all = ["reverse", "fresh_connections"])]
    pub reuse_connections: bool,
    #[command(flatten)]
    pub wire: crate::wire_profile::WireArgs,
    /// Fuzz the reverse direction instead (RFC 8167): per case, an NFSv4.1 session whose back
    /// channel rides a fresh connection, the server's reverse-direction call awaited (a recall
    /// provoked when no CB_NULL comes) and answered with a mutated reply, then the server's
    /// liveness checked (docs/fuzzing.md).
    #[arg(long, conflicts_with_all = ["journal", "skip_cases", "no_feedback", "max_messages"])]
    pub reverse: bool,
    /// With --reverse: stop after this many cases.
    #[arg(long, value_name = "N", requires = "reverse")]
    pub max_cases: Option<u64>,
    /// Make the embedded responder misbehave (for testing the fuzzer itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    pub fault: Vec<String>,
}

mod reverse;

/// Whether `--json` names standard output.
fn is_dash(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Checks `--json FILE` before the session (a path that cannot be written fails now, not
/// after the whole session): the file is created, or truncated, as `run` does with its
/// reports, so no earlier report is left to pass for this run's.
fn check_json_path(path: &Path) -> Result<(), String> {
    if is_dash(path) {
        return Ok(());
    }
    if path.is_dir() {
        return Err(format!("--json {}: is a directory", path.display()));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("--json {}: {e}", path.display()))
}

fn save(dir: &Path, f: &Finding, n: usize) -> Result<PathBuf, String> {
    let k = &f.reproducer.kind;
    save_finding(dir, &finding_name(n + 1, k.class.name(), &k.detail), &f.reproducer.to_json())
}

/// Writes `text` to `path` whole or not at all (into a file beside it, then renamed over it):
/// a harness killed while writing leaves the previous report, never half of one. A path that
/// is not a regular file (`/dev/stdout`) is written as it is.
fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The progress line a terminal shows: the cases and messages sent, the findings, and the
/// time spent of the budget.
fn progress_line(r: &Report, budget: Duration) -> String {
    format!(
        "fuzzing: {} cases, {} messages, {} so far, {:.0} s of {:.0} s",
        r.cases,
        r.messages,
        crate::output::plural(r.findings.len(), "finding", "findings"),
        r.elapsed.as_secs_f64(),
        budget.as_secs_f64()
    )
}

/// For each finding, the profile's reason when the profile lists its kind.
pub fn known_reasons(r: &Report, expected: &[KnownFinding]) -> Vec<Option<String>> {
    r.findings
        .iter()
        .map(|f| {
            let kind = f.reproducer.kind.to_string();
            expected.iter().find(|k| k.kind == kind).map(|k| k.reason.clone())
        })
        .collect()
}

/// The report as text.
pub fn text(r: &Report, files: &[Option<PathBuf>], known: &[Option<String>]) -> String {
    let mut s = format!(
        "fuzzed {} for {:.1} s (seed {}, ended by {}): {} messages in {} cases, {:.0} messages/s\n",
        r.peer,
        r.elapsed.as_secs_f64(),
        r.seed,
        r.ended.name(),
        r.messages,
        r.cases,
        r.messages_per_second()
    );
    if r.skipped > 0 {
        s += &format!("(the seed's first {} cases skipped unsent)\n", r.skipped);
    }
    if let Some(why) = &r.down {
        s += &format!("the peer is down: {why}\n");
    }
    if !r.minimising.is_zero() {
        s += &format!(
            "(of which {:.1} s minimising findings and re-checking disconnects, not counted in messages/s)\n",
            r.minimising.as_secs_f64()
        );
    }
    let outcomes: Vec<String> = r.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s += &format!("liveness after each case: {}\n", outcomes.join(", "));
    s += &format!(
        "connections: {} opened for {} cases ({:.0} cases/s); {} cases went on over the connection of the cases before, {} shown alive by the reply to their own last call (no NULL)\n",
        r.connections,
        r.cases,
        r.cases_per_second(),
        r.reused,
        r.own_probes
    );
    if r.cases > 0 {
        let per_case = |d: Duration| d.as_secs_f64() * 1000.0 / r.cases as f64;
        let phases: Vec<String> = spent(r).iter().map(|(k, d)| format!("{k} {:.2}", per_case(*d))).collect();
        s += &format!("milliseconds per case: {}\n", phases.join(", "));
    }
    let classes: Vec<String> = r.classes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s += &format!("cases per finding class: {}\n", classes.join(", "));
    if r.disconnects_rechecked > 0 {
        let worse: Vec<String> = r.disconnects_worse_alone.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let worse = match r.disconnects_worse_alone.values().sum::<u64>() {
            0 => String::new(),
            n => format!(", {n} did worse there ({})", worse.join(", ")),
        };
        s += &format!(
            "disconnects of kept connections after malformed or unanswered messages: {} re-checked alone on a fresh connection, {} of them not reproduced there (counted, no finding){worse}\n",
            r.disconnects_rechecked, r.disconnects_not_reproduced_alone
        );
    }
    s += &format!("coverage: {} reply signatures, corpus of {}\n", r.signatures, r.corpus);
    if let Some(m) = &r.memory {
        s += &format!(
            "peer memory: it held at most {} MiB (VmRSS or VmPin); the machine's MemAvailable fell to {} MiB of {} MiB; restarted {} time(s) below {}% available{}\n",
            m.most_held_kib / 1024,
            m.least_available_kib.unwrap_or(0) / 1024,
            m.last.map_or(0, |l| l.total_kib / 1024),
            m.restarts,
            m.floor_percent,
            if m.low_not_peer > 0 {
                format!(" ({} case(s) began below it with the peer holding too little for a restart to help)", m.low_not_peer)
            } else {
                String::new()
            }
        );
    }
    if r.findings.is_empty() {
        s += "no findings\n";
    }
    for (i, f) in r.findings.iter().enumerate() {
        let rep = &f.reproducer;
        s += &format!(
            "finding {}: {} after {} messages; minimised {} -> {} message(s){}\n    {}\n",
            i + 1,
            rep.kind,
            f.after_messages,
            rep.original_messages,
            rep.messages.len(),
            if f.minimised { "" } else { " (not confirmed)" },
            rep.observed
        );
        if let Some(why) = &rep.cut_short {
            s += &format!("    not fully minimised: minimising stopped when the peer could not be brought back ({why}); the smallest case that showed it so far\n");
        }
        if let Some(Some(p)) = files.get(i) {
            s += &format!("    reproducer: {}\n", p.display());
        }
        if let Some(Some(reason)) = known.get(i) {
            s += &format!("    known (the profile lists it): {reason}\n");
        }
    }
    s
}

/// Where the cases' time went (minimisation not counted): the run's phases, and `other` for
/// the rest (the run's own bookkeeping between cases).
fn spent(r: &Report) -> Vec<(&'static str, Duration)> {
    let mut v = r.spent.named().to_vec();
    let counted: Duration = v.iter().map(|(_, d)| *d).sum();
    v.push(("other", r.elapsed.saturating_sub(r.minimising).saturating_sub(counted)));
    v
}

/// The report as JSON (schema `rpcrdma-harness/fuzz-report/v1`).
pub fn json_report(r: &Report, files: &[Option<PathBuf>], known: &[Option<String>]) -> serde_json::Value {
    json!({
        "schema": "rpcrdma-harness/fuzz-report/v1",
        "tool": format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")),
        "peer": r.peer,
        "seed": r.seed,
        "skipped_cases": r.skipped,
        "ended": r.ended.name(),
        "peer_down": r.down,
        "seconds": r.elapsed.as_secs_f64(),
        "minimising_seconds": r.minimising.as_secs_f64(),
        "cases": r.cases,
        "messages": r.messages,
        "messages_per_second": r.messages_per_second(),
        "cases_per_second": r.cases_per_second(),
        "spent_seconds": spent(r)
            .into_iter()
            .map(|(k, d)| (k.to_string(), json!(d.as_secs_f64())))
            .collect::<serde_json::Map<_, _>>(),
        "connections": r.connections,
        "reused_cases": r.reused,
        "own_probes": r.own_probes,
        "disconnects_rechecked": r.disconnects_rechecked,
        "disconnects_not_reproduced_alone": r.disconnects_not_reproduced_alone,
        "disconnects_worse_alone": r.disconnects_worse_alone,
        "liveness": r.outcomes,
        "finding_classes": r.classes,
        "signatures": r.signatures,
        "corpus": r.corpus,
        "peer_memory": r.memory.as_ref().map(|m| json!({
            "most_held_kib": m.most_held_kib,
            "least_available_kib": m.least_available_kib,
            "total_kib": m.last.map(|l| l.total_kib),
            "floor_percent": m.floor_percent,
            "restarts": m.restarts,
            "low_not_peer": m.low_not_peer,
        })),
        "findings": r.findings.iter().enumerate().map(|(i, f)| json!({
            "class": f.reproducer.kind.class.name(),
            "detail": f.reproducer.kind.detail,
            "observed": f.reproducer.observed,
            "after_messages": f.after_messages,
            "original_messages": f.reproducer.original_messages,
            "messages": f.reproducer.messages.len(),
            "minimised": f.minimised,
            "minimisation_cut_short": f.reproducer.cut_short,
            "known": known.get(i).cloned().flatten(),
            "reproducer": files.get(i).cloned().flatten().map(|p| p.display().to_string()),
        })).collect::<Vec<_>>(),
    })
}

/// What `fuzz` and `fuzz --reverse` settle from their arguments before a session: every bad
/// one is an error here, before a case is sent.
pub(crate) struct Prelude {
    /// `--json -`: the report takes standard output, and the text goes to standard error.
    pub json_to_stdout: bool,
    pub duration: Duration,
    /// The reply wait (`--timeout`, or its default for the target).
    pub reply: Duration,
    /// The findings the profile (`--expect`) lists.
    pub expected: Vec<KnownFinding>,
    pub version: crate::peer_version::PeerVersion,
    /// The spec choices the cases, the replies' classification, the embedded responder and
    /// the reproducers go by.
    pub wire: rpcrdma_codec::Profile,
    pub target: Box<dyn fuzz::Target>,
    pub seed: u64,
}

/// Checks `--json`, the durations, the profile, the wire profile and the target, and makes
/// `--out`.
pub(crate) fn prelude(args: &FuzzArgs) -> Result<Prelude, HarnessError> {
    if let Some(path) = &args.json {
        check_json_path(path).map_err(HarnessError::Usage)?;
    }
    let json_to_stdout = args.json.as_deref().is_some_and(is_dash);
    crate::output::text_to_stderr(json_to_stdout);
    let duration = seconds(args.seconds, "--seconds")?;
    let reply = seconds(default_timeout(args.timeout, args.peer.is_some()), "--timeout")?;
    let profile = crate::profiles::load(args.expect.as_deref())?;
    let version = crate::peer_version::PeerVersion::new(args.version.peer_version.as_deref(), profile.as_ref());
    let expected = profile.map(|p| p.findings).unwrap_or_default();
    let wire = args.wire.profile()?;
    let target = target(args.peer.as_deref(), &args.fault, &args.watch, wire)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| HarnessError::Environment(format!("{}: {e}", args.out.display())))?;
    let seed = seed_or_clock(args.seed);
    Ok(Prelude { json_to_stdout, duration, reply, expected, version, wire, target, seed })
}

pub fn run(args: FuzzArgs) -> Outcome {
    if args.reverse {
        return reverse::run(args);
    }
    let Prelude { json_to_stdout, duration, reply, expected, version, wire, mut target, seed } = prelude(&args)?;
    let version_line = version.line();
    let journal = match &args.journal {
        None => None,
        Some(path) => Some(std::sync::Arc::new(
            fuzz::Journal::open(path)
                .map_err(|e| HarnessError::Environment(format!("--journal {}: {e}", path.display())))?,
        )),
    };
    let config = Config {
        seed,
        duration: Some(duration),
        max_messages: args.max_messages,
        options: RunOptions { timeout: reply.max(Duration::from_secs(2)), profile: wire, ..RunOptions::default() },
        timing: Timing { reply },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        skip_cases: args.skip_cases,
        feedback: !args.no_feedback,
        journal: journal.clone(),
        memory_floor_percent: args.peer_memory_floor,
        reuse_connections: !args.fresh_connections,
        ..Config::default()
    };
    let skipping = match (args.skip_cases, args.fresh_connections) {
        (0, false) => String::new(),
        (0, true) => ", a fresh connection for each case".to_string(),
        (n, false) => format!(", skipping its first {n} cases"),
        (n, true) => format!(", skipping its first {n} cases, a fresh connection for each case"),
    };
    crate::textln!(
        "rpcrdma-harness {} fuzzing {} (seed {seed}{skipping}{})",
        env!("CARGO_PKG_VERSION"),
        target.describe(),
        crate::wire_profile::clause(&wire)
    );
    let files: RefCell<Vec<Option<PathBuf>>> = RefCell::new(Vec::new());
    let mut write_failed = false;
    let out = args.out.clone();
    // The JSON report as the run stands, rewritten at most every second and after each
    // finding (ended "not ended ..."): a run killed outright (the OOM killer's SIGKILL) still
    // leaves its report, saying it did not end.
    let json_path = args.json.clone();
    let mut version_fields = version.json_fields().to_vec();
    version_fields.push(("wire_profile", json!(crate::wire_profile::names(&wire))));
    let write_json = |report: &Report, known: &[Option<String>]| -> Result<(), String> {
        // Standard output takes the report once, at the end.
        let Some(path) = json_path.as_deref().filter(|p| !is_dash(p)) else { return Ok(()) };
        let mut value = json_report(report, &files.borrow(), known);
        for (k, v) in &version_fields {
            value[*k] = v.clone();
        }
        let t = serde_json::to_string_pretty(&value).expect("JSON values serialize");
        write_whole(path, &(t + "\n"))
    };
    let mut last_progress: Option<(Instant, usize)> = None;
    // On a terminal, one line rewritten each second says how far the session is.
    let terminal =
        std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("TERM").is_none_or(|t| t != "dumb");
    let progress = |r: &Report| {
        let due = last_progress.is_none_or(|(t, n)| t.elapsed() >= Duration::from_secs(1) || n != r.findings.len());
        if due {
            last_progress = Some((Instant::now(), r.findings.len()));
            // A failure here shows again, and counts, when the final report is written.
            let _ = write_json(r, &known_reasons(r, &expected));
            if terminal {
                crate::err!("\r\x1b[K{}", progress_line(r, duration));
            }
        }
    };
    let report = fuzz::run_watched(
        target.as_mut(),
        &config,
        &crate::signals::INTERRUPT,
        |f| {
            // Journaled too: a machine that dies later in the run keeps this finding.
            if let Some(j) = &journal {
                j.append(&fuzz::journal::finding_line(&f.reproducer));
            }
            let mut files = files.borrow_mut();
            let n = files.len();
            match save(&out, f, n) {
                Ok(p) => {
                    if terminal {
                        crate::err!("\r\x1b[K");
                    }
                    crate::textln!(
                        "finding {}: {} ({} message(s)) -> {}",
                        n + 1,
                        f.reproducer.kind,
                        f.reproducer.messages.len(),
                        p.display()
                    );
                    files.push(Some(p));
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    write_failed = true;
                    files.push(None);
                }
            }
        },
        progress,
    );
    if terminal {
        crate::err!("\r\x1b[K");
    }
    let files = files.take();
    if let Some(j) = &journal {
        j.append(&fuzz::journal::end_line(report.seed, report.skipped + report.cases, report.ended.name()));
    }
    if let Some(e) = journal.as_ref().and_then(|j| j.error()) {
        eprintln!("error: cannot write the journal: {e}");
        write_failed = true;
    }
    if report.ended == fuzz::Ended::Unreachable {
        return Err(HarnessError::Unreachable(format!("cannot reach {}", report.peer)));
    }
    let known = known_reasons(&report, &expected);
    if let Some(line) = &version_line {
        crate::textln!("{line}");
    }
    crate::output::text_str(&text(&report, &files, &known));
    if let Some(path) = &args.json {
        let mut value = json_report(&report, &files, &known);
        for (k, v) in &version_fields {
            value[*k] = v.clone();
        }
        let t = serde_json::to_string_pretty(&value).expect("JSON values serialize");
        if json_to_stdout {
            crate::output::stdout_str(&(t + "\n"));
        } else if let Err(e) = write_whole(path, &(t + "\n")) {
            eprintln!("error: {e}");
            write_failed = true;
        }
    }
    if write_failed && crate::signals::exit_code().is_none() {
        return Err(HarnessError::Unwritten);
    }
    // A peer that went down and stayed down fails the run, its findings listed or not: the
    // rest of the budget went unfuzzed.
    Ok(Ending::judged(!known.iter().all(Option::is_some) || report.ended == fuzz::Ended::PeerDown))
}
