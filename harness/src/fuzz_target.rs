//! The fuzz target (`fuzz`, `replay`): the embedded reference responder or a peer over verbs,
//! restarted by a command, its logs and process watched; and what `fuzz` and `serve --fuzz`
//! share (seeds, finding file names).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_conformance::fuzz::resources::{self, Sample};
use rpcrdma_conformance::fuzz::{Embedded, Target};
use rpcrdma_peers::responder::Faults;
use rpcrdma_peers::transport::Connector;

use crate::exit::{usage, HarnessError};
use crate::kernel_log::PolledLog;

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
    /// Seconds the restart command may take before it is killed and the restart is called
    /// failed (the peer is then reported down and the session ends); 120 by default.
    #[arg(long, value_name = "SECS", requires = "restart_command")]
    pub restart_timeout: Option<f64>,
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
    /// `--restart-timeout`.
    restart_limit: Duration,
}

/// Runs the restart command, killed past `limit`: Err says how it failed.
fn run_restart(cmd: &str, limit: Duration) -> Result<(), String> {
    let r = crate::peer_health::run_command(cmd, limit, false);
    if r.succeeded() {
        Ok(())
    } else {
        eprintln!("warning: the restart command failed ({}): {cmd}", r.status);
        Err(format!("the restart command failed ({}): {cmd}", r.status))
    }
}

