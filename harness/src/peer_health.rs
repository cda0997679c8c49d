//! `run`'s watch on the peer: the options that restart it after it went down during a check
//! (`--restart-command`, `--restart-wait`) and follow its logs (`--peer-log`,
//! `--kernel-log`), and the [`Peer`] the engine's watch ([`rpcrdma_conformance::engine::health`])
//! probes, restarts and reads them through. Also the bounded shell command runner `fuzz`
//! shares.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_conformance::engine::health::{CommandRun, Peer};
use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_peers::transport::Connector;

use crate::kernel_log::KernelLog;

/// How long a restart command may take before it is killed (as for `fuzz`).
pub const RESTART_LIMIT: Duration = Duration::from_secs(120);
/// The most of a restart command's output kept (its tail: a backtrace comes last).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// The most lines of each log kept with an event (the last ones).
pub const MAX_LOG_LINES: usize = 400;

/// Watching and reviving the peer during `run`.
#[derive(Debug, Clone, Args)]
pub struct RunWatchArgs {
    /// A shell command (`sh -c`) that restarts the peer after it went down during a check (a
    /// new connection refused or its NULL unanswered). Its standard output and error (the
    /// server's log tail, a gdb backtrace of its core, ...) are attached to that check's result
    /// (the last 64 KiB); the run then waits for the peer to answer and goes on. Without it, a
    /// peer that went down leaves the remaining checks not run. (Without --peer, a command
    /// that exits 0 brings up a fresh embedded responder: for testing the harness.)
    #[arg(long, value_name = "CMD")]
    pub restart_command: Option<String>,
    /// Seconds to wait, after the restart command, for the peer to accept a connection and
    /// answer a NULL call (more than 0, at most 3600).
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = crate::args::timeout)]
    pub restart_wait: Duration,
    /// The peer's server log: the lines appended to it while a check ran are attached to the
    /// check after which the peer went down.
    #[arg(long, value_name = "FILE")]
    pub peer_log: Option<PathBuf>,
    /// The peer's kernel log (`/dev/kmsg` when the harness runs on the peer's machine), attached
    /// as `--peer-log` is.
    #[arg(long, value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
}

/// A brand-new peer, for the embedded reference responder (a restart command cannot reach it).
pub type Fresh = Box<dyn FnMut() -> Box<dyn Connector>>;

/// The peer of a `run`: its connector, its followed logs and its restart.
pub struct Watched {
    connector: Box<dyn Connector>,
    fresh: Option<Fresh>,
    restart_command: Option<String>,
    peer_log: Option<KernelLog>,
    kernel_log: Option<KernelLog>,
}

impl Watched {
    /// The peer behind `connector`, watched as `args` say. `fresh` brings up the embedded
    /// responder anew: for it, the restart command is run (its output attached, as for a
    /// peer) and, when it exits 0, a fresh responder replaces the one that went down. Err
    /// names the log that cannot be opened.
    pub fn new(connector: Box<dyn Connector>, fresh: Option<Fresh>, args: &RunWatchArgs) -> Result<Watched, String> {
        let open = |path: &Option<PathBuf>, option: &str, kmsg: bool| -> Result<Option<KernelLog>, String> {
            path.as_ref()
                .map(|p| {
                    let log = if kmsg { KernelLog::follow(p) } else { KernelLog::follow_plain(p) };
                    log.map_err(|e| format!("{option} {}: {e}", p.display()))
                })
                .transpose()
        };
        Ok(Watched {
            connector,
            fresh,
            restart_command: args.restart_command.clone(),
            peer_log: open(&args.peer_log, "--peer-log", false)?,
            kernel_log: open(&args.kernel_log, "--kernel-log", true)?,
        })
    }
}

/// The last [`MAX_LOG_LINES`] lines a log gained.
fn drained(log: &Option<KernelLog>) -> Vec<String> {
    let Some(log) = log else { return Vec::new() };
    let mut lines = log.drain();
    let cut = lines.len().saturating_sub(MAX_LOG_LINES);
    lines.drain(..cut);
    lines
}

impl Peer for Watched {
    fn connector(&mut self) -> &mut dyn Connector {
        self.connector.as_mut()
    }
    fn log(&mut self) -> Vec<String> {
        drained(&self.peer_log)
    }
    fn kernel_log(&mut self) -> Vec<String> {
        drained(&self.kernel_log)
    }
    fn restart(&mut self) -> Option<CommandRun> {
        let run = run_command(self.restart_command.as_deref()?, RESTART_LIMIT, true);
        match &mut self.fresh {
            Some(fresh) if run.succeeded() => self.connector = fresh(),
            _ => {}
        }
        Some(run)
    }
}

