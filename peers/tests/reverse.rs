//! The responder's reverse direction (RFC 8167), driven from a hand-made requester over the
//! emulated fabric: a small upper layer queues reverse-direction calls when it serves a
//! forward NULL, and records the reverse-direction replies it is handed. Expected bytes are
//! written word by word from RFC 8167 5.1 and RFC 8166 4.2, not taken from the responder.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpcrdma_peers::responder::reverse::REQUESTED_REVERSE_CREDITS;
use rpcrdma_peers::responder::{Config, Faults, Responder, Scenario, UlpFactory};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::{Connection, Connector, Event, WcStatus};
use rpcrdma_peers::ulp::{UlpOutcome, UlpResults, UpperLayer};

/// A callback program number (any: RFC 8881 18.36 lets the client choose cb_program).
const CB_PROG: u32 = 0x4000_0000;
const FORWARD_XID: u32 = 0x0102_0304;

/// XDR words to bytes.
fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// CB_NULL (procedure 0) as an RPC call (RFC 5531 9: xid, CALL = 0, rpcvers 2, prog, vers,
/// proc, AUTH_NONE credential and verifier).
fn cb_null(xid: u32) -> Vec<u8> {
    words(&[xid, 0, 2, CB_PROG, 1, 0, 0, 0, 0, 0])
}

/// An accepted, SUCCESS RPC reply with no results (RFC 5531 9: xid, REPLY = 1, MSG_ACCEPTED,
/// AUTH_NONE verifier, SUCCESS).
fn rpc_reply(xid: u32) -> Vec<u8> {
    words(&[xid, 1, 0, 0, 0, 0])
}

/// RFC 8166 4.2: RDMA_MSG (0) with three empty chunk lists, then the RPC message.
fn rdma_msg(xid: u32, credit: u32, rpc: &[u8]) -> Vec<u8> {
    let mut m = words(&[xid, 1, credit, 0, 0, 0, 0]);
    m.extend_from_slice(rpc);
    m
}

/// Queues `count` CB_NULLs (XIDs 0xc0000001...) on the first forward call; keeps the
/// reverse-direction replies it is handed.
struct Callbacks {
    count: u32,
    queued: bool,
    replies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl UpperLayer for Callbacks {
    fn call(&mut self, _prog: u32, _vers: u32, _proc: u32, _args: &[u8]) -> UlpOutcome {
        UlpOutcome::Success(UlpResults::default())
    }

    fn take_reverse_calls(&mut self) -> Vec<Vec<u8>> {
        if std::mem::replace(&mut self.queued, true) {
            return Vec::new();
        }
        (1..=self.count).map(|i| cb_null(0xc000_0000 + i)).collect()
    }

    fn reverse_reply(&mut self, msg: &[u8]) {
        self.replies.lock().unwrap().push(msg.to_vec());
    }
}

struct Peer {
    conn: Box<dyn Connection>,
    replies: Arc<Mutex<Vec<Vec<u8>>>>,
    _responder: Responder,
}

/// Connects a requester to a responder whose upper layer queues `count` reverse calls, and
/// sends the forward NULL that makes it queue them.
fn connect(count: u32, faults: Faults) -> Peer {
    connect_with(count, Config { faults, ..Config::default() })
}

fn connect_with(count: u32, config: Config) -> Peer {
    let replies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let r = replies.clone();
    let ulp: UlpFactory =
        Arc::new(move || Box::new(Callbacks { count, queued: false, replies: r.clone() }) as Box<dyn UpperLayer>);
    let config = Config { idle_poll: Duration::from_millis(20), ..config };
    let responder = Responder::new(config, ulp);
    let mut conn = EmulatedConnector::new(responder.clone()).connect(&[], Instant::now() + secs(5)).expect("connect");
    conn.post_recv(4096, 16).unwrap();
    conn.send(&rdma_msg(FORWARD_XID, 4, &words(&[FORWARD_XID, 0, 2, 100003, 3, 0, 0, 0, 0, 0]))).unwrap();
    Peer { conn, replies, _responder: responder }
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

impl Peer {
    /// The messages received until `quiet` passes with none.
    fn received(&mut self, quiet: Duration) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            match self.conn.poll(Instant::now() + quiet) {
                Ok(Event::Recv { status: WcStatus::Success, data, .. }) => out.push(data),
                Ok(Event::SendDone { .. }) => {}
                Ok(e) => panic!("unexpected {e:?}"),
                Err(_) => return out,
            }
        }
    }

