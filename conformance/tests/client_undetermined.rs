//! RFC 8167 4.1's credit value of a message whose direction is not determined, judged on the
//! reference requester (`ambiguous-credit`): under a grant below eight its NFSv4.1 workload
//! sends eight NULLs after its first READ, at most the grant at once, so the grant of 4 is
//! filled when `serve` sends the RDMA_ERROR of the answered READ with a credit value of 32.
//! A requester that takes the value fails; one with no such demand, or speaking NFSv3, is
//! inconclusive, never a pass.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge, undetermined};
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_peers::observe::Observed;
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::{Config, Scenario};

fn config() -> Config {
    Config { credits: 8, receive_window: Some(64), handle_delay: Duration::from_millis(20), ..Config::default() }
}

fn nfs41() -> RequesterOptions {
    RequesterOptions { timeout: Duration::from_millis(1500), nfs4_minor: Some(1), ..RequesterOptions::default() }
}

/// The check's outcome and actual, and the messages the requester saw, for a workload.
fn judged(options: &RequesterOptions, faults: &RequesterFaults) -> (Outcome, String, Vec<Vec<u8>>) {
    let (observed, _) = observed_workloads(&config(), &[Some(Scenario::AmbiguousCredit)], options, faults);
    let sent = observed
        .iter()
        .flat_map(|c| c.events.iter())
        .filter_map(|(_, e)| match e {
            Observed::ToRequester(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    let checks: Vec<_> = undetermined::CHECKS.iter().collect();
    let r = judge(&checks, &observed, &Profile::default()).remove(0);
    (r.outcome, r.actual.to_string(), sent)
}

fn word(m: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]])
}

#[test]
fn the_reference_requester_ignores_the_credit_value_and_its_fault_takes_it() {
    let (got, actual, sent) = judged(&nfs41(), &RequesterFaults::default());
    assert_eq!(got, Outcome::Pass, "{actual}");
    assert!(actual.contains("never more than 4 outstanding during the hold"), "{actual}");
    assert!(actual.contains("with rdma_credit 32 (4 outstanding when it came), with calls waiting: 8 outstanding as soon as our replies granted 8"), "{actual}");
    // Exactly one RDMA_ERROR ERR_CHUNK (4, 2) went, with the requester's 32 credits, and every
    // forward reply after it (the hold over) granted 8.
    let errors: Vec<_> = sent.iter().filter(|m| m.len() >= 20 && word(m, 12) == 4).collect();
    assert_eq!(errors.len(), 1, "{errors:x?}");
    assert_eq!((word(errors[0], 4), word(errors[0], 8), word(errors[0], 16), errors[0].len()), (1, 32, 2, 20));
    let at = sent.iter().position(|m| m == errors[0]).unwrap();
    // (RDMA_MSG with empty chunk lists, an RPC REPLY: msg_type 1 after the RPC XID at 28.)
    let replies: Vec<_> = sent[at..].iter().filter(|m| m.len() >= 36 && word(m, 12) == 0 && word(m, 32) == 1).collect();
    assert!(replies.len() >= 8 && replies.iter().all(|m| word(m, 8) == 8), "{replies:x?}");

    let (got, actual, _) = judged(&nfs41(), &RequesterFaults::only("apply-undetermined-credit"));
    assert_eq!(got, Outcome::Fail, "{actual}");
    assert!(actual.contains("calls outstanding during the hold after the RDMA_ERROR"), "{actual}");
    let n: usize = actual.split(' ').next().unwrap().parse().unwrap();
    assert!(n > 4, "{actual}");
}

#[test]
fn a_requester_that_keeps_to_the_grant_with_nothing_waiting_is_inconclusive() {
    // A window of 4: the grant's 4 outstanding when the message goes, but nothing more to send
    // once the replies grant 8, so keeping to 4 during the hold proves nothing (the faulty
    // requester alike: its window, not the grant, holds it to 4).
    let four = RequesterOptions { window: Some(4), ..nfs41() };
    for faults in [RequesterFaults::default(), RequesterFaults::only("apply-undetermined-credit")] {
        let (got, actual, sent) = judged(&four, &faults);
        assert_eq!(got, Outcome::Inconclusive, "{actual}");
        assert!(actual.contains("no call was waiting"), "{actual}");
        assert_eq!(sent.iter().filter(|m| m.len() >= 20 && word(m, 12) == 4).count(), 1);
    }
}

#[test]
fn a_requester_with_no_demand_beyond_the_grant_is_inconclusive() {
    // One call at a time: never the grant's 4 outstanding, so the message is never sent; the
    // faulty requester alike (it has nothing to take).
    let serial = RequesterOptions { window: Some(1), ..nfs41() };
    for faults in [RequesterFaults::default(), RequesterFaults::only("apply-undetermined-credit")] {
        let (got, actual, sent) = judged(&serial, &faults);
        assert_eq!(got, Outcome::Inconclusive, "{actual}");
        assert!(actual.contains("never had 4 calls outstanding"), "{actual}");
        assert!(sent.iter().all(|m| m.len() < 16 || word(m, 12) != 4));
    }
    // NFSv3: no NFSv4 READ for the scenario to play on.
    let nfs3 = RequesterOptions { nfs4_minor: None, ..nfs41() };
    let (got, actual, _) = judged(&nfs3, &RequesterFaults::default());
    assert_eq!(got, Outcome::Inconclusive, "{actual}");
    assert!(actual.contains("never came"), "{actual}");
}