/// How long a command whose group was passed the harness's SIGINT or SIGTERM may take to
/// finish (a trap cleaning up) before what is left of its group is killed.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// Sends `signal` (a name `kill` takes: INT, TERM, KILL) to process group `group`, by the
/// shell's kill (no unsafe here).
fn signal_group(group: u32, signal: &str) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -{signal} -{group} 2>/dev/null"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Runs `sh -c cmd` with no standard input, killed past `limit`. With `capture`, its standard
/// output and error (merged, the last [`MAX_OUTPUT`] bytes) are in the result; else they go
/// where ours go. A group of its own does not get the terminal's SIGINT: when the harness is
/// interrupted (SIGINT or SIGTERM, [`crate::signals`]) while it runs, its group is passed that
/// signal, given [`INTERRUPT_GRACE`] to finish, then what is left of it killed, and the result
/// says it was interrupted.
pub fn run_command(cmd: &str, limit: Duration, capture: bool) -> CommandRun {
    let mut c = Command::new("sh");
    if capture {
        c.arg("-c").arg(format!("exec 2>&1\n{cmd}")).stdout(Stdio::piped());
    } else {
        c.args(["-c", cmd]);
    }
    // A group of its own: past `limit` the processes it started die with it (a `sleep` left
    // behind would hold our output open, and the peer's machine busy).
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut done = CommandRun { command: cmd.to_string(), ..CommandRun::default() };
    let interrupted = || crate::signals::INTERRUPT.load(Ordering::SeqCst);
    if interrupted() {
        // The run is stopping: no restart begun now, to be cut at once.
        done.status = "not run: the harness was interrupted".into();
        return done;
    }
    let mut child = match c.stdin(Stdio::null()).spawn() {
        Ok(child) => child,
        Err(e) => {
            done.status = format!("cannot start sh: {e}");
            return done;
        }
    };
    let output = Arc::new(Mutex::new(Vec::new()));
    let read_all = Arc::new(AtomicBool::new(false));
    if let Some(mut out) = child.stdout.take() {
        let (sink, flag) = (Arc::clone(&output), Arc::clone(&read_all));
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n @ 1..) = out.read(&mut chunk) {
                let mut buf = sink.lock().unwrap_or_else(|e| e.into_inner());
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > 2 * MAX_OUTPUT {
                    let cut = buf.len() - MAX_OUTPUT;
                    buf.drain(..cut);
                }
            }
            flag.store(true, Ordering::SeqCst);
        });
    }
    let until = Instant::now() + limit;
    done.status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s.code().map_or_else(|| format!("killed: {s}"), |c| format!("exit {c}")),
            Ok(None) if interrupted() => {
                // The signal the harness got, to the whole group (the child not yet reaped);
                // after the grace, or once the child is gone, the rest of the group killed (a
                // background job of `sh -c` ignores SIGINT; a group with members left keeps
                // its number from reuse).
                let name = if crate::signals::received() == Some(libc::SIGTERM) { "TERM" } else { "INT" };
                signal_group(child.id(), name);
                let grace = Instant::now() + INTERRUPT_GRACE;
                while matches!(child.try_wait(), Ok(None)) && Instant::now() < grace {
                    std::thread::sleep(Duration::from_millis(20));
                }
                signal_group(child.id(), "KILL");
                let _ = child.kill();
                let _ = child.wait();
                break format!("interrupted: the harness got SIG{name}, passed to the command's process group");
            }
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                // Its group, the child not yet reaped.
                signal_group(child.id(), "KILL");
                let _ = child.kill();
                let _ = child.wait();
                break format!("killed after {} s", limit.as_secs_f64());
            }
            Err(e) => break e.to_string(),
        }
    };
    // A process the command left running may hold the output open: wait a moment, no more.
    let end = Instant::now() + Duration::from_secs(1);
    while capture && !read_all.load(Ordering::SeqCst) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let bytes = std::mem::take(&mut *output.lock().unwrap_or_else(|e| e.into_inner()));
    let cut = bytes.len().saturating_sub(MAX_OUTPUT);
    done.output = String::from_utf8_lossy(&bytes[cut..]).into_owned();
    if cut > 0 {
        done.output = format!("[the first {cut} bytes cut]\n{}", done.output);
    }
    done
}

/// The check after which the peer went down and stayed down, with how many checks were
/// therefore not run.
pub fn stayed_down<'a>(results: impl IntoIterator<Item = &'a CheckResult>) -> Option<(&'static str, usize)> {
    let not_run: Vec<&'static str> = results.into_iter().filter_map(|r| r.peer.down_after).collect();
    not_run.first().map(|id| (*id, not_run.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_bounded_and_its_output_merged_and_capped() {
        let r = run_command("echo out; echo err >&2; exit 3", Duration::from_secs(10), true);
        assert_eq!(r.status, "exit 3");
        assert_eq!(r.output, "out\nerr\n");
        let r = run_command("sleep 5", Duration::from_millis(200), true);
        assert_eq!(r.status, "killed after 0.2 s");
        let r = run_command("head -c 100000 /dev/zero | tr '\\0' x; echo; echo last", Duration::from_secs(10), true);
        assert_eq!(r.status, "exit 0");
        assert!(r.output.starts_with("[the first ") && r.output.ends_with("x\nlast\n"), "{}", &r.output[..60]);
        assert!(r.output.len() < MAX_OUTPUT + 40);
    }
}
