//! Whether the peer outlived a check. A check that saw the connection end, a deadline pass
//! without a reply, or a connect fail is followed by a probe: a new connection and a NULL
//! call. A peer that refuses it, drops it or never answers went down, and the check that just
//! ran is the one that brought it down (a server must not crash on any input: RFC 8166 4.5
//! has it report what it cannot process). The event is recorded on that check; the peer is
//! restarted when a restart is configured, and otherwise the remaining checks are not run
//! ([`super::run::run_watched`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{Connector, TransportError};

use crate::engine::ctx::{Ctx, Received};
use crate::engine::mismatch::{Mismatch, NoMessage};
use crate::engine::options::RunOptions;
use crate::engine::result::CheckResult;
pub use crate::engine::result::{CommandRun, DownKind, PeerDown, Restart};

/// What a probe of the peer found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// A new connection's NULL was answered.
    Answered,
    /// The peer is down: how, and what was seen.
    Down(DownKind, String),
}

/// The peer a watched run talks to: its connector, its logs, and how to restart it.
pub trait Peer {
    fn connector(&mut self) -> &mut dyn Connector;
    /// Lines the peer's log gained since the last call (none when it is not followed).
    fn log(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Lines the peer's kernel log gained since the last call.
    fn kernel_log(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Restarts the peer (runs the restart command); None when no restart is configured.
    fn restart(&mut self) -> Option<CommandRun>;
}

/// A bare connector: no logs, no restart.
impl Peer for &mut dyn Connector {
    fn connector(&mut self) -> &mut dyn Connector {
        &mut **self
    }
    fn restart(&mut self) -> Option<CommandRun> {
        None
    }
}

/// Probes over a new connection of `ctx`: connects and sends a NULL, waiting `wait` for its
/// reply (the fuzzer's liveness check after a quiet or lost connection, too).
pub fn probe(ctx: &mut Ctx<'_>, wait: Duration) -> Probe {
    match ctx.connect() {
        Ok(()) => {}
        Err(Mismatch::Connect(TransportError::Timeout)) => {
            return Probe::Down(DownKind::Wedged, "a new connection was not answered (connect timed out)".into())
        }
        Err(e) => return Probe::Down(DownKind::Crashed, format!("a new connection failed: {e}")),
    }
    let null = ctx.null();
    if let Err(e) = ctx.send(&null.msg()) {
        return Probe::Down(DownKind::Crashed, format!("a new connection was dropped: the NULL call's Send: {e}"));
    }
    let deadline = Instant::now() + wait;
    loop {
        match ctx.recv_until(deadline) {
            Received::Message(f) if f.v1().is_some_and(|h| h.xid == null.xid) => return Probe::Answered,
            Received::Message(_) => {}
            Received::Nothing(NoMessage::Silence) => {
                let s = wait.as_secs_f64();
                return Probe::Down(DownKind::Wedged, format!("a new connection's NULL call had no reply in {s} s"));
            }
            Received::Nothing(n) => {
                return Probe::Down(DownKind::Crashed, format!("a new connection's NULL call was not answered: {n}"))
            }
        }
    }
}

/// Probes `connector` on a context of its own, waiting twice the reply timeout for the NULL's
/// reply. A refused or dropped connection is tried again after growing pauses (about a
/// second in all): a peer's connection manager may still be tearing down the check's
/// connection, and a peer wrongly found down would cost the rest of the run.
pub fn probe_peer(connector: &mut dyn Connector, options: &RunOptions) -> Probe {
    let mut last = Probe::Answered;
    for pause in [100, 300, 600, 0] {
        let mut ctx = Ctx::new(connector, options.clone());
        last = probe(&mut ctx, options.timeout * 2);
        drop(ctx.finish());
        match last {
            Probe::Down(DownKind::Crashed, _) if pause > 0 => std::thread::sleep(Duration::from_millis(pause)),
            _ => break,
        }
    }
    last
}

/// Runs the restart and waits, at most `options.restart_wait` after it, until the peer
/// answers a new connection's NULL (or `interrupt` is set).
fn restart(peer: &mut dyn Peer, options: &RunOptions, interrupt: &AtomicBool) -> Option<Restart> {
    let started = Instant::now();
    let run = peer.restart()?;
    let until = Instant::now() + options.restart_wait;
    let back = loop {
        if probe_peer(peer.connector(), options) == Probe::Answered {
            break true;
        }
        if Instant::now() >= until || interrupt.load(Ordering::SeqCst) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200).min(until.saturating_duration_since(Instant::now())));
    };
    Some(Restart { run, back, waited: started.elapsed() })
}

/// After check `r`: probes the peer when the check saw a sign of trouble, and when it is
/// down records the event on `r` (with the logs) and restarts the peer if one can.
pub fn after_check(r: &mut CheckResult, peer: &mut dyn Peer, options: &RunOptions, interrupt: &AtomicBool) {
    if r.peer.sign.is_none() {
        return;
    }
    let Probe::Down(kind, detail) = probe_peer(peer.connector(), options) else { return };
    let log = peer.log();
    let kernel_log = peer.kernel_log();
    let restart = restart(peer, options, interrupt);
    r.peer.down = Some(PeerDown { kind, detail, log, kernel_log, restart });
}
