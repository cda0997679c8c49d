//! The client catalogue judging the reference requester over the emulated transport: every
//! client check passes for the conformant requester, and each notices the requester fault
//! that breaks it.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge_all, CHECKS};
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_peers::observe::Log;
use rpcrdma_peers::requester::{workload, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;

/// Serves the reference requester's workload with an observing responder; the judged results.
fn judged(faults: &RequesterFaults) -> Vec<(&'static str, Outcome, String)> {
    let log = Log::new();
    let config = Config {
        credits: 8,
        receive_window: Some(64),
        handle_delay: Duration::from_millis(20),
        observer: Some(log.clone()),
        ..Config::default()
    };
    let mut conn = EmulatedConnector::new(Responder::reference(config));
    let _ = workload(&mut conn, &RequesterOptions::default(), faults);
    std::thread::sleep(Duration::from_millis(50));
    judge_all(&log.snapshot()).into_iter().map(|r| (r.check.id, r.outcome, r.actual.to_string())).collect()
}

#[test]
fn the_reference_requester_passes_every_client_check() {
    let results = judged(&RequesterFaults::default());
    let bad: Vec<String> =
        results.iter().filter(|r| r.1 != Outcome::Pass).map(|r| format!("{} {:?}: {}", r.0, r.1, r.2)).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(results.len(), CHECKS.len());
}

#[test]
fn each_client_check_notices_its_requester_fault() {
    let mut wrong = Vec::new();
    for c in CHECKS.iter() {
        assert!(!c.info.broken_by.is_empty(), "no requester fault breaks {}", c.info.id);
        for (fault, want) in c.info.broken_by {
            let results = judged(&RequesterFaults::only(fault));
            let (_, got, actual) = results.iter().find(|r| r.0 == c.info.id).expect("the check ran");
            if got != want {
                wrong.push(format!("{} with {fault}: {got:?} (want {want:?}): {actual}", c.info.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for f in RequesterFaults::NAMES {
        let used = CHECKS.iter().any(|c| c.info.broken_by.iter().any(|(n, _)| n == f));
        assert!(used, "requester fault {f} is used by no check");
    }
}
