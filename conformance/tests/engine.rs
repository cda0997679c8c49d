//! The engine against the embedded reference responder over the emulated transport: every
//! check passes against the faithful responder, and every check notices the fault switch
//! that breaks the requirement it tests.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{run_check, run_checks, Check, Outcome, RunOptions};
use rpcrdma_conformance::responder::{Config, Faults, Responder};
use rpcrdma_conformance::transport::emulated::EmulatedConnector;

fn responder(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

fn options() -> RunOptions {
    RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(150), ..RunOptions::default() }
}

fn check(id: &str) -> &'static Check {
    catalogue::all().into_iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"))
}

#[test]
fn every_check_passes_against_the_reference_responder() {
    let mut conn = responder(Faults::default());
    let checks = catalogue::all();
    let results = run_checks(&checks, &mut conn, &options(), &AtomicBool::new(false), |_, _| {});
    let bad: Vec<String> = results
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .map(|r| {
            let t: Vec<String> = r.transcript.iter().map(|e| format!("    {:?} {}", e.direction, e.summary)).collect();
            format!("{} {}: expected {} / actual {}\n{}", r.id, r.outcome.name(), r.expected, r.actual, t.join("\n"))
        })
        .collect();
    assert!(bad.is_empty(), "{} of {} checks did not pass:\n{}", bad.len(), results.len(), bad.join("\n"));
    assert!(results.len() >= 15);
}

