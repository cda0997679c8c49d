//! Reports: each reads a finished, judged run and writes one format. None of them runs
//! anything or knows about transports.

pub mod json;
pub mod junit;
pub mod kcidb;
pub mod pcap;
pub mod text;

use std::io::Write;
use std::path::{Path, PathBuf};

use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_conformance::expectations::{Judged, Status};

/// A finished run as the reports see it.
#[derive(Debug)]
pub struct Run<'a> {
    /// What was tested: `embedded reference responder (emulated transport)`, `verbs 10.0.0.1:20049`.
    pub peer: String,
    pub transport: String,
    pub strict: bool,
    /// The expectation profile's name, when one was loaded.
    pub expectations: Option<String>,
    pub interrupted: bool,
    pub started_unix: u64,
    pub duration: std::time::Duration,
    /// Each check's result with its judgement, in run order.
    pub checks: &'a [JudgedResult],
    pub meta: Metadata,
}

/// A check's result and its judgement (strict mode, the profile): what every report renders
/// of one check.
#[derive(Debug, Clone)]
pub struct JudgedResult {
    pub result: CheckResult,
    pub judged: Judged,
}

/// What produced the report: recorded in the JSON report and as JUnit properties.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// The subcommand: `run` or `serve`.
    pub command: &'static str,
    /// The command line as given (arguments after the program name).
    pub command_line: Vec<String>,
    /// The selectors given (empty: every check).
    pub select: Vec<String>,
    /// The `--exclude` selectors.
    pub exclude: Vec<String>,
    /// The `--expect` file, as given.
    pub profile_path: Option<String>,
    /// The wire profile's choices in force (`--profile NAME`), by name; empty: the defaults.
    pub wire_profile: Vec<&'static str>,
    /// The export's root file handle the checks used, and its source (`run` only).
    pub root_fh: Option<crate::mount::RootHandle>,
    /// Why the run ended before judging anything (its exit status and the error), for the
    /// report an early exit still writes.
    pub failure: Option<(i32, String)>,
    /// The peer's exact version (`--peer-version`) and the profile's measured versions.
    pub peer_version: crate::peer_version::PeerVersion,
    /// `run --repeat N` with N > 1: each check's attempts, each with its own judgement, in the
    /// order of the run's checks, whose entries are then each check's representative attempt
    /// (judged over all its attempts: see `cmd::run::aggregate`); empty for a run without
    /// repeats.
    pub attempts: Vec<Vec<JudgedResult>>,
}

pub use crate::build_info::{REVISION, VERSION};

impl Metadata {
    /// The metadata for `command`, with the process's own command line.
    pub fn new(command: &'static str) -> Metadata {
        Metadata { command, command_line: std::env::args().skip(1).collect(), ..Metadata::default() }
    }

    /// (name, value) pairs, for JUnit properties.
    pub fn properties(&self) -> Vec<(&'static str, String)> {
        vec![
            ("harness.version", VERSION.to_string()),
            ("harness.revision", REVISION.to_string()),
            ("command", self.command.to_string()),
            ("command_line", self.command_line.join(" ")),
            ("selection.select", self.select.join(" ")),
            ("selection.exclude", self.exclude.join(" ")),
            ("profile_path", self.profile_path.clone().unwrap_or_default()),
            ("wire_profile", self.wire_profile.join(" ")),
            ("peer_version", self.peer_version.version.clone().unwrap_or_default()),
            ("profile_measured_on", self.peer_version.measured.join(" ")),
            ("peer_version_seen", self.peer_version.seen.map(|s| s.to_string()).unwrap_or_default()),
            ("root_fh", self.root_fh.as_ref().map(|r| r.hex()).unwrap_or_default()),
            ("root_fh.source", self.root_fh.as_ref().map(|r| r.source.name()).unwrap_or_default().to_string()),
        ]
    }
}

/// Totals for the closing line: each status counted on its own, so a known divergence never
/// reads as a pass (issue 24, edge 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Plain passes.
    pub passed: usize,
    /// Failures the profile lists (expected divergences): known non-conformance.
    pub expected: usize,
    /// Passes that deviate from a SHOULD (pass-lax).
    pub lax: usize,
    /// Failures, and unexpected passes.
    pub failed: usize,
    /// Checks not run (interrupted, or the peer down).
    pub skipped: usize,
    /// Checks the peer does not support (CCP, Version Two, ...).
    pub unsupported: usize,
    /// Checks that broke (a harness defect): the peer is not judged by them.
    pub errors: usize,
    /// Of the skipped, those not run because the peer went down and did not come back.
    pub not_run: usize,
    /// Checks run but not judged: their precondition did not happen.
    pub inconclusive: usize,
    /// `--strict`: an inconclusive check fails the run.
    pub strict: bool,
}