impl Target for Remote {
    fn connector(&mut self) -> &mut dyn Connector {
        self.connector.as_mut()
    }
    fn restart(&mut self) -> bool {
        self.restart_within(None).is_ok()
    }
    fn restart_within(&mut self, limit: Option<Duration>) -> Result<(), String> {
        match &self.restart_command {
            Some(cmd) => run_restart(cmd, limit.map_or(self.restart_limit, |l| l.min(self.restart_limit))),
            None => Err("no --restart-command".into()),
        }
    }
    fn restart_bound(&self) -> Option<Duration> {
        self.restart_command.as_ref().map(|_| self.restart_limit)
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
    kernel: Option<PolledLog>,
    peer: Option<PolledLog>,
    pid_file: Option<PathBuf>,
}

/// The pause a log is given to take more lines ([`Target::settle_logs`], and between reads
/// of a report still being written).
const SETTLE: Duration = Duration::from_millis(10);

/// The lines `log` holds now; when there are any, read on after pauses until one brings
/// nothing more (at most a second: a flood is cut there, its rest read with the next case).
fn settled(log: &mut Option<PolledLog>) -> Vec<String> {
    let Some(log) = log else { return Vec::new() };
    let mut lines = log.drain_now();
    let mut last = lines.len();
    for _ in 0..100 {
        if last == 0 {
            break;
        }
        std::thread::sleep(SETTLE);
        let more = log.drain_now();
        last = more.len();
        lines.extend(more);
    }
    lines
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
    fn restart_within(&mut self, limit: Option<Duration>) -> Result<(), String> {
        self.inner.restart_within(limit)
    }
    fn restart_bound(&self) -> Option<Duration> {
        self.inner.restart_bound()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn kernel_log(&mut self) -> Vec<String> {
        settled(&mut self.kernel)
    }
    fn peer_log(&mut self) -> Vec<String> {
        settled(&mut self.peer)
    }
    fn settle_logs(&mut self) {
        if self.kernel.is_some() || self.peer.is_some() {
            std::thread::sleep(SETTLE);
        }
    }
    fn resources(&mut self) -> Option<Sample> {
        sample(self.pid_file.as_deref()?)
    }
    fn note(&mut self, what: &str) {
        crate::textln!("{what}");
    }
}

/// The target `--peer`, `--fault` and the watch options name (the embedded responder reading
/// the wire under `profile`); an error says why not.
pub fn target(
    peer: Option<&str>,
    faults: &[String],
    watch: &WatchArgs,
    profile: rpcrdma_codec::Profile,
) -> Result<Box<dyn Target>, HarnessError> {
    let restart_limit = match watch.restart_timeout {
        Some(s) => seconds(s, "--restart-timeout")?,
        None => crate::peer_health::RESTART_LIMIT,
    };
    let inner = bare_target(peer, faults, watch.restart_command.as_deref(), restart_limit, profile)?;
    if watch.kernel_log.is_none() && watch.peer_log.is_none() && watch.peer_pid_file.is_none() {
        return Ok(inner);
    }
    let open = |path: &Option<PathBuf>, option: &str, kmsg: bool| {
        path.as_ref()
            .map(|p| {
                let log = if kmsg { PolledLog::open(p) } else { PolledLog::open_plain(p) };
                log.map_err(|e| usage(format!("{option} {}: {e}", p.display())))
            })
            .transpose()
    };
    let kernel = open(&watch.kernel_log, "--kernel-log", true)?;
    let peer = open(&watch.peer_log, "--peer-log", false)?;
    if let Some(p) = &watch.peer_pid_file {
        // The peer must be there to be watched; a pid file that names no process is a mistake.
        if sample(p).is_none() {
            return Err(usage(format!(
                "--peer-pid-file {}: no readable process id in it, or no /proc/PID/status and /proc/meminfo for it",
                p.display()
            )));
        }
    }
    Ok(Box::new(Watched { inner, kernel, peer, pid_file: watch.peer_pid_file.clone() }))
}

fn bare_target(
    peer: Option<&str>,
    faults: &[String],
    restart: Option<&str>,
    restart_limit: Duration,
    profile: rpcrdma_codec::Profile,
) -> Result<Box<dyn Target>, HarnessError> {
    // With --fault (testing the fuzzer itself), the embedded responder may stand for a peer
    // restarted by a command: each restart runs it, and a fresh responder only when it exits 0.
    if peer.is_none() && restart.is_some() && faults.is_empty() {
        return Err(usage("--restart-command applies to --peer only (the embedded responder restarts itself)"));
    }
    let mut f = Faults::default();
    for name in faults {
        if !f.set(name) {
            return Err(usage(format!("unknown fault {name:?}; known: {}", Faults::NAMES.join(", "))));
        }
    }
    match peer {
        None => {
            let embedded = Embedded::with_profile(f, profile);
            Ok(match restart {
                Some(cmd) => Box::new(Commanded { embedded, command: cmd.to_string(), limit: restart_limit }),
                None => Box::new(embedded),
            })
        }
        Some(_) if !faults.is_empty() => Err(usage("--fault applies to the embedded responder only")),
        Some(addr) => Ok(Box::new(Remote {
            addr: addr.to_string(),
            connector: crate::peer::connector(addr)?,
            restart_command: restart.map(str::to_string),
            restart_limit,
        })),
    }
}

/// The embedded responder restarted by a command, as a remote peer is (`--fault` with
/// `--restart-command`, for testing the fuzzer itself): a costly restart, a fresh responder
/// only when the command exits 0 within its bound, so that a crash-like fault leaves it down
/// when the command fails.
struct Commanded {
    embedded: Embedded,
    command: String,
    limit: Duration,
}

impl Target for Commanded {
    fn connector(&mut self) -> &mut dyn Connector {
        self.embedded.connector()
    }
    fn restart(&mut self) -> bool {
        self.restart_within(None).is_ok()
    }
    fn restart_within(&mut self, limit: Option<Duration>) -> Result<(), String> {
        run_restart(&self.command, limit.map_or(self.limit, |l| l.min(self.limit)))?;
        self.embedded.restart();
        Ok(())
    }
    fn restart_bound(&self) -> Option<Duration> {
        Some(self.limit)
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn cheap_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        self.embedded.describe()
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
pub fn seconds(v: f64, option: &str) -> Result<Duration, HarnessError> {
    if !(v > 0.0 && v.is_finite()) {
        Err(usage(format!("{option} {v}: give a positive, finite number of seconds")))
    } else if v > MAX_FUZZ_SECS {
        Err(usage(format!("{option} {v:e}: at most {MAX_FUZZ_SECS} seconds (a year)")))
    } else {
        Ok(Duration::from_secs_f64(v))
    }
}

/// `s` as part of a file name: letters, digits and `-` kept, anything else `_`.
pub fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// A finding file's name: `NNN-KIND[-DETAIL].json`, the number 1-based, the detail made
/// [`file_safe`] (none when empty).
pub fn finding_name(number: usize, kind: &str, detail: &str) -> String {
    let detail = file_safe(detail);
    let tail = if detail.is_empty() { String::new() } else { format!("-{detail}") };
    format!("{number:03}-{kind}{tail}.json")
}

/// Writes a finding file (pretty JSON and a newline) as `dir/name`: every reproducer and
/// finding `fuzz`, `fuzz --reverse`, `serve --fuzz` and `fuzz-panic` save.
pub fn save_finding(dir: &Path, name: &str, v: &serde_json::Value) -> Result<PathBuf, String> {
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(v).expect("JSON values serialize");
    std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// `--seed` as given, or one from the clock.
pub fn seed_or_clock(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::profile::{PrivateDataLocate, Profile};
    use rpcrdma_conformance::engine::{run_check, Outcome, RunOptions};

    /// The embedded target (`fuzz`, `replay`) reads the wire under the run's profile: told the
    /// format identifier sits at offset 0 only (`pd-offset-zero`), it ignores our private data
    /// at an offset, which RFC 8797 5.2's search would find (judged under the default profile,
    /// where that search is the rule; under `pd-offset-zero` the judge calls it unsupported).
    #[test]
    fn the_embedded_target_reads_private_data_under_the_profile() {
        let check = rpcrdma_conformance::catalogue::all()
            .into_iter()
            .find(|c| c.info.id == "rfc8797/5.2/private-data-at-offset")
            .expect("the check");
        let outcome = |profile: Profile| {
            let mut t = target(None, &[], &WatchArgs::default(), profile).expect("the embedded target");
            run_check(check, t.connector(), &RunOptions::default()).outcome
        };
        assert_eq!(outcome(Profile::default()), Outcome::Pass);
        let offset_zero = Profile { private_data_locate: PrivateDataLocate::OffsetZero, ..Profile::default() };
        assert_eq!(outcome(offset_zero), Outcome::Fail);
    }
}
