//! The NFS version 4 binding's client checks (RFC 8267 6.4, 6.7.2) judging the reference
//! requester: its NFSv4.1 workload sends a COMPOUND of two READs offering one write chunk, and
//! meets `nfs4-err-chunk` and `nfs4-garbage-args`, which refuse its first READ COMPOUND. A
//! requester that sends no NFS version 4 call (NFSv3) is inconclusive, never a pass; one that
//! breaks the rule, given the chance, fails (pass-lax for a SHOULD).

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge, nfs4, scenarios_of};
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::Config;

fn config() -> Config {
    Config { credits: 8, receive_window: Some(64), handle_delay: Duration::from_millis(20), ..Config::default() }
}

fn nfs3() -> RequesterOptions {
    RequesterOptions { timeout: Duration::from_millis(700), ..RequesterOptions::default() }
}

fn nfs41() -> RequesterOptions {
    RequesterOptions { nfs4_minor: Some(1), ..nfs3() }
}

/// Each NFS version 4 check's outcome and actual, the workload run plainly and once per
/// scenario.
fn outcomes(options: &RequesterOptions, faults: &RequesterFaults) -> Vec<(&'static str, Outcome, String)> {
    let mut runs = vec![None];
    runs.extend(scenarios_of(nfs4::CHECKS.iter()).into_iter().map(Some));
    let (observed, _) = observed_workloads(&config(), &runs, options, faults);
    let checks: Vec<_> = nfs4::CHECKS.iter().collect();
    judge(&checks, &observed, &Profile::default())
        .into_iter()
        .map(|r| (r.check.id, r.outcome, r.actual.to_string()))
        .collect()
}

fn outcome<'a>(results: &'a [(&'static str, Outcome, String)], id: &str) -> &'a (&'static str, Outcome, String) {
    results.iter().find(|r| r.0 == id).expect("the check ran")
}

#[test]
fn an_nfs3_requester_is_inconclusive_and_the_nfs41_requester_passes() {
    for r in outcomes(&nfs3(), &RequesterFaults::default()) {
        assert_eq!(r.1, Outcome::Inconclusive, "{}: {}", r.0, r.2);
    }
    let results = outcomes(&nfs41(), &RequesterFaults::default());
    for r in &results {
        assert_eq!(r.1, Outcome::Pass, "{}: {}", r.0, r.2);
    }
    // The COMPOUND of two READs offering one write chunk; the refusal followed by more calls
    // and the connection's end.
    let first = outcome(&results, "rfc8267/6.4.1/requester-first-chunk-first-read");
    // One per workload: plainly, and under each of the two scenarios.
    assert!(first.2.starts_with("3 COMPOUNDs with READs and write chunks"), "{}", first.2);
    let refused = outcome(&results, "rfc8267/6.7.2/requester-err-chunk-completes");
    assert!(
        refused.2.contains("was never sent again") && refused.2.contains("then the connection closed"),
        "{}",
        refused.2
    );
}

#[test]
fn each_fault_is_noticed_with_its_reason() {
    let cases = [
        (
            "seventeen-segment-chunk",
            "rfc8267/6.4.2/requester-chunk-complexity",
            Outcome::PassLax,
            "a write chunk of 17 segments",
        ),
        (
            "write-chunk-for-second-read",
            "rfc8267/6.4.1/requester-first-chunk-first-read",
            Outcome::Fail,
            "write chunk 1 holds 2 bytes, too few for READ 1 of 5 bytes",
        ),
        (
            "resend-refused-call",
            "rfc8267/6.7.2/requester-err-chunk-completes",
            Outcome::Fail,
            "after our RDMA_ERROR ERR_CHUNK",
        ),
        (
            "resend-refused-call",
            "rfc8267/6.4.2/requester-garbage-args-not-resent",
            Outcome::PassLax,
            "after our GARBAGE_ARGS",
        ),
    ];
    for (fault, id, want, why) in cases {
        let results = outcomes(&nfs41(), &RequesterFaults::only(fault));
        let (_, got, actual) = outcome(&results, id);
        assert_eq!(*got, want, "{id} with {fault}: {actual}");
        assert!(actual.contains(why), "{id} with {fault}: {actual}");
    }
}
