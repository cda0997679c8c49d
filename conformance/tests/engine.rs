//! The engine against the embedded reference responder over the emulated transport: every
//! check passes against the faithful responder, and every check notices the fault switch
//! that breaks the requirement it tests.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{
    run_check, run_checks, Actual, Check, Direction, Mismatch, NoMessage, Outcome, RunOptions,
};
use rpcrdma_conformance::frame;
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;

fn responder(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

fn options() -> RunOptions {
    RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(150), ..RunOptions::default() }
}

fn check(id: &str) -> &'static Check {
    catalogue::all().into_iter().find(|c| c.info.id == id).unwrap_or_else(|| panic!("no check {id}"))
}

#[test]
fn every_check_passes_against_the_reference_responder() {
    let mut conn = responder(Faults::default());
    let checks = catalogue::all();
    let results = run_checks(&checks, &mut conn, &options(), &AtomicBool::new(false), |_| {});
    let bad: Vec<String> = results
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .map(|r| {
            let t: Vec<String> = r.transcript.iter().map(|e| format!("    {:?} {}", e.direction, e.summary)).collect();
            format!(
                "{} {}: expected {} / actual {}\n{}",
                r.check.id,
                r.outcome.name(),
                r.expected,
                r.actual,
                t.join("\n")
            )
        })
        .collect();
    assert!(bad.is_empty(), "{} of {} checks did not pass:\n{}", bad.len(), results.len(), bad.join("\n"));
    assert!(results.len() >= 15);
}

#[test]
fn every_check_notices_its_fault() {
    let mut wrong = Vec::new();
    for c in catalogue::all() {
        for (fault, want) in c.info.broken_by {
            let mut conn = responder(Faults::only(fault));
            let r = run_check(c, &mut conn, &options());
            if r.outcome != *want {
                wrong.push(format!(
                    "{} with fault {fault}: {} (want {}); actual: {}",
                    c.info.id,
                    r.outcome.name(),
                    want.name(),
                    r.actual
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_check_has_a_fault_that_breaks_it() {
    let checks = catalogue::all();
    for c in &checks {
        assert!(!c.info.broken_by.is_empty(), "no fault breaks {}", c.info.id);
        for (fault, _) in c.info.broken_by {
            assert!(Faults::NAMES.contains(fault), "{} names an unknown fault {fault}", c.info.id);
        }
    }
    // The crash-like faults take the whole responder down; the fuzzer's tests prove they are
    // found (conformance/tests/fuzz.rs).
    for f in Faults::NAMES.iter().filter(|f| !Faults::CRASH_LIKE.contains(f)) {
        assert!(checks.iter().any(|c| c.info.broken_by.iter().any(|(n, _)| n == f)), "fault {f} is used by no check");
    }
}

#[test]
fn each_received_message_is_decoded_once() {
    // Every message of a check's conversation, sent or received, is decoded exactly once:
    // received ones into the frame the check judges, sent ones for the transcript.
    let mut conn = responder(Faults::default());
    let mut received = 0;
    for c in catalogue::all() {
        let before = frame::decodes();
        let r = run_check(c, &mut conn, &options());
        let messages = r.transcript.iter().filter(|e| e.direction != Direction::Event).count() as u64;
        assert_eq!(frame::decodes() - before, messages, "{}: decodes against messages", c.info.id);
        received += r.transcript.iter().filter(|e| e.direction == Direction::Received).count();
    }
    assert!(received > 100, "only {received} messages received in the whole catalogue");
}

#[test]
fn a_silent_peer_ends_each_check_with_a_verdict() {
    // A listener that accepts and never answers: every wait hits its deadline.
    struct Silent(Vec<rpcrdma_peers::transport::emulated::EmulatedConnection>);
    impl rpcrdma_peers::transport::emulated::Listener for Silent {
        fn on_request(&mut self, _: &[u8]) -> Result<Vec<u8>, String> {
            Ok(Vec::new())
        }
        fn on_established(&mut self, mut conn: rpcrdma_peers::transport::emulated::EmulatedConnection) {
            use rpcrdma_peers::transport::Connection;
            conn.post_recv(4096, 64).unwrap();
            self.0.push(conn);
        }
    }
    let mut conn = EmulatedConnector::new(Silent(Vec::new()));
    let opts =
        RunOptions { timeout: Duration::from_millis(100), silence: Duration::from_millis(50), ..RunOptions::default() };
    let r = run_check(check(catalogue::SANITY), &mut conn, &opts);
    assert_eq!(r.outcome, Outcome::Fail);
    assert_eq!(r.actual, Actual::Mismatch(Mismatch::NoMessage(NoMessage::Silence)), "{}", r.actual);
}

/// A check whose scenario breaks (it registers memory before connecting): the harness's
/// defect, reported as an error and never as the peer's failure.
static BROKEN_CHECK: Check = Check {
    info: rpcrdma_conformance::engine::CheckInfo {
        id: "test/0/broken-scenario",
        judges: &[],
        acceptable: "",
        rationale: "",
        groups: &[],
        broken_by: &[],
        precondition: None,
    },
    run: |ctx| {
        ctx.register(64, rpcrdma_peers::transport::Access::READ);
        Err(rpcrdma_conformance::engine::Verdict::fail("unreachable", "unreachable"))
    },
};

#[test]
fn a_panicking_scenario_is_a_harness_error_not_a_peer_failure() {
    let mut conn = responder(Faults::default());
    let r = run_check(&BROKEN_CHECK, &mut conn, &options());
    assert_eq!(r.outcome, Outcome::Error);
    let actual = r.actual.to_string();
    assert!(actual.contains("the harness broke, not the peer"), "{actual}");
    assert!(actual.contains("the scenario connects first"), "{actual}");
}
