//! The reverse-direction client checks (RFC 8167) judging the reference requester's NFSv4.1
//! workload: its session offers a back channel on the connection, the reference responder
//! calls it back (CB_NULL, then CB_RECALL when a second client opens the delegated file for
//! writing) and plays `reverse-burst` and `reverse-chunks`. A requester that gets no
//! reverse-direction call (NFSv3) is inconclusive, never a pass.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge, reverse, scenarios_of, Seen, Served};
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_conformance::frame::rpc::RpcKind;
use rpcrdma_peers::observe::{Observed, ObservedConnection};
use rpcrdma_peers::proto::callback::{CbCompoundArgs, CbOp, CB_COMPOUND};
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions, WorkloadError};
use rpcrdma_peers::responder::Config;

fn config() -> Config {
    Config { credits: 8, receive_window: Some(64), handle_delay: Duration::from_millis(20), ..Config::default() }
}

fn nfs41() -> RequesterOptions {
    RequesterOptions { timeout: Duration::from_millis(700), nfs4_minor: Some(1), ..RequesterOptions::default() }
}

/// The workload with the reverse checks' scenarios (and none), observed.
fn observed(options: &RequesterOptions, faults: &RequesterFaults) -> (Vec<ObservedConnection>, Vec<WorkloadError>) {
    let mut runs = vec![None];
    runs.extend(scenarios_of(reverse::CHECKS.iter()).into_iter().map(Some));
    observed_workloads(&config(), &runs, options, faults)
}

fn outcomes(conns: &[ObservedConnection]) -> Vec<(&'static str, Outcome, String)> {
    let checks: Vec<_> = reverse::CHECKS.iter().collect();
    judge(&checks, conns, &Profile::default())
        .into_iter()
        .map(|r| (r.check.id, r.outcome, r.actual.to_string()))
        .collect()
}

/// The procedures (and CB_COMPOUND operations) of the reverse-direction calls we sent.
fn reverse_calls(conns: &[ObservedConnection]) -> Vec<String> {
    let mut out = Vec::new();
    for c in conns {
        for (_, e) in &Served::of(c, &Profile::default()).events {
            let Seen::Reply(f) = e else { continue };
            let Some(Ok(rpc)) = f.rpc.as_ref() else { continue };
            let RpcKind::Call { proc_, .. } = rpc.kind else { continue };
            if proc_ == CB_COMPOUND {
                let args = CbCompoundArgs::decode(f.slice(rpc.body.clone())).expect("CB_COMPOUND arguments");
                let ops: Vec<&str> = args
                    .ops
                    .iter()
                    .map(|o| match o {
                        CbOp::Sequence { .. } => "CB_SEQUENCE",
                        CbOp::Recall { .. } => "CB_RECALL",
                        CbOp::Other(_) => "other",
                    })
                    .collect();
                out.push(format!("CB_COMPOUND({})", ops.join(", ")));
            } else {
                out.push(format!("procedure {proc_}"));
            }
        }
    }
    out
}

