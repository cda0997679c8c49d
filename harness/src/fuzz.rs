//! `rpcrdma-harness fuzz`: the judge's structure-aware fuzzer against the embedded reference
//! responder (over the emulated fabric, restarted after each crash) or a peer over verbs;
//! reproducers into `--out`, a text report and `--json`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::expectations::KnownFinding;
use rpcrdma_conformance::fuzz::resources::{self, Sample};
use rpcrdma_conformance::fuzz::{self, Config, Embedded, Finding, Report, Target, Timing};
use rpcrdma_peers::responder::Faults;
use rpcrdma_peers::transport::Connector;
use serde_json::json;

use crate::run::{EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};

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
    /// Make the embedded responder misbehave (for testing the fuzzer itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    pub fault: Vec<String>,
}

/// Watching and reviving the peer (`fuzz` and `replay`).
#[derive(Debug, Clone, Default, Args)]
pub struct WatchArgs {
    /// Follow the peer's kernel log (`/dev/kmsg` when the harness runs on the peer's machine):
    /// a WARN, BUG, oops, KASAN or hung-task report during a case is a finding, with the trace.
    #[arg(long, value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
    /// A shell command that restarts the peer (e.g. its NFS server) after a crash or hang and
    /// between minimisation trials; it must exit 0 once the peer is up again. With `--peer`.
    #[arg(long, value_name = "CMD")]
    pub restart_command: Option<String>,
    /// The peer's own log (a user-space server's, on this machine): a backtrace its crash
    /// handler writes there during a case makes the crash's finding name its site (the top
    /// frames: `crash: f < g < h`), so each known crash site is listed in a profile and a new
    /// one is a new finding. NFS-Ganesha's registered total (`total_rdma_reg_mem`) is read
    /// from it too.
    #[arg(long, value_name = "FILE")]
    pub peer_log: Option<PathBuf>,
    /// A file holding the peer process's id (re-read after each case, so a restarted peer is
    /// followed): after each case its memory (/proc/PID/status: VmRSS, VmLck, VmPin) and the
    /// machine's (/proc/meminfo) are read; memory kept for every closed connection is a
    /// `resource-leak` finding with the numbers, and the peer is restarted before the machine
    /// runs out (`fuzz --peer-memory-floor`).
    #[arg(long, value_name = "FILE")]
    pub peer_pid_file: Option<PathBuf>,
}

/// A peer over verbs, restarted by `--restart-command` when one is given.
pub struct Remote {
    addr: String,
    connector: Box<dyn Connector>,
    restart_command: Option<String>,
}

impl Target for Remote {
    fn connector(&mut self) -> &mut dyn Connector {
        self.connector.as_mut()
    }
    fn restart(&mut self) -> bool {
        match &self.restart_command {
            Some(cmd) => {
                let r = crate::peer_health::run_command(cmd, crate::peer_health::RESTART_LIMIT, false);
                if !r.succeeded() {
                    eprintln!("warning: the restart command failed ({}): {cmd}", r.status);
                }
                r.succeeded()
            }
            None => false,
        }
    }
    fn can_restart(&self) -> bool {
        self.restart_command.is_some()
    }
    fn cheap_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        self.addr.clone()
    }
}

/// A target whose logs and process are watched.
struct Watched {
    inner: Box<dyn Target>,
    kernel: Option<crate::kernel_log::KernelLog>,
    peer: Option<crate::kernel_log::KernelLog>,
    pid_file: Option<PathBuf>,
}

/// The peer process named by `pid_file` and its machine, from `/proc`; None while the file
/// or the process is missing (a peer being restarted).
pub fn sample(pid_file: &Path) -> Option<Sample> {
    let pid: u32 = std::fs::read_to_string(pid_file).ok()?.trim().parse().ok()?;
    let (rss_kib, locked_kib, pinned_kib) =
        resources::parse_status(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)?;
    let (available_kib, total_kib) = resources::parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)?;
    Some(Sample { pid, rss_kib, locked_kib, pinned_kib, available_kib, total_kib, registered: None })
}

