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

/// The reference responder behind a connection that rewrites the NFSv3 READDIR calls we send
/// to ask for at most 256 bytes: a responder that answers a READDIR with a short listing, so
/// the reply fits inline and the reply chunk is never needed.
struct ShortReaddir(EmulatedConnector<Responder>);

struct ShortReaddirConnection(Box<dyn rpcrdma_peers::transport::Connection>);

impl rpcrdma_peers::transport::Connector for ShortReaddir {
    fn connect(
        &mut self,
        private_data: &[u8],
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<Box<dyn rpcrdma_peers::transport::Connection>> {
        Ok(Box::new(ShortReaddirConnection(self.0.connect(private_data, deadline)?)))
    }

    fn describe(&self) -> String {
        "emulated, READDIR counts cut to 256".into()
    }
}

impl rpcrdma_peers::transport::Connection for ShortReaddirConnection {
    fn peer_private_data(&self) -> &[u8] {
        self.0.peer_private_data()
    }
    fn post_recv(&mut self, size: usize, count: usize) -> rpcrdma_peers::transport::Result<()> {
        self.0.post_recv(size, count)
    }
    fn send(&mut self, msg: &[u8]) -> rpcrdma_peers::transport::Result<()> {
        // An RPC call (msg_type 0, rpcvers 2) to NFS (100003) version 3, procedure 16
        // (READDIR): READDIR3args end with the count (RFC 1813 3.3.16), the last word of an
        // RDMA_MSG.
        let readdir: Vec<u8> = [0u32, 2, 100_003, 3, 16].iter().flat_map(|w| w.to_be_bytes()).collect();
        let mut msg = msg.to_vec();
        if msg.windows(readdir.len()).any(|w| w == readdir) {
            let n = msg.len();
            msg[n - 4..].copy_from_slice(&256u32.to_be_bytes());
        }
        self.0.send(&msg)
    }
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> rpcrdma_peers::transport::Result<()> {
        self.0.send_with_invalidate(msg, handle)
    }
    fn register(
        &mut self,
        length: u32,
        access: rpcrdma_peers::transport::Access,
    ) -> rpcrdma_peers::transport::Result<rpcrdma_peers::transport::Region> {
        self.0.register(length, access)
    }
    fn write_local(
        &mut self,
        region: &rpcrdma_peers::transport::Region,
        at: u32,
        data: &[u8],
    ) -> rpcrdma_peers::transport::Result<()> {
        self.0.write_local(region, at, data)
    }
    fn read_local(&self, region: &rpcrdma_peers::transport::Region) -> rpcrdma_peers::transport::Result<Vec<u8>> {
        self.0.read_local(region)
    }
    fn accesses(
        &self,
        region: &rpcrdma_peers::transport::Region,
    ) -> rpcrdma_peers::transport::Result<Vec<rpcrdma_peers::transport::RemoteAccess>> {
        self.0.accesses(region)
    }
    fn is_valid(&self, region: &rpcrdma_peers::transport::Region) -> bool {
        self.0.is_valid(region)
    }
    fn deregister(&mut self, region: &rpcrdma_peers::transport::Region) -> rpcrdma_peers::transport::Result<()> {
        self.0.deregister(region)
    }
    fn rdma_read(
        &mut self,
        handle: u32,
        offset: u64,
        length: u32,
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<Vec<u8>> {
        self.0.rdma_read(handle, offset, length, deadline)
    }
    fn rdma_write(
        &mut self,
        handle: u32,
        offset: u64,
        data: &[u8],
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<()> {
        self.0.rdma_write(handle, offset, data, deadline)
    }
    fn poll(
        &mut self,
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<rpcrdma_peers::transport::Event> {
        self.0.poll(deadline)
    }
    fn disconnect(&mut self) {
        self.0.disconnect()
    }
    fn is_connected(&self) -> bool {
        self.0.is_connected()
    }
}

/// The reference responder behind a connection that loses every message of the responder's
/// that answers no call of ours (its reverse-direction calls, RFC 8167): a server that never
/// calls back, so the reverse-direction checks have nothing to judge.
/// With `cb_null_only`, only the CB_NULLs (procedure 0) are lost, answered by the connection.
struct NoReverseCalls(EmulatedConnector<Responder>, bool);

struct NoReverseCallsConnection {
    inner: Box<dyn rpcrdma_peers::transport::Connection>,
    cb_null_only: bool,
    /// The rdma_xid of every message we sent.
    sent: std::collections::HashSet<u32>,
}

impl rpcrdma_peers::transport::Connector for NoReverseCalls {
    fn connect(
        &mut self,
        private_data: &[u8],
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<Box<dyn rpcrdma_peers::transport::Connection>> {
        let inner = self.0.connect(private_data, deadline)?;
        Ok(Box::new(NoReverseCallsConnection { inner, cb_null_only: self.1, sent: Default::default() }))
    }

    fn describe(&self) -> String {
        "emulated, the responder's reverse-direction calls lost".into()
    }
}

/// Word `i` of a message.
fn word(m: &[u8], i: usize) -> Option<u32> {
    m.get(4 * i..4 * i + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl rpcrdma_peers::transport::Connection for NoReverseCallsConnection {
    fn peer_private_data(&self) -> &[u8] {
        self.inner.peer_private_data()
    }
    fn post_recv(&mut self, size: usize, count: usize) -> rpcrdma_peers::transport::Result<()> {
        self.inner.post_recv(size, count)
    }
    fn send(&mut self, msg: &[u8]) -> rpcrdma_peers::transport::Result<()> {
        self.sent.extend(word(msg, 0));
        self.inner.send(msg)
    }
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> rpcrdma_peers::transport::Result<()> {
        self.sent.extend(word(msg, 0));
        self.inner.send_with_invalidate(msg, handle)
    }
    fn register(
        &mut self,
        length: u32,
        access: rpcrdma_peers::transport::Access,
    ) -> rpcrdma_peers::transport::Result<rpcrdma_peers::transport::Region> {
        self.inner.register(length, access)
    }
    fn write_local(
        &mut self,
        region: &rpcrdma_peers::transport::Region,
        at: u32,
        data: &[u8],
    ) -> rpcrdma_peers::transport::Result<()> {
        self.inner.write_local(region, at, data)
    }
    fn read_local(&self, region: &rpcrdma_peers::transport::Region) -> rpcrdma_peers::transport::Result<Vec<u8>> {
        self.inner.read_local(region)
    }
    fn accesses(
        &self,
        region: &rpcrdma_peers::transport::Region,
    ) -> rpcrdma_peers::transport::Result<Vec<rpcrdma_peers::transport::RemoteAccess>> {
        self.inner.accesses(region)
    }
    fn is_valid(&self, region: &rpcrdma_peers::transport::Region) -> bool {
        self.inner.is_valid(region)
    }
    fn deregister(&mut self, region: &rpcrdma_peers::transport::Region) -> rpcrdma_peers::transport::Result<()> {
        self.inner.deregister(region)
    }
    fn rdma_read(
        &mut self,
        handle: u32,
        offset: u64,
        length: u32,
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<Vec<u8>> {
        self.inner.rdma_read(handle, offset, length, deadline)
    }
    fn rdma_write(
        &mut self,
        handle: u32,
        offset: u64,
        data: &[u8],
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<()> {
        self.inner.rdma_write(handle, offset, data, deadline)
    }
    fn poll(
        &mut self,
        deadline: std::time::Instant,
    ) -> rpcrdma_peers::transport::Result<rpcrdma_peers::transport::Event> {
        use rpcrdma_peers::transport::Event;
        loop {
            let e = self.inner.poll(deadline)?;
            if let Event::Recv { data, .. } = &e {
                // Not a reply to us: another XID, or an RDMA_MSG carrying an RPC CALL.
                let ours = word(data, 0).is_some_and(|x| self.sent.contains(&x));
                let call = word(data, 3) == Some(0) && word(data, 8) == Some(0);
                let lost = if self.cb_null_only { call && word(data, 12) == Some(0) } else { !ours || call };
                if !data.is_empty() && lost {
                    self.inner.post_recv(4096, 1)?;
                    if self.cb_null_only {
                        // Answered here, unseen by the check (RFC 8167 5.2: RDMA_MSG with the
                        // RPC XID, then an accepted SUCCESS reply; one reverse credit granted).
                        let xid = word(data, 7).unwrap_or(0);
                        let reply: Vec<u8> =
                            [xid, 1, 1, 0, 0, 0, 0, xid, 1, 0, 0, 0, 0].iter().flat_map(|w| w.to_be_bytes()).collect();
                        self.inner.send(&reply)?;
                    }
                    continue;
                }
            }
            return Ok(e);
        }
    }
    fn disconnect(&mut self) {
        self.inner.disconnect()
    }
    fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }
}

/// A server that sends no CB_NULL (Linux nfsd sends none to NFSv4.1 clients) is made to call
/// back by a recall: the reverse-direction checks judge its CB_RECALL instead.
#[test]
fn without_cb_null_the_reverse_checks_judge_a_provoked_recall() {
    for id in
        ["rfc8167/5.1/reverse-call-framing", "rfc8167/5.2/hostile-reverse-replies", "rfc8167/4.1/reverse-credits-kept"]
    {
        let mut conn = NoReverseCalls(responder(Faults::default()), true);
        let r = run_check(check(id), &mut conn, &options());
        assert_eq!(r.outcome, Outcome::Pass, "{id}: {}", r.actual);
    }
    // The CB_RECALL is judged: a framing fault shows on it.
    let mut conn = NoReverseCalls(responder(Faults::only("reverse-call-xid-mismatch")), true);
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
    let no_reverse: NoChance = |f| Box::new(NoReverseCalls(responder(f), false));
    let cases: [(&str, NoChance, &[&str]); 6] = [
        // A short listing fits inline: nothing had to go through the reply chunk.
        (
            "rfc8166/3.5.3/long-reply-via-reply-chunk",
            |f| Box::new(ShortReaddir(responder(f))),
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
    ];
    for c in catalogue::all().iter().filter(|c| c.info.precondition.is_some()) {
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