impl Totals {
    /// Whether nothing was judged: no check passed or failed (each was skipped, unsupported
    /// or inconclusive, or none ran), so the run says nothing about the peer.
    pub fn nothing_judged(&self) -> bool {
        self.passed + self.expected + self.lax + self.failed + self.errors == 0
    }
}

impl Run<'_> {
    pub fn totals(&self) -> Totals {
        let mut t = Totals { strict: self.strict, ..Totals::default() };
        for c in self.checks {
            match c.judged.status {
                Status::Pass => t.passed += 1,
                Status::ExpectedDivergence => t.expected += 1,
                Status::PassLax => t.lax += 1,
                Status::Fail | Status::UnexpectedPass => t.failed += 1,
                Status::Unsupported => t.unsupported += 1,
                Status::Skipped => t.skipped += 1,
                Status::Inconclusive => t.inconclusive += 1,
                Status::Error => t.errors += 1,
            }
        }
        t.not_run = self.checks.iter().filter(|c| c.result.peer.down_after.is_some()).count();
        t
    }
}

/// The closing line: `N passed, N failed, N skipped` (the same words in every locale and
/// colour setting, so CI can read it), then each other status that occurred, counted apart:
/// `, N expected divergences, N pass-lax, N unsupported, N inconclusive, N harness errors`.
pub fn closing_line(t: Totals) -> String {
    let mut line = format!("{} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped);
    let others = [
        (t.expected, "expected divergence", "expected divergences"),
        (t.lax, "pass-lax", "pass-lax"),
        (t.unsupported, "unsupported", "unsupported"),
        (t.inconclusive, "inconclusive", "inconclusive"),
        (t.errors, "harness error", "harness errors"),
    ];
    for (n, one, many) in others.into_iter().filter(|(n, _, _)| *n > 0) {
        line.push_str(&format!(", {}", crate::output::plural(n, one, many)));
    }
    line
}

/// The recap that ends every run's text (also under `--quiet`), before the closing line: the
/// IDs that failed, broke, or diverged as the profile expects, one line per status that
/// occurred (`failed: rfc8166/4.5/short-message-discarded, ...`), so a CI log's last lines
/// name them without scrolling.
pub fn recap(run: &Run<'_>) -> Vec<String> {
    let groups = [
        (Status::Fail, "failed"),
        (Status::UnexpectedPass, "unexpected pass (the profile lists a divergence)"),
        (Status::Error, "harness error"),
        (Status::ExpectedDivergence, "expected divergence"),
    ];
    let mut lines = Vec::new();
    for (status, label) in groups {
        let ids: Vec<&str> =
            run.checks.iter().filter(|c| c.judged.status == status).map(|c| c.result.check.id).collect();
        if !ids.is_empty() {
            lines.push(format!("{label}: {}", ids.join(", ")));
        }
    }
    if run.strict {
        let ids: Vec<&str> =
            run.checks.iter().filter(|c| c.judged.status == Status::Inconclusive).map(|c| c.result.check.id).collect();
        if !ids.is_empty() {
            lines.push(format!("inconclusive (fails under --strict): {}", ids.join(", ")));
        }
    }
    lines
}

/// The header's account of the profile the run is judged against: ` against the profile
/// NAME (PATH)`, or nothing without one.
pub fn profile_clause(name: Option<&str>, path: Option<&Path>) -> String {
    match (name, path) {
        (Some(n), Some(p)) => format!(", judged against the profile {n} ({})", p.display()),
        (Some(n), None) => format!(", judged against the profile {n}"),
        _ => String::new(),
    }
}

/// The line that says a finished run judged nothing (see [`Totals::nothing_judged`]).
pub fn nothing_judged_line(t: Totals) -> String {
    if t.inconclusive > 0 {
        "nothing was judged: every check was skipped, unsupported or inconclusive".into()
    } else {
        "nothing was judged: every check was skipped or unsupported".into()
    }
}

/// Where to write the machine-readable reports.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Outputs {
    /// Write the JSON report here (schema rpcrdma-harness/report/v1); `-` writes it to standard
    /// output, and the text then goes to standard error.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here; `-` writes it to standard output, and the text then goes
    /// to standard error.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write each check's conversation as a RoCEv2 pcap into this directory (created if needed).
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Write KCIDB I/O JSON here (KernelCI's results database, schema v5.3): the peer version's
    /// checkout and build, a test per check; `-` writes it to standard output.
    #[arg(long, value_name = "FILE")]
    pub kcidb: Option<PathBuf>,
    /// The KCIDB origin (your CI's name in KCIDB).
    #[arg(long, value_name = "ORIGIN", default_value = kcidb::DEFAULT_ORIGIN, value_parser = kcidb::origin)]
    pub kcidb_origin: String,
}

/// Where one report goes, opened before the run.
#[derive(Debug)]
pub enum Sink {
    Stdout,
    File { option: &'static str, path: PathBuf, file: std::fs::File },
}

/// The report destinations, each checked (and opened) before the run starts, so a bad path
/// costs nothing but an error message.
#[derive(Debug, Default)]
pub struct Prepared {
    pub json: Option<Sink>,
    pub junit: Option<Sink>,
    pub pcap: Option<PathBuf>,
    /// The KCIDB file and origin.
    pub kcidb: Option<(Sink, String)>,
}

/// Whether two paths name the same file: the same canonical path, the parent directories
/// resolved for a file that does not exist yet.
fn same_file(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
        })
    };
    a == b || canonical(a).is_some_and(|c| Some(c) == canonical(b))
}

