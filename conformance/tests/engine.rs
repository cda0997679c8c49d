//! The engine against the embedded reference responder over the emulated transport: every
//! check passes against the faithful responder, and every check notices the fault switch
//! that breaks the requirement it tests.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::codec::profile::ErrorArm;
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::{
    run_check, run_checks, Actual, Check, CheckInfo, Ctx, Direction, Mismatch, NoMessage, Outcome, RunOptions,
};
use rpcrdma_conformance::frame;
use rpcrdma_peers::responder::{Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::forward::{BentConnector, Hooks};
use rpcrdma_peers::transport::{Connection, Event, Result as TResult};

mod common;
use common::{check, options, responder};

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
    // found (conformance/tests/fuzz.rs, fuzz_reverse.rs).
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
    info: CheckInfo::stub("test/0/broken-scenario"),
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

/// The reference responder behind connections that `hooks` bend (a fresh copy of them for
/// each connection): a peer that never gives a check the event it needs.
type Bent<H> = BentConnector<EmulatedConnector<Responder>, H>;

/// The reference responder with `faults`, bent by `hooks` (`what` says how).
fn bent<H: Hooks + Clone>(faults: Faults, hooks: H, what: &str) -> Bent<H> {
    BentConnector::new(responder(faults), hooks, format!("emulated, {what}"))
}

/// The reference responder behind a connection that rewrites the NFSv3 READDIR calls we send
/// to ask for at most 256 bytes: a responder that answers a READDIR with a short listing, so
/// the reply fits inline and the reply chunk is never needed.
fn short_readdir(faults: Faults) -> Bent<ShortReaddirHooks> {
    bent(faults, ShortReaddirHooks, "READDIR counts cut to 256")
}

/// Cuts the count of every READDIR call we send.
#[derive(Clone)]
struct ShortReaddirHooks;

impl Hooks for ShortReaddirHooks {
    fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> TResult<()> {
        // An RPC call (msg_type 0, rpcvers 2) to NFS (100003) version 3, procedure 16
        // (READDIR): READDIR3args end with the count (RFC 1813 3.3.16), the last word of an
        // RDMA_MSG.
        let readdir: Vec<u8> = [0u32, 2, 100_003, 3, 16].iter().flat_map(|w| w.to_be_bytes()).collect();
        let mut msg = msg.to_vec();
        if msg.windows(readdir.len()).any(|w| w == readdir) {
            let n = msg.len();
            msg[n - 4..].copy_from_slice(&256u32.to_be_bytes());
        }
        inner.send(&msg)
    }
}

/// The reference responder behind a connection that loses every message of the responder's
/// that answers no call of ours (its reverse-direction calls, RFC 8167): a server that never
/// calls back, so the reverse-direction checks have nothing to judge.
/// With `cb_null_only`, only the CB_NULLs (procedure 0) are lost, answered by the connection.
fn no_reverse_calls(faults: Faults, cb_null_only: bool) -> Bent<NoReverseCallsHooks> {
    let hooks = NoReverseCallsHooks { cb_null_only, sent: Default::default() };
    bent(faults, hooks, "the responder's reverse-direction calls lost")
}

/// Loses the responder's messages that answer no call of ours (or only its CB_NULLs).
#[derive(Clone)]
struct NoReverseCallsHooks {
    cb_null_only: bool,
    /// The rdma_xid of every message we sent.
    sent: std::collections::HashSet<u32>,
}

/// Word `i` of a message.
fn word(m: &[u8], i: usize) -> Option<u32> {
    m.get(4 * i..4 * i + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl Hooks for NoReverseCallsHooks {
    fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> TResult<()> {
        self.sent.extend(word(msg, 0));
        inner.send(msg)
    }
    fn send_with_invalidate(&mut self, inner: &mut dyn Connection, msg: &[u8], handle: u32) -> TResult<()> {
        self.sent.extend(word(msg, 0));
        inner.send_with_invalidate(msg, handle)
    }
    fn poll(&mut self, inner: &mut dyn Connection, deadline: std::time::Instant) -> TResult<Event> {
        loop {
            let e = inner.poll(deadline)?;
            if let Event::Recv { data, .. } = &e {
                // Not a reply to us: another XID, or an RDMA_MSG carrying an RPC CALL.
                let ours = word(data, 0).is_some_and(|x| self.sent.contains(&x));
                let call = word(data, 3) == Some(0) && word(data, 8) == Some(0);
                let lost = if self.cb_null_only { call && word(data, 12) == Some(0) } else { !ours || call };
                if !data.is_empty() && lost {
                    inner.post_recv(4096, 1)?;
                    if self.cb_null_only {
                        // Answered here, unseen by the check (RFC 8167 5.2: RDMA_MSG with the
                        // RPC XID, then an accepted SUCCESS reply; one reverse credit granted).
                        let xid = word(data, 7).unwrap_or(0);
                        let reply: Vec<u8> =
                            [xid, 1, 1, 0, 0, 0, 0, xid, 1, 0, 0, 0, 0].iter().flat_map(|w| w.to_be_bytes()).collect();
                        inner.send(&reply)?;
                    }
                    continue;
                }
            }
            return Ok(e);
        }
    }
}

/// A server that sends no CB_NULL (Linux nfsd sends none to NFSv4.1 clients) is made to call
/// back by a recall: the reverse-direction checks judge its CB_RECALL instead.
#[test]
fn without_cb_null_the_reverse_checks_judge_a_provoked_recall() {
    for id in
        ["rfc8167/5.1/reverse-call-framing", "rfc8167/5.2/hostile-reverse-replies", "rfc8167/4.1/reverse-credits-kept"]
    {
        let mut conn = no_reverse_calls(Faults::default(), true);
        let r = run_check(check(id), &mut conn, &options());
        assert_eq!(r.outcome, Outcome::Pass, "{id}: {}", r.actual);
    }
    // The CB_RECALL is judged: a framing fault shows on it.
    let mut conn = no_reverse_calls(Faults::only("reverse-call-xid-mismatch"), true);
    let r = run_check(check("rfc8167/5.1/reverse-call-framing"), &mut conn, &options());
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.actual);
}

/// Each server check declaring a precondition: a responder that never gives the event is
/// inconclusive (never a pass, even when it carries the fault), and one that breaks the rule
/// once given it fails.
#[test]
fn a_server_check_whose_precondition_did_not_happen_is_inconclusive_and_a_breaking_peer_fails() {
    type NoChance = fn(Faults) -> Box<dyn rpcrdma_peers::transport::Connector>;
    // (check, a responder that gives no chance, the faults that break the rule given the chance)
    let no_reverse: NoChance = |f| Box::new(no_reverse_calls(f, false));
    let cases: [(&str, NoChance, &[&str]); 7] = [
        // A short listing fits inline: nothing had to go through the reply chunk.
        (
            "rfc8166/3.5.3/long-reply-via-reply-chunk",
            |f| Box::new(short_readdir(f)),
            &["ignore-reply-chunk", "reply-chunk-offset-advanced"],
        ),
        // A server that never calls back gives the reverse-direction checks nothing to judge.
        ("rfc8167/6/no-call-before-back-channel", no_reverse, &["cb-before-back-channel"]),
        (
            "rfc8167/5.1/reverse-call-framing",
            no_reverse,
            &["reverse-call-vers-2", "reverse-call-xid-mismatch", "reverse-call-reply-type"],
        ),
        ("rfc8267/6.5.2/short-reverse-calls", no_reverse, &["reverse-call-long", "cb-large-call"]),
        ("rfc8167/4.1/reverse-credits-kept", no_reverse, &["reverse-call-over-credits"]),
        ("rfc8167/5.2/hostile-reverse-replies", no_reverse, &["reverse-reply-answered"]),
        // Its fault is pass-lax (no key word asks for the retransmission), proven by
        // every_check_notices_its_fault.
        ("rfc8167/5.4/recall-resent-after-reconnect", no_reverse, &[]),
    ];
    // RFC 8267 6.4's checks are proven the same way in tests/nfs41_forward.rs.
    let elsewhere = |id: &str| id.starts_with("rfc8267/6.4.");
    for c in catalogue::all().iter().filter(|c| c.info.precondition.is_some() && !elsewhere(c.info.id)) {
        assert!(cases.iter().any(|(id, _, _)| *id == c.info.id), "{}: precondition not proven here", c.info.id);
    }
    for (id, no_chance, faults) in cases {
        let c = check(id);
        assert!(c.info.precondition.is_some(), "{id} declares no precondition");
        let r = run_check(c, no_chance(Faults::default()).as_mut(), &options());
        assert_eq!(r.outcome, Outcome::Inconclusive, "{id} with no chance: {}", r.actual);
        // A conformant responder given the chance passes.
        let r = run_check(c, &mut responder(Faults::default()), &options());
        assert_eq!(r.outcome, Outcome::Pass, "{id}: {}", r.actual);
        for fault in faults {
            // Breaking the rule with no chance to show it says nothing...
            let r = run_check(c, no_chance(Faults::only(fault)).as_mut(), &options());
            assert_eq!(r.outcome, Outcome::Inconclusive, "{id} with {fault} and no chance: {}", r.actual);
            // ...and fails once given the chance.
            let r = run_check(c, &mut responder(Faults::only(fault)), &options());
            assert_eq!(r.outcome, Outcome::Fail, "{id} with {fault}: {}", r.actual);
        }
    }
}

/// Replaces every message the responder sends with RDMA_ERROR of rdma_err 3 followed by
/// RFC 5666 4.3's `rdma_extra[8]`: a message only the RFC 5666 error arm decodes.
#[derive(Clone)]
struct UnknownErrorHooks;

impl Hooks for UnknownErrorHooks {
    fn poll(&mut self, inner: &mut dyn Connection, deadline: std::time::Instant) -> TResult<Event> {
        Ok(match inner.poll(deadline)? {
            Event::Recv { status, data, invalidated } => {
                let mut w = vec![word(&data, 0).unwrap_or(0), 1, 1, 4, 3];
                w.extend([0; 8]);
                Event::Recv { status, data: w.iter().flat_map(|x| x.to_be_bytes()).collect(), invalidated }
            }
            other => other,
        })
    }
}

/// The run's profile reaches every decode: the same received bytes are malformed under the
/// defaults (RFC 8166 4.1.2 has no default error arm) and an RDMA_ERROR under the RFC 5666
/// error arm.
#[test]
fn every_received_message_is_decoded_under_the_runs_profile() {
    let rfc5666 = Profile { error_arm: ErrorArm::Rfc5666, ..Profile::default() };
    for (profile, decodes) in [(Profile::default(), false), (rfc5666, true)] {
        let mut conn = bent(Faults::default(), UnknownErrorHooks, "errors of code 3");
        let mut ctx = Ctx::new(&mut conn, RunOptions { profile, ..options() });
        ctx.connect().expect("connected");
        let null = ctx.null();
        let got = ctx.call(&null.msg());
        let f = got.frame().expect("a message");
        assert_eq!(f.header.is_ok(), decodes, "{profile:?}: {f}");
    }
}