    /// The reverse calls among `msgs` (RPC msg_type CALL at payload word 1 of an RDMA_MSG).
    fn calls(msgs: &[Vec<u8>]) -> Vec<Vec<u8>> {
        msgs.iter()
            .filter(|m| {
                m.get(3 * 4..4 * 4) == Some(&[0, 0, 0, 0][..]) && m.get(7 * 4 + 4..7 * 4 + 8) == Some(&[0, 0, 0, 0][..])
            })
            .cloned()
            .collect()
    }
}

fn word(m: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(m[4 * i..4 * i + 4].try_into().unwrap())
}

#[test]
fn a_reverse_call_is_framed_as_rfc_8167_5_1_says() {
    let mut p = connect(1, Faults::default());
    let got = p.received(Duration::from_millis(500));
    // The forward reply (RPC REPLY) and one reverse call.
    assert_eq!(got.len(), 2, "{got:02x?}");
    assert!(got.iter().any(|m| word(m, 0) == FORWARD_XID && word(m, 8) == 1), "forward reply {got:02x?}");
    let call = got.iter().find(|m| word(m, 0) != FORWARD_XID).expect("a reverse call");
    // rdma_xid = the RPC XID, rdma_vers 1 (as our forward call), rdma_credit the credits
    // requested, RDMA_MSG, no chunks, then the upper layer's call unchanged.
    let expected = rdma_msg(0xc000_0001, REQUESTED_REVERSE_CREDITS, &cb_null(0xc000_0001));
    assert_eq!(call, &expected);
}

#[test]
fn reverse_calls_stay_within_the_reverse_grant_and_replies_reach_the_upper_layer() {
    let mut p = connect(3, Faults::default());
    let got = p.received(Duration::from_millis(400));
    // One reverse credit before any reverse reply granted more (RFC 8167 4.1).
    let calls = Peer::calls(&got);
    assert_eq!(calls.len(), 1, "{got:02x?}");
    // Our reverse reply grants two: the two other calls may follow; forward credits (4, from
    // our forward call) play no part.
    p.conn.send(&rdma_msg(0xc000_0001, 2, &rpc_reply(0xc000_0001))).unwrap();
    let got = p.received(Duration::from_millis(400));
    let calls = Peer::calls(&got);
    assert_eq!(calls.iter().map(|m| word(m, 0)).collect::<Vec<_>>(), vec![0xc000_0002, 0xc000_0003]);
    // Our reply went to the upper layer, unanswered on the wire (only the two calls came).
    assert_eq!(got.len(), 2, "{got:02x?}");
    assert_eq!(*p.replies.lock().unwrap(), vec![rpc_reply(0xc000_0001)]);
}

#[test]
fn hostile_reverse_replies_are_discarded_and_the_connection_lives() {
    let mut p = connect(1, Faults::default());
    p.received(Duration::from_millis(400));
    // Unknown XID; XIDs differing between the headers; too short for an RPC reply.
    p.conn.send(&rdma_msg(0x7777_0000, 1, &rpc_reply(0x7777_0000))).unwrap();
    p.conn.send(&rdma_msg(0xc000_0001, 1, &rpc_reply(0xc000_0002))).unwrap();
    p.conn.send(&rdma_msg(0xc000_0001, 1, &words(&[0xc000_0001, 1]))).unwrap();
    let got = p.received(Duration::from_millis(400));
    assert!(got.is_empty(), "nothing answers a reply: {got:02x?}");
    assert!(p.replies.lock().unwrap().is_empty());
    // Still serving: a forward NULL is answered, and the real reply still matches.
    p.conn.send(&rdma_msg(7, 4, &words(&[7, 0, 2, 100003, 3, 0, 0, 0, 0, 0]))).unwrap();
    p.conn.send(&rdma_msg(0xc000_0001, 1, &rpc_reply(0xc000_0001))).unwrap();
    let got = p.received(Duration::from_millis(400));
    assert_eq!(got.len(), 1, "{got:02x?}");
    assert_eq!(word(&got[0], 0), 7);
    assert_eq!(*p.replies.lock().unwrap(), vec![rpc_reply(0xc000_0001)]);
}

/// The reverse call under one fault.
fn faulty_call(fault: &str) -> (Peer, Vec<u8>) {
    let mut p = connect(1, Faults::only(fault));
    let got = p.received(Duration::from_millis(400));
    let call = got.into_iter().find(|m| word(m, 0) != FORWARD_XID).expect("a reverse call");
    (p, call)
}