fn is_dash(p: &Path) -> bool {
    p.as_os_str() == "-"
}

fn open_sink(option: &'static str, path: &Path) -> Result<Sink, String> {
    if is_dash(path) {
        return Ok(Sink::Stdout);
    }
    if path.is_dir() {
        return Err(format!("{option} {}: is a directory", path.display()));
    }
    // Truncated now: a run that is aborted (a second signal) leaves an empty file, never a
    // stale report from an earlier run that could pass for this one's.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("{option} {}: {e}", path.display()))?;
    Ok(Sink::File { option, path: path.to_path_buf(), file })
}

impl Outputs {
    /// Whether a report takes standard output (`--json -` or `--junit -`).
    pub fn report_on_stdout(&self) -> bool {
        self.json.as_deref().is_some_and(is_dash)
            || self.junit.as_deref().is_some_and(is_dash)
            || self.kcidb.as_deref().is_some_and(is_dash)
    }

    /// Checks every destination and opens it; an error names the option and the path.
    pub fn prepare(&self) -> Result<Prepared, String> {
        if self.json.as_deref().is_some_and(is_dash) && self.junit.as_deref().is_some_and(is_dash) {
            return Err("--json - and --junit -: only one report can go to standard output".into());
        }
        if let (Some(j), Some(x)) = (&self.json, &self.junit) {
            // The same regular file (or a new one) twice, however spelt (`a.json`,
            // `./a.json`, a link to it); a device such as /dev/null is fine.
            let device = std::fs::metadata(j).is_ok_and(|m| !m.is_file());
            if same_file(j, x) && !device {
                return Err(format!("--json and --junit both name {}: one would overwrite the other", j.display()));
            }
        }
        if let Some(path) = &self.kcidb {
            // Checked before any report file is opened (and truncated).
            let device = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
            for (option, other) in [("--json", &self.json), ("--junit", &self.junit)] {
                match other.as_deref() {
                    Some(o) if is_dash(o) && is_dash(path) => {
                        return Err(format!("{option} - and --kcidb -: only one report can go to standard output"))
                    }
                    Some(o) if !is_dash(path) && !device && same_file(o, path) => {
                        return Err(format!(
                            "{option} and --kcidb both name {}: one would overwrite the other",
                            path.display()
                        ))
                    }
                    _ => {}
                }
            }
        }
        let mut p = Prepared::default();
        if let Some(path) = &self.pcap {
            if is_dash(path) {
                return Err("--pcap -: give a directory (one capture file per check)".into());
            }
            if path.exists() && !path.is_dir() {
                return Err(format!("--pcap {}: exists and is not a directory", path.display()));
            }
            std::fs::create_dir_all(path).map_err(|e| format!("--pcap {}: {e}", path.display()))?;
            p.pcap = Some(path.clone());
        }
        if let Some(path) = &self.json {
            p.json = Some(open_sink("--json", path)?);
        }
        if let Some(path) = &self.junit {
            p.junit = Some(open_sink("--junit", path)?);
        }
        if let Some(path) = &self.kcidb {
            p.kcidb = Some((open_sink("--kcidb", path)?, self.kcidb_origin.clone()));
        }
        Ok(p)
    }
}