#[test]
fn the_nfs41_requester_answers_callbacks_and_returns_the_recalled_delegation() {
    let (conns, errors) = observed_workloads(&config(), &[None], &nfs41(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    let calls = reverse_calls(&conns);
    assert!(calls.contains(&"procedure 0".to_string()), "no CB_NULL: {calls:?}");
    assert!(calls.iter().any(|c| c == "CB_COMPOUND(CB_SEQUENCE, CB_RECALL)"), "no recall: {calls:?}");
    let results = outcomes(&conns);
    for (id, outcome, actual) in &results {
        // The scenario checks see no connection of theirs here.
        let scenario = reverse::CHECKS.iter().any(|c| c.info.id == *id && c.scenario.is_some());
        let want = if scenario { Outcome::Unsupported } else { Outcome::Pass };
        assert_eq!(*outcome, want, "{id}: {actual}");
    }
}

#[test]
fn every_reverse_check_passes_the_nfs41_requester_with_its_scenarios() {
    let (conns, errors) = observed(&nfs41(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    for (id, outcome, actual) in outcomes(&conns) {
        assert_eq!(outcome, Outcome::Pass, "{id}: {actual}");
        if id == "rfc8167/4.3.1/requester-reverse-receives" {
            // The burst: as many calls as the back channel's slots (the grant).
            let want = format!("{} calls at once", nfs41().back_channel_slots);
            assert!(actual.contains(&want), "{actual}");
        }
        if id == "rfc8167/4.3.1/requester-reverse-receives-after-reconnect" {
            // The burst on the second connection, the back channel bound to it again.
            let want = format!("connection 1 (after we closed connection 0, back channel offered again on connection 1): {} calls at once", nfs41().back_channel_slots);
            assert!(actual.contains(&want), "{actual}");
        }
        if id == "rfc8167/5.3/requester-reverse-err-chunk" {
            assert!(actual.contains("ERR_CHUNK"), "{actual}");
        }
    }
}

/// No reverse-direction call, no chance to break any rule: inconclusive, with the reason.
#[test]
fn a_requester_without_a_back_channel_is_inconclusive() {
    let nfs3 = RequesterOptions { nfs4_minor: None, ..nfs41() };
    let (conns, _) = observed(&nfs3, &RequesterFaults::default());
    for (id, outcome, actual) in outcomes(&conns) {
        assert_eq!(outcome, Outcome::Inconclusive, "{id}: {actual}");
        let check = reverse::CHECKS.iter().find(|c| c.info.id == id).unwrap();
        assert!(check.info.precondition.is_some(), "{id} declares no precondition");
    }
}

/// Each fault fails (or, for the SHOULD, makes pass-lax) the checks that declare it, and
/// leaves the checks that do not alone where it breaks nothing they judge.
#[test]
fn each_reverse_fault_is_noticed_with_the_reason() {
    let cases: [(&str, &str, &str); 11] = [
        ("reverse-reply-bad-version", "rfc8167/5.2/requester-reverse-reply-framing", "rdma_vers 2"),
        ("reverse-reply-xid-mismatch", "rfc8167/5.2/requester-reverse-reply-framing", "rdma_xid"),
        ("reverse-reply-as-call", "rfc8167/5.2/requester-reverse-reply-framing", "msg_type 0"),
        ("ignore-reverse-calls", "rfc8267/6.5.2/requester-answers-reverse-calls", "no answer"),
        ("no-reverse-receives", "rfc8267/6.5.2/requester-answers-reverse-calls", "no receive"),
        ("no-reverse-receives", "rfc8167/4.3.1/requester-reverse-receives", "no receive"),
        (
            "no-reverse-receives-after-reconnect",
            "rfc8167/4.3.1/requester-reverse-receives-after-reconnect",
            "after we closed connection 0: connection 1",
        ),
        ("reverse-zero-credit", "rfc8167/4.1/requester-reverse-grant", "a grant of 0"),
        ("reverse-chunks-accepted", "rfc8167/5.3/requester-reverse-err-chunk", "neither ERR_CHUNK"),
        ("oversized-back-channel", "rfc8267/6.5.2/requester-back-channel-fits", "says Long Calls are taken"),
        ("drop-with-delegation", "rfc8167/5.4/requester-keeps-connection", "delegation held"),
    ];
    for (fault, id, why) in cases {
        let (conns, _) = observed(&nfs41(), &RequesterFaults::only(fault));
        let results = outcomes(&conns);
        let (_, outcome, actual) = results.iter().find(|r| r.0 == id).expect("the check ran");
        let want = if fault == "drop-with-delegation" { Outcome::PassLax } else { Outcome::Fail };
        assert_eq!(*outcome, want, "{id} with {fault}: {actual}");
        assert!(actual.contains(why), "{id} with {fault}: {actual}");
    }
}

/// RFC 8167 2.4.1: a forward-direction call may carry the XID of one of our reverse-direction
/// calls at the same time. It stays a forward call (the forward checks judge it), and the
/// reply that follows is the reverse call's answer.
#[test]
fn a_forward_call_reusing_a_reverse_xid_is_no_answer() {
    use rpcrdma_codec::rpc::{AcceptStat, CallHeader, ReplyHeader};
    use rpcrdma_codec::v1::HeaderBuilder;
    use rpcrdma_codec::xdr::Encode;
    use rpcrdma_peers::proto::Call;

    let xid = 0xcb00_0001;
    let cb_null = [HeaderBuilder::msg(xid, 8).encode_to_vec(), CallHeader::new(xid, 0x4000_0000, 1, 0).encode_to_vec()];
    let forward = Call::null(xid, 32).msg();
    let reply = |vers: u32| {
        let rpc = ReplyHeader::accepted(xid, AcceptStat::Success).encode_to_vec();
        [HeaderBuilder::msg(xid, 4).raw_vers(vers).encode_to_vec(), rpc].concat()
    };
    let conn = |answer: Vec<u8>| ObservedConnection {
        grant: 8,
        receive_size: 4096,
        events: vec![
            (Duration::ZERO, Observed::ToRequester(cb_null.concat())),
            (Duration::ZERO, Observed::FromRequester(forward.clone())),
            (Duration::ZERO, Observed::FromRequester(answer)),
        ],
        ..ObservedConnection::default()
    };
    let id = "rfc8167/5.2/requester-reverse-reply-framing";
    let get = |conns: &[ObservedConnection]| outcomes(conns).into_iter().find(|r| r.0 == id).unwrap();
    let (_, outcome, actual) = get(&[conn(reply(1))]);
    assert_eq!(outcome, Outcome::Pass, "{actual}");
    assert!(actual.starts_with("1 reverse-direction reply"), "{actual}");
    // The answer after the forward call is judged: a wrong rdma_vers in it fails.
    let (_, outcome, actual) = get(&[conn(reply(2))]);
    assert_eq!(outcome, Outcome::Fail, "{actual}");
    // The forward call is a forward call to the forward checks.
    let observed = conn(reply(1));
    let served = Served::of(&observed, &Profile::default());
    let xids = reverse::reverse_xids(&served);
    let forward_frame = served.events.iter().find_map(|(_, e)| match e {
        Seen::Call(f) if matches!(f.rpc.as_ref(), Some(Ok(r)) if matches!(r.kind, RpcKind::Call { .. })) => Some(f),
        _ => None,
    });
    assert!(!reverse::is_reverse_answer(forward_frame.expect("the forward call"), &xids));
}

/// NFSv4.2 (RFC 7862) rides the same session and back channel.
#[test]
fn the_nfs42_requester_answers_callbacks_too() {
    let nfs42 = RequesterOptions { nfs4_minor: Some(2), ..nfs41() };
    let (conns, errors) = observed(&nfs42, &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    for (id, outcome, actual) in outcomes(&conns) {
        assert_eq!(outcome, Outcome::Pass, "{id}: {actual}");
    }
}

/// `reverse-burst-reconnect` without its precondition: the connection we closed and nothing
/// after it, or a new connection that offers no back channel, is inconclusive with the
/// reason; the conformant requester binds its back channel again and passes.
#[test]
fn the_burst_after_a_reconnect_needs_the_reconnect_and_the_back_channel_again() {
    use rpcrdma_peers::responder::Scenario;
    let id = "rfc8167/4.3.1/requester-reverse-receives-after-reconnect";
    let check = reverse::CHECKS.iter().find(|c| c.info.id == id).unwrap();
    let scenario = Some(Scenario::ReverseBurstReconnect);
    let (conns, errors) = observed_workloads(&config(), &[scenario], &nfs41(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(conns.len() >= 2, "no reconnect: {} connections", conns.len());
    let get = |conns: &[ObservedConnection]| {
        let r = judge(&[check], conns, &Profile::default()).remove(0);
        (r.outcome, r.actual.to_string())
    };
    let (outcome, actual) = get(&conns);
    assert_eq!(outcome, Outcome::Pass, "{actual}");
    // Only the connection we closed: the requester never came back.
    let (outcome, actual) = get(&conns[..1]);
    assert_eq!(outcome, Outcome::Inconclusive, "{actual}");
    assert!(actual.contains("never connected again"), "{actual}");
    // A new connection whose calls offer no back channel (its BIND_CONN_TO_SESSION left out),
    // nor any reverse-direction call of ours on it.
    let mut unbound = conns.clone();
    for c in &mut unbound[1..] {
        c.events.retain(|(_, e)| match e {
            // The requester's COMPOUND tag is its step's name.
            Observed::FromRequester(b) => !b.windows(20).any(|w| w == b"BIND_CONN_TO_SESSION"),
            _ => true,
        });
    }
    let (outcome, actual) = get(&unbound);
    assert_eq!(outcome, Outcome::Inconclusive, "{actual}");
    assert!(actual.contains("offered no back channel"), "{actual}");
}