#[test]
fn each_framing_fault_breaks_its_rule() {
    assert_eq!(word(&faulty_call("reverse-call-vers-2").1, 1), 2);
    let (_, c) = faulty_call("reverse-call-xid-mismatch");
    assert_ne!(word(&c, 0), word(&c, 7));
    let (_, c) = faulty_call("reverse-call-reply-type");
    assert_eq!(word(&c, 8), 1, "RPC msg_type REPLY");
    // RDMA_NOMSG, one position-zero read segment holding the whole call (RFC 8166 4.2).
    let (mut p, c) = faulty_call("reverse-call-long");
    assert_eq!(word(&c, 3), 1, "RDMA_NOMSG");
    assert_eq!((word(&c, 4), word(&c, 5)), (1, 0), "a read segment at position zero");
    let (handle, len) = (word(&c, 6), word(&c, 7));
    let offset = u64::from(word(&c, 8)) << 32 | u64::from(word(&c, 9));
    let pulled = p.conn.rdma_read(handle, offset, len, Instant::now() + secs(5)).unwrap();
    assert_eq!(pulled, cb_null(0xc000_0001));
}

#[test]
fn over_credits_sends_every_call_at_once() {
    let mut p = connect(3, Faults::only("reverse-call-over-credits"));
    let got = p.received(Duration::from_millis(400));
    assert_eq!(Peer::calls(&got).len(), 3, "{got:02x?}");
}

#[test]
fn a_reply_taken_for_a_call_is_answered_with_err_chunk() {
    let mut p = connect(1, Faults::only("reverse-reply-answered"));
    p.received(Duration::from_millis(400));
    p.conn.send(&rdma_msg(0xc000_0001, 1, &rpc_reply(0xc000_0001))).unwrap();
    let got = p.received(Duration::from_millis(400));
    // RDMA_ERROR (4), ERR_CHUNK (2) (RFC 8166 4.2).
    assert_eq!(got.len(), 1, "{got:02x?}");
    assert_eq!((word(&got[0], 3), word(&got[0], 4)), (4, 2));
    assert!(p.replies.lock().unwrap().is_empty());
}

#[test]
fn an_err_chunk_ends_the_reverse_call_it_answers() {
    let mut p = connect(2, Faults::default());
    assert_eq!(Peer::calls(&p.received(Duration::from_millis(400))).len(), 1);
    // RDMA_ERROR (4) ERR_CHUNK (2) for the first call frees its credit (RFC 8167 5.3).
    p.conn.send(&words(&[0xc000_0001, 1, 1, 4, 2])).unwrap();
    let got = p.received(Duration::from_millis(400));
    assert_eq!(Peer::calls(&got).iter().map(|m| word(m, 0)).collect::<Vec<_>>(), vec![0xc000_0002]);
    assert!(p.replies.lock().unwrap().is_empty());
}

#[test]
fn reverse_burst_sends_the_granted_calls_after_the_first_reply() {
    let config = Config { scenario: Scenario::named("reverse-burst"), ..Config::default() };
    let mut p = connect_with(1, config);
    assert_eq!(Peer::calls(&p.received(Duration::from_millis(400))).len(), 1);
    p.conn.send(&rdma_msg(0xc000_0001, 3, &rpc_reply(0xc000_0001))).unwrap();
    let got = p.received(Duration::from_millis(400));
    let xids: Vec<u32> = Peer::calls(&got).iter().map(|m| word(m, 0)).collect();
    let first = Scenario::REVERSE_XID;
    assert_eq!(xids, vec![first, first + 1, first + 2]);
}

#[test]
fn reverse_chunks_offers_a_write_list_with_its_call() {
    let config = Config { scenario: Scenario::named("reverse-chunks"), ..Config::default() };
    let mut p = connect_with(1, config);
    p.received(Duration::from_millis(400));
    p.conn.send(&rdma_msg(0xc000_0001, 3, &rpc_reply(0xc000_0001))).unwrap();
    let got = p.received(Duration::from_millis(400));
    assert_eq!(got.len(), 1, "{got:02x?}");
    let c = &got[0];
    assert_eq!(word(c, 0), Scenario::REVERSE_XID);
    // No read list; a write list of one chunk of one 64-byte segment, then its end, no
    // reply chunk (RFC 8166 4.2), then the RPC call.
    assert_eq!((word(c, 4), word(c, 5), word(c, 6), word(c, 7), word(c, 8)), (0, 1, 1, 0x0bad_c0de, 64));
    assert_eq!((word(c, 11), word(c, 12), word(c, 13), word(c, 14)), (0, 0, Scenario::REVERSE_XID, 0));
}