pub(crate) fn write_sink(sink: &mut Sink, bytes: &[u8]) -> bool {
    match sink {
        Sink::Stdout => {
            crate::output::stdout_str(&String::from_utf8_lossy(bytes));
            true
        }
        Sink::File { option, path, file } => {
            // Truncated when opened, and not written since.
            let r = file.write_all(bytes).and_then(|()| file.flush());
            match r {
                Ok(()) => true,
                Err(e) => {
                    crate::errln!("error: cannot write {option} {}: {e}", path.display());
                    false
                }
            }
        }
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> bool {
    match std::fs::write(path, bytes) {
        Ok(()) => true,
        Err(e) => {
            crate::errln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}

/// Writes every requested report; false (after saying why) when one could not be written.
/// The report of a run that ended before judging anything (a bad profile, an unreachable
/// peer, no RDMA device): every prepared destination says what went wrong and the exit
/// status, so CI never reads an earlier run's report as this one's.
pub fn write_failure(out: &mut Prepared, command: &'static str, code: i32, message: &str) -> bool {
    let run = Run {
        peer: String::new(),
        transport: String::new(),
        strict: false,
        expectations: None,
        interrupted: false,
        started_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        duration: std::time::Duration::ZERO,
        checks: &[],
        meta: Metadata { failure: Some((code, message.to_string())), ..Metadata::new(command) },
    };
    write_files(&run, out)
}

pub fn write_files(run: &Run<'_>, out: &mut Prepared) -> bool {
    let mut ok = true;
    if let Some(sink) = &mut out.json {
        let mut text = serde_json::to_string_pretty(&json::render(run)).expect("JSON values serialize");
        text.push('\n');
        ok &= write_sink(sink, text.as_bytes());
    }
    if let Some(sink) = &mut out.junit {
        ok &= write_sink(sink, junit::render(run).as_bytes());
    }
    if let Some((sink, origin)) = &mut out.kcidb {
        let data = kcidb::convert(&[json::render(run)], origin);
        let mut text = serde_json::to_string_pretty(&data).expect("JSON values serialize");
        text.push('\n');
        ok &= write_sink(sink, text.as_bytes());
    }
    if let Some(dir) = &out.pcap {
        for r in run.checks.iter().map(|c| &c.result) {
            if !r.transcript.is_empty() {
                ok &=
                    write_file(&dir.join(pcap::file_name(r.check.id)), &pcap::capture(&r.transcript, run.started_unix));
            }
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24, edge 1: known non-conformance is never a pass on the closing line, and each
    /// status is counted apart.
    #[test]
    fn the_closing_line_counts_each_status_apart() {
        let t = Totals { passed: 4, expected: 1, ..Totals::default() };
        assert_eq!(closing_line(t), "4 passed, 0 failed, 0 skipped, 1 expected divergence");
        let t = Totals {
            passed: 1,
            expected: 2,
            lax: 1,
            failed: 1,
            skipped: 3,
            unsupported: 2,
            inconclusive: 1,
            errors: 2,
            ..Totals::default()
        };
        assert_eq!(
            closing_line(t),
            "1 passed, 1 failed, 3 skipped, 2 expected divergences, 1 pass-lax, 2 unsupported, 1 inconclusive, 2 harness errors"
        );
        // An expected divergence or a lax pass judged the peer; unsupported alone did not.
        assert!(!Totals { expected: 1, ..Totals::default() }.nothing_judged());
        assert!(!Totals { lax: 1, ..Totals::default() }.nothing_judged());
        assert!(Totals { unsupported: 3, skipped: 1, ..Totals::default() }.nothing_judged());
    }

    #[test]
    fn the_header_names_the_profile() {
        assert_eq!(profile_clause(None, None), "");
        let p = Path::new("conformance/profiles/linux-6.12-debian13.json");
        assert_eq!(
            profile_clause(Some("linux-6.12"), Some(p)),
            ", judged against the profile linux-6.12 (conformance/profiles/linux-6.12-debian13.json)"
        );
    }
}