impl Target for Watched {
    fn connector(&mut self) -> &mut dyn Connector {
        self.inner.connector()
    }
    fn restart(&mut self) -> bool {
        self.inner.restart()
    }
    fn can_restart(&self) -> bool {
        self.inner.can_restart()
    }
    fn cheap_restart(&self) -> bool {
        self.inner.cheap_restart()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn kernel_log(&mut self) -> Vec<String> {
        self.kernel.as_ref().map(|l| l.drain()).unwrap_or_default()
    }
    fn peer_log(&mut self) -> Vec<String> {
        self.peer.as_ref().map(|l| l.drain()).unwrap_or_default()
    }
    fn resources(&mut self) -> Option<Sample> {
        sample(self.pid_file.as_deref()?)
    }
    fn note(&mut self, what: &str) {
        crate::textln!("{what}");
    }
}

/// The target `--peer`, `--fault` and the watch options name; Err(exit code) after saying
/// why not.
pub fn target(peer: Option<&str>, faults: &[String], watch: &WatchArgs) -> Result<Box<dyn Target>, i32> {
    let inner = bare_target(peer, faults, watch.restart_command.as_deref())?;
    if watch.kernel_log.is_none() && watch.peer_log.is_none() && watch.peer_pid_file.is_none() {
        return Ok(inner);
    }
    let open = |path: &Option<PathBuf>, option: &str, kmsg: bool| {
        path.as_ref()
            .map(|p| {
                let log = if kmsg {
                    crate::kernel_log::KernelLog::follow(p)
                } else {
                    crate::kernel_log::KernelLog::follow_plain(p)
                };
                log.map_err(|e| {
                    eprintln!("error: {option} {}: {e}", p.display());
                    EXIT_USAGE
                })
            })
            .transpose()
    };
    let kernel = open(&watch.kernel_log, "--kernel-log", true)?;
    let peer = open(&watch.peer_log, "--peer-log", false)?;
    if let Some(p) = &watch.peer_pid_file {
        // The peer must be there to be watched; a pid file that names no process is a mistake.
        if sample(p).is_none() {
            eprintln!(
                "error: --peer-pid-file {}: no readable process id in it, or no /proc/PID/status and /proc/meminfo for it",
                p.display()
            );
            return Err(EXIT_USAGE);
        }
    }
    Ok(Box::new(Watched { inner, kernel, peer, pid_file: watch.peer_pid_file.clone() }))
}

fn bare_target(peer: Option<&str>, faults: &[String], restart: Option<&str>) -> Result<Box<dyn Target>, i32> {
    if peer.is_none() && restart.is_some() {
        eprintln!("error: --restart-command applies to --peer only (the embedded responder restarts itself)");
        return Err(EXIT_USAGE);
    }
    let mut f = Faults::default();
    for name in faults {
        if !f.set(name) {
            eprintln!("error: unknown fault {name:?}; known: {}", Faults::NAMES.join(", "));
            return Err(EXIT_USAGE);
        }
    }
    match peer {
        None => Ok(Box::new(Embedded::new(f))),
        Some(_) if !faults.is_empty() => {
            eprintln!("error: --fault applies to the embedded responder only");
            Err(EXIT_USAGE)
        }
        Some(addr) => match crate::peer::connector(addr) {
            Ok(c) => Ok(Box::new(Remote {
                addr: addr.to_string(),
                connector: c,
                restart_command: restart.map(str::to_string),
            })),
            Err(crate::peer::PeerError::Usage(e)) | Err(crate::peer::PeerError::Environment(e)) => {
                eprintln!("error: {e}");
                Err(EXIT_USAGE)
            }
        },
    }
}

/// `--timeout` as given, or its default: 0.3 s for the embedded responder (it answers in
/// microseconds; a hang costs five of these per trial), 1 s for a peer.
pub fn default_timeout(given: Option<f64>, peer: bool) -> f64 {
    given.unwrap_or(if peer { 1.0 } else { 0.3 })
}

/// The longest `--seconds` or `--timeout`: a year (a fuzz session is bounded by its budget;
/// anything longer is a typo, and `Duration` would overflow past about 1.8e19 s).
pub const MAX_FUZZ_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// A positive, finite number of seconds up to [`MAX_FUZZ_SECS`], or a usage error naming the
/// option and the value (as `run` refuses its durations: `crate::args`).
pub fn seconds(v: f64, option: &str) -> Result<Duration, i32> {
    if !(v > 0.0 && v.is_finite()) {
        crate::errln!("error: {option} {v}: give a positive, finite number of seconds");
        Err(EXIT_USAGE)
    } else if v > MAX_FUZZ_SECS {
        crate::errln!("error: {option} {v:e}: at most {MAX_FUZZ_SECS} seconds (a year)");
        Err(EXIT_USAGE)
    } else {
        Ok(Duration::from_secs_f64(v))
    }
}

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

/// `s` as part of a file name: letters, digits and `-` kept, anything else `_`.
pub(crate) fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// `--seed` as given, or one from the clock.
pub(crate) fn seed_or_clock(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64))
}

fn file_name(f: &Finding, n: usize) -> String {
    let k = &f.reproducer.kind;
    let detail = file_safe(&k.detail);
    let tail = if detail.is_empty() { String::new() } else { format!("-{detail}") };
    format!("{:03}-{}{tail}.json", n + 1, k.class.name())
}