/// (check, fault, the outcome the fault must produce).
const BROKEN: &[(&str, &str, Outcome)] = &[
    ("rfc8166/4.2.4/null-call", "zero-credit", Outcome::Fail),
    ("rfc8166/4.5.1/vers-mismatch", "err-vers-wrong-xid", Outcome::Fail),
    ("rfc8166/4.5.1/vers-mismatch", "err-vers-bad-range", Outcome::Fail),
    ("rfc8166/4.5.1/vers-mismatch", "ignore-bad-version", Outcome::Fail),
    ("rfc8166/4.5.1/vers-zero", "ignore-bad-version", Outcome::Fail),
    ("rfc8166/4.5.2/invalid-proc", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.5.2/invalid-proc-max", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.6.1/msgp-refused", "no-err-chunk", Outcome::PassLax),
    ("rfc8166/4.6.2/done-discarded", "answer-error-and-done", Outcome::Fail),
    ("rfc8166/4.2.4/error-discarded", "answer-error-and-done", Outcome::Fail),
    ("rfc8166/4.5/short-message-discarded", "answer-short-messages", Outcome::Fail),
    ("rfc8166/4.2.4/nomsg-without-chunks", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.5.2/xid-mismatch", "accept-xid-mismatch", Outcome::Fail),
    ("rfc8166/4.5.2/truncated-read-list", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.5.2/not-bool-discriminator", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.5.2/huge-segment-count", "no-err-chunk", Outcome::Fail),
    ("rfc8166/3.3.1/grant-nonzero-in-errors", "zero-credit", Outcome::Fail),
    ("rfc8166/3.3.1/window-served", "short-receive-window", Outcome::Fail),
    ("rfc8166/3.4.5.2/read-chunk-odd-length", "read-chunk-roundup", Outcome::Fail),
    ("rfc8166/3.4.6.2/write-chunk-no-pad", "pad-write-chunk", Outcome::Fail),
    ("rfc8166/3.4.6.2/write-chunk-no-pad", "write-chunk-length-padded", Outcome::Fail),
    ("rfc8166/4.3.2.2/unused-write-chunk", "drop-unused-write-chunks", Outcome::Fail),
    ("rfc8166/3.5.3/long-reply-via-reply-chunk", "ignore-reply-chunk", Outcome::Fail),
    ("rfc8166/3.5.3/position-zero-long-call", "no-position-zero", Outcome::Fail),
    ("rfc8166/3.4.5/position-zero-gathered", "first-segment-only", Outcome::Fail),
    ("rfc8797/4/private-data-valid", "private-data-bad-version", Outcome::Fail),
    ("rfc8797/4/no-invalidate-without-r", "invalidate-without-r", Outcome::Fail),
    ("rfc8797/4/invalidate-request-rkey", "invalidate-foreign-key", Outcome::Fail),
    ("rfc8797/4.2/receive-size-honoured", "ignore-reply-chunk", Outcome::Fail),
    ("rfc8166/3.4.5/multi-segment-read-chunk", "first-segment-only", Outcome::Fail),
    ("rfc8166/3.5.3/position-zero-with-data-chunk", "no-position-zero", Outcome::Fail),
    ("rfc8166/3.4.5/position-unaligned", "lenient-read-list", Outcome::Fail),
    ("rfc8166/3.4.5/position-beyond-payload", "lenient-read-list", Outcome::Fail),
    ("rfc8166/3.4.5/read-chunks-overlap", "lenient-read-list", Outcome::Fail),
    ("rfc8166/3.4.5/read-chunk-split", "lenient-read-list", Outcome::Fail),
    ("rfc8166/3.4.6.2/write-chunk-extra-pad-segment", "pad-write-chunk", Outcome::Fail),
    ("rfc8166/4.3.2.3/empty-write-chunk", "drop-unused-write-chunks", Outcome::Fail),
    ("rfc8166/4.3.3/reply-chunk-for-small-reply", "echo-reply-chunk-lengths", Outcome::Fail),
    ("rfc8166/4.5.3/reply-chunk-too-small", "ignore-reply-chunk", Outcome::Fail),
    ("rfc8166/4.2.4/msg-without-payload", "no-err-chunk", Outcome::Fail),
    ("rfc8166/4.5/error-reply-form", "err-chunk-trailing", Outcome::Fail),
    ("rfc8166/3.3.1/credit-request-one", "zero-credit", Outcome::Fail),
    ("rfc8797/5.1/no-private-data", "assume-large-peer-receive", Outcome::Fail),
    ("rfc8797/5.2/bad-format-identifier", "assume-large-peer-receive", Outcome::Fail),
    ("rfc5666/6.2/conf-rdma", "ccp-empty-reply", Outcome::Fail),
    ("v2-01/5.2/optional-first-message", "v2-respxch-wrong-xid", Outcome::Fail),
    ("v2-01/4.2.2/reply-direction", "v2-wrong-direction", Outcome::Fail),
    ("v2-01/4.2.2/reply-direction", "zero-credit", Outcome::Fail),
    ("v2-01/5.3/nomsg-call-same-version", "v2-reply-v1", Outcome::Fail),
    ("v2-01/4.2.3/err-vers-range", "v2-err-vers-v1-only", Outcome::Fail),
    ("v2-01/4.2.3/bad-header-truncated", "v2-no-bad-header", Outcome::Fail),
    ("v2-01/4.2.3/bad-header-proc", "v2-no-bad-header", Outcome::Fail),
    ("v2-01/3.1/inval-option", "v2-no-inval-option", Outcome::Fail),
    ("v2-01/4.2.3/error-discarded", "v2-answer-error", Outcome::Fail),
    ("xcharext-02/4.1/initxch-silent", "v2-initxch-answered", Outcome::Fail),
    ("xcharext-02/3.2/initxch-reqreminv-false", "v2-ignore-xchars", Outcome::Fail),
    ("xcharext-02/4.4/updxch-reqreminv-false", "v2-ignore-xchars", Outcome::Fail),
    ("xcharext-02/4.3/respxch-xid", "v2-respxch-wrong-xid", Outcome::Fail),
    ("xcharext-02/4.3/respxch-cover", "v2-respxch-overlap", Outcome::PassLax),
    ("xcharext-02/2.1/unknown-ids-skipped", "v2-reject-unknown-xchar", Outcome::Fail),
    ("xcharext-02/2.1/invalid-known-value", "v2-no-bad-header", Outcome::Fail),
    ("rtrext-03/9.3/xmtreq-answered", "v2-wrong-direction", Outcome::Fail),
    ("rtrext-03/9.4/xmtcont-group", "v2-no-continuation", Outcome::Fail),
    ("rtrext-03/9.5/cont-without-req", "v2-no-repterr", Outcome::Fail),
    ("rtrext-03/9.5/wrong-xnum", "v2-no-repterr", Outcome::Fail),
    ("rtrext-03/9.5/wrong-xnum", "v2-repterr-badcont-only", Outcome::Fail),
    ("rtrext-03/9.4/cont-wrong-xid", "v2-repterr-badcont-only", Outcome::Fail),
];

#[test]
fn every_check_notices_its_fault() {
    let mut wrong = Vec::new();
    for (id, fault, want) in BROKEN {
        let mut conn = responder(Faults::only(fault));
        let r = run_check(check(id), &mut conn, &options());
        if r.outcome != *want {
            wrong.push(format!(
                "{id} with fault {fault}: {} (want {}); actual: {}",
                r.outcome.name(),
                want.name(),
                r.actual
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_check_has_a_fault_that_breaks_it() {
    for c in catalogue::all() {
        assert!(BROKEN.iter().any(|(id, _, _)| *id == c.id), "no fault breaks {}", c.id);
    }
    for f in Faults::NAMES {
        assert!(BROKEN.iter().any(|(_, name, _)| name == f), "fault {f} is used by no check");
    }
}

#[test]
fn a_silent_peer_ends_each_check_with_a_verdict() {
    // A listener that accepts and never answers: every wait hits its deadline.
    struct Silent(Vec<rpcrdma_conformance::transport::emulated::EmulatedConnection>);
    impl rpcrdma_conformance::transport::emulated::Listener for Silent {
        fn on_request(&mut self, _: &[u8]) -> Result<Vec<u8>, String> {
            Ok(Vec::new())
        }
        fn on_established(&mut self, mut conn: rpcrdma_conformance::transport::emulated::EmulatedConnection) {
            use rpcrdma_conformance::transport::Connection;
            conn.post_recv(4096, 64).unwrap();
            self.0.push(conn);
        }
    }
    let mut conn = EmulatedConnector::new(Silent(Vec::new()));
    let opts =
        RunOptions { timeout: Duration::from_millis(100), silence: Duration::from_millis(50), ..RunOptions::default() };
    let r = run_check(check(catalogue::SANITY), &mut conn, &opts);
    assert_eq!(r.outcome, Outcome::Fail);
    assert!(r.actual.contains("no reply before the deadline"), "{}", r.actual);
}
