//! The client catalogue judging the reference requester over the emulated transport: every
//! client check passes for the conformant requester, and each notices the requester fault
//! that breaks it.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge_all, CHECKS};
use rpcrdma_conformance::engine::{Ctx, Outcome, RunOptions};
use rpcrdma_conformance::requester::{workload, RequesterFaults};
use rpcrdma_conformance::responder::observe::Log;
use rpcrdma_conformance::responder::{Config, Responder};
use rpcrdma_conformance::transport::emulated::EmulatedConnector;

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
    let options =
        RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(100), ..RunOptions::default() };
    let mut ctx = Ctx::new(&mut conn, options);
    let _ = workload(&mut ctx, faults);
    drop(ctx.finish());
    std::thread::sleep(Duration::from_millis(50));
    judge_all(&log.snapshot()).into_iter().map(|r| (r.id, r.outcome, r.actual)).collect()
}

#[test]
fn the_reference_requester_passes_every_client_check() {
    let results = judged(&RequesterFaults::default());
    let bad: Vec<String> =
        results.iter().filter(|r| r.1 != Outcome::Pass).map(|r| format!("{} {:?}: {}", r.0, r.1, r.2)).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(results.len(), CHECKS.len());
}

const BROKEN: &[(&str, &str, Outcome)] = &[
    ("rfc8797/4/requester-private-data", "bad-private-data", Outcome::Fail),
    ("rfc8166/4.6/requester-no-retired-procs", "send-rdma-done", Outcome::Fail),
    ("rfc8166/4.5.2/requester-xid-match", "xid-mismatch", Outcome::Fail),
    ("rfc8166/3.4.5/requester-positions", "unaligned-position", Outcome::Fail),
    ("rfc8166/4.2.4/requester-nomsg-payload", "nomsg-without-payload", Outcome::Fail),
    ("rfc8166/3.3.1/requester-within-grant", "exceed-grant", Outcome::Fail),
    ("rfc8797/3.1/requester-inline-threshold", "oversized-inline", Outcome::Fail),
    ("rfc8166/3.4.6.2/requester-write-chunk-size", "write-chunk-pad-segment", Outcome::PassLax),
    ("rfc8166/4.3.3/requester-reply-chunk", "no-reply-chunk", Outcome::Fail),
];

#[test]
fn each_client_check_notices_its_requester_fault() {
    let mut wrong = Vec::new();
    for (id, fault, want) in BROKEN {
        let results = judged(&RequesterFaults::only(fault));
        let (_, got, actual) = results.iter().find(|r| r.0 == *id).expect("the check ran");
        if got != want {
            wrong.push(format!("{id} with {fault}: {got:?} (want {want:?}): {actual}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for c in CHECKS.iter() {
        assert!(BROKEN.iter().any(|b| b.0 == c.id), "no requester fault breaks {}", c.id);
    }
    for f in RequesterFaults::NAMES {
        assert!(BROKEN.iter().any(|b| b.1 == *f), "requester fault {f} is used by no check");
    }
}