fn save(dir: &Path, f: &Finding, n: usize) -> Result<PathBuf, String> {
    let path = dir.join(file_name(f, n));
    let text = serde_json::to_string_pretty(&f.reproducer.to_json()).expect("JSON values serialize");
    std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
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
    if !r.minimising.is_zero() {
        s +=
            &format!("(of which {:.1} s minimising findings, not counted in messages/s)\n", r.minimising.as_secs_f64());
    }
    let outcomes: Vec<String> = r.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s += &format!("liveness after each case: {}\n", outcomes.join(", "));
    let classes: Vec<String> = r.classes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s += &format!("cases per finding class: {}\n", classes.join(", "));
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
        if let Some(Some(p)) = files.get(i) {
            s += &format!("    reproducer: {}\n", p.display());
        }
        if let Some(Some(reason)) = known.get(i) {
            s += &format!("    known (the profile lists it): {reason}\n");
        }
    }
    s
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
        "seconds": r.elapsed.as_secs_f64(),
        "minimising_seconds": r.minimising.as_secs_f64(),
        "cases": r.cases,
        "messages": r.messages,
        "messages_per_second": r.messages_per_second(),
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
            "known": known.get(i).cloned().flatten(),
            "reproducer": files.get(i).cloned().flatten().map(|p| p.display().to_string()),
        })).collect::<Vec<_>>(),
    })
}

pub fn run(args: FuzzArgs) -> i32 {
    if let Some(path) = &args.json {
        if let Err(e) = check_json_path(path) {
            crate::errln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    // `--json -`: the report takes standard output, and the text goes to standard error.
    let json_to_stdout = args.json.as_deref().is_some_and(is_dash);
    crate::output::text_to_stderr(json_to_stdout);
    let duration = match seconds(args.seconds, "--seconds") {
        Ok(d) => d,
        Err(code) => return code,
    };
    let reply = match seconds(default_timeout(args.timeout, args.peer.is_some()), "--timeout") {
        Ok(d) => d,
        Err(code) => return code,
    };
    let (expected, peer_version) = match crate::run::load_profile(args.expect.as_deref()) {
        Ok(p) => {
            let v = crate::peer_version::PeerVersion::new(args.version.peer_version.as_deref(), p.as_ref());
            let line = v.line();
            (p.map(|p| p.findings).unwrap_or_default(), (v, line))
        }
        Err(code) => return code,
    };
    let mut target = match target(args.peer.as_deref(), &args.fault, &args.watch) {
        Ok(t) => t,
        Err(code) => return code,
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: {}: {e}", args.out.display());
        return EXIT_USAGE;
    }
    let journal = match &args.journal {
        None => None,
        Some(path) => match fuzz::Journal::open(path) {
            Ok(j) => Some(std::sync::Arc::new(j)),
            Err(e) => {
                eprintln!("error: --journal {}: {e}", path.display());
                return EXIT_USAGE;
            }
        },
    };
    let seed = seed_or_clock(args.seed);
    let config = Config {
        seed,
        duration: Some(duration),
        max_messages: args.max_messages,
        options: RunOptions { timeout: reply.max(Duration::from_secs(2)), ..RunOptions::default() },
        timing: Timing { reply },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        skip_cases: args.skip_cases,
        feedback: !args.no_feedback,
        journal: journal.clone(),
        memory_floor_percent: args.peer_memory_floor,
        ..Config::default()
    };
    let skipping =
        if args.skip_cases > 0 { format!(", skipping its first {} cases", args.skip_cases) } else { String::new() };
    crate::textln!(
        "rpcrdma-harness {} fuzzing {} (seed {seed}{skipping})",
        env!("CARGO_PKG_VERSION"),
        target.describe()
    );
    let files: RefCell<Vec<Option<PathBuf>>> = RefCell::new(Vec::new());
    let mut write_failed = false;
    let out = args.out.clone();
    // The JSON report as the run stands, rewritten at most every second and after each
    // finding (ended "not ended ..."): a run killed outright (the OOM killer's SIGKILL) still
    // leaves its report, saying it did not end.
    let json_path = args.json.clone();
    let version_fields = peer_version.0.json_fields();
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
        eprintln!("error: cannot reach {}", report.peer);
        return EXIT_UNREACHABLE;
    }
    let known = known_reasons(&report, &expected);
    if let Some(line) = &peer_version.1 {
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
    if let Some(code) = crate::signals::exit_code() {
        return code;
    }
    if write_failed {
        EXIT_USAGE
    } else if known.iter().all(Option::is_some) {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
