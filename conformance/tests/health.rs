//! The engine's watch on the peer's health: a crash-like fault of the embedded reference
//! responder (`crash-on-huge-segment-count`) is attributed to the check whose message
//! triggered it; without a restart the rest are not run, with one they run.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::health::{CommandRun, Peer};
use rpcrdma_conformance::engine::run_watched;
use rpcrdma_conformance::engine::{Check, DownKind, Outcome, RunOptions};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

const CRASHER: &str = "rfc8166/4.5.2/huge-segment-count";

struct Embedded {
    faults: Faults,
    connector: EmulatedConnector<Responder>,
    restartable: bool,
    restarts: usize,
}

impl Embedded {
    fn new(faults: Faults, restartable: bool) -> Self {
        let connector =
            EmulatedConnector::new(Responder::reference(Config { faults: faults.clone(), ..Config::default() }));
        Embedded { faults, connector, restartable, restarts: 0 }
    }
}

impl Peer for Embedded {
    fn connector(&mut self) -> &mut dyn Connector {
        &mut self.connector
    }
    fn log(&mut self) -> Vec<String> {
        vec![format!("log line {}", self.restarts)]
    }
    fn restart(&mut self) -> Option<CommandRun> {
        if !self.restartable {
            return None;
        }
        self.restarts += 1;
        *self = Embedded { restarts: self.restarts, ..Embedded::new(self.faults.clone(), true) };
        Some(CommandRun { command: "fresh".into(), status: "exit 0".into(), output: "restarted".into() })
    }
}

fn checks() -> Vec<&'static Check> {
    let all = catalogue::all();
    let at = all.iter().position(|c| c.info.id == CRASHER).expect("the check exists");
    all[at - 2..at + 3].to_vec()
}

fn options() -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(500),
        silence: Duration::from_millis(100),
        restart_wait: Duration::from_secs(2),
        ..RunOptions::default()
    }
}

#[test]
fn without_a_restart_the_crash_is_the_triggering_checks_and_the_rest_are_not_run() {
    let checks = checks();
    let mut peer = Embedded::new(Faults::only("crash-on-huge-segment-count"), false);
    let results = run_watched(&checks, &mut peer, &options(), &AtomicBool::new(false), |_| {});
    let at = results.iter().position(|r| r.check.id == CRASHER).unwrap();
    for r in &results[..at] {
        assert_eq!((r.outcome, &r.peer.down), (Outcome::Pass, &None), "{}", r.check.id);
    }
    let down = results[at].peer.down.as_ref().expect("the crash is recorded on the check that caused it");
    assert_eq!(down.kind, DownKind::Crashed);
    assert!(down.restart.is_none());
    assert_eq!(down.log, ["log line 0"]);
    for r in &results[at + 1..] {
        assert_eq!(r.outcome, Outcome::Skipped, "{}", r.check.id);
        assert_eq!(r.peer.down_after, Some(CRASHER));
        assert_eq!(r.actual.to_string(), format!("not run: the peer went down after {CRASHER}"));
    }
}

#[test]
fn with_a_restart_the_checks_after_the_crash_run_and_pass() {
    let checks = checks();
    let mut peer = Embedded::new(Faults::only("crash-on-huge-segment-count"), true);
    let results = run_watched(&checks, &mut peer, &options(), &AtomicBool::new(false), |_| {});
    let downs: Vec<&str> = results.iter().filter(|r| r.peer.down.is_some()).map(|r| r.check.id).collect();
    assert_eq!(downs, [CRASHER]);
    let at = results.iter().position(|r| r.check.id == CRASHER).unwrap();
    let restart = results[at].peer.down.as_ref().unwrap().restart.as_ref().expect("restarted");
    assert!(restart.back);
    assert_eq!(restart.run.output, "restarted");
    assert_eq!(peer.restarts, 1);
    for r in results.iter().filter(|r| r.check.id != CRASHER) {
        assert_eq!(r.outcome, Outcome::Pass, "{}: {}", r.check.id, r.actual);
    }
}

#[test]
fn a_faithful_responder_is_probed_after_a_silence_and_never_found_down() {
    let mut checks = checks();
    // Discarded, as required: a silence, which makes the engine probe the peer.
    let discard = "rfc8166/4.5/short-message-discarded";
    checks.insert(0, catalogue::all().into_iter().find(|c| c.info.id == discard).unwrap());
    let mut peer = Embedded::new(Faults::default(), false);
    let results = run_watched(&checks, &mut peer, &options(), &AtomicBool::new(false), |_| {});
    assert!(results[0].peer.sign.is_some(), "the silence is a sign");
    for r in &results {
        assert_eq!((r.outcome, &r.peer.down), (Outcome::Pass, &None), "{}", r.check.id);
    }
}

/// A peer whose connection manager never answers: every connect times out.
struct Unanswering;

impl Connector for Unanswering {
    fn connect(
        &mut self,
        _: &[u8],
        _: std::time::Instant,
    ) -> Result<Box<dyn rpcrdma_peers::transport::Connection>, rpcrdma_peers::transport::TransportError> {
        Err(rpcrdma_peers::transport::TransportError::Timeout)
    }
    fn describe(&self) -> String {
        "unanswering".into()
    }
    fn port(&self) -> Option<u16> {
        None
    }
    fn connect_at(
        &mut self,
        _: u16,
        _: &[u8],
        _: std::time::Instant,
    ) -> Option<Result<Box<dyn rpcrdma_peers::transport::Connection>, rpcrdma_peers::transport::TransportError>> {
        None
    }
}

#[test]
fn a_peer_that_never_answers_a_connect_is_wedged() {
    let checks = checks();
    let mut connector = Unanswering;
    let mut peer: &mut dyn Connector = &mut connector;
    let results = run_watched(&checks, &mut peer, &options(), &AtomicBool::new(false), |_| {});
    let down = results[0].peer.down.as_ref().expect("the first check finds it down");
    assert_eq!(down.kind, DownKind::Wedged, "{}", down.detail);
    assert!(results[1..].iter().all(|r| r.peer.down_after == Some(checks[0].info.id)));
}
