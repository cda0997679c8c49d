//! The verbs transport against itself over a real RDMA device (soft-RoCE or soft-iWARP in
//! the Linux peer VM): the emulated fabric's semantics, checked on hardware verbs, each test
//! asserting what the device's fabric guarantees (`rpcrdma_harness::verbs::Fabric`; docs/fabrics.md). Runs only
//! where `RPCRDMA_VERBS_TEST_ADDR` names a local address on an RDMA netdev (e.g. `10.55.0.1`
//! on rxe, `10.55.1.1` on siw); elsewhere each test returns at once. In the VM:
//! `RPCRDMA_VERBS_TEST_ADDR=10.55.0.1 ./verbs_loopback-HASH --test-threads=1`.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use rpcrdma_harness::verbs::{VerbsConnection, VerbsConnector, VerbsListener};
use rpcrdma_peers::transport::{Access, Connection, Connector, Event, TransportError, WcStatus};

fn addr(port: u16) -> Option<SocketAddr> {
    let ip: IpAddr = std::env::var("RPCRDMA_VERBS_TEST_ADDR").ok()?.parse().ok()?;
    Some(SocketAddr::new(ip, port))
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

const ACTIVE_PD: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
const PASSIVE_PD: [u8; 8] = [9; 8];

/// A connected pair over the device: (active, passive). The passive side posts `recvs`
/// receives of `size` bytes before accepting; the active side connects with `connect`.
fn pair_with<A>(
    l: &mut VerbsListener,
    size: usize,
    recvs: usize,
    connect: impl FnOnce(&mut VerbsConnector) -> A,
) -> (A, VerbsConnection) {
    let at = l.local_addr();
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut p = l.next_request(soon()).expect("connect request");
            assert!(p.private_data().starts_with(&ACTIVE_PD), "{:?}", p.private_data());
            p.post_recv(size, recvs).unwrap();
            p.accept(&PASSIVE_PD, soon()).expect("accept")
        });
        let mut c = VerbsConnector::new(&at.ip().to_string(), at.port()).expect("verbs environment");
        (connect(&mut c), h.join().unwrap())
    })
}

/// As [`pair_with`], the active side through the [`Connector`] API.
fn pair(l: &mut VerbsListener, size: usize, recvs: usize) -> (Box<dyn Connection>, VerbsConnection) {
    pair_with(l, size, recvs, |c| c.connect(&ACTIVE_PD, soon()).expect("connect"))
}

fn listener(port: u16) -> Option<VerbsListener> {
    let a = addr(port)?;
    Some(VerbsListener::bind(a).expect("listen"))
}

#[test]
fn private_data_arrives_zero_padded_and_sends_in_order() {
    let Some(mut l) = listener(7471) else { return };
    let (mut a, mut b) = pair(&mut l, 1024, 2);
    let fabric = b.fabric();
    eprintln!(
        "{}: REP private data {} bytes, REQ {}",
        fabric.name(),
        a.peer_private_data().len(),
        b.peer_private_data().len()
    );
    if fabric.pads_private_data() {
        // InfiniBand CM: the REQ and REP private data areas, zero-filled past what was sent.
        assert!(a.peer_private_data().len() > 8, "{:?}", a.peer_private_data());
        assert_eq!(&a.peer_private_data()[..9], &[9, 9, 9, 9, 9, 9, 9, 9, 0]);
        assert!(b.peer_private_data()[8..].iter().all(|&x| x == 0), "{:?}", b.peer_private_data());
    } else {
        // MPA carries exactly the bytes sent.
        assert_eq!(a.peer_private_data(), &PASSIVE_PD);
        assert_eq!(b.peer_private_data(), &ACTIVE_PD);
    }
    a.send(b"one").unwrap();
    a.send(b"two").unwrap();
    assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
    assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
    for want in [&b"one"[..], b"two"] {
        match b.poll(soon()).unwrap() {
            Event::Recv { status: WcStatus::Success, data, invalidated: None } => assert_eq!(data, want),
            other => panic!("{other:?}"),
        }
    }
    let t = Instant::now();
    assert_eq!(a.poll(t + Duration::from_millis(50)), Err(TransportError::Timeout));
    assert!(t.elapsed() >= Duration::from_millis(45));
    assert!(a.is_connected() && b.is_connected());
    drop(b);
    assert_eq!(a.poll(soon()).unwrap(), Event::Disconnected);
    assert_eq!(a.poll(soon()), Err(TransportError::Disconnected));
    assert!(!a.is_connected());
}

#[test]
fn oversized_send_fails_the_connection() {
    let Some(mut l) = listener(7472) else { return };
    let (mut a, mut b) = pair(&mut l, 16, 1);
    a.send(&[0; 17]).unwrap();
    let (a1, a2) = (a.poll(soon()).unwrap(), a.poll(soon()).unwrap());
    let (b1, b2) = (b.poll(soon()).unwrap(), b.poll(soon()).unwrap());
    eprintln!("sender: {a1:?}, {a2:?}; receiver: {b1:?}, {b2:?}");
    if b.fabric().remote_errors_on_completion() {
        // The IB spec (and hardware) say remote invalid request; rxe reports a remote
        // operation error, which maps to the catch-all class.
        assert!(
            matches!(a1, Event::SendDone { status: WcStatus::RemoteInvalidRequest | WcStatus::LocalProtectionError }),
            "{a1:?}"
        );
    } else {
        // iWARP: the Send left; the receiver's TERMINATE takes the connection down.
        assert_eq!(a1, Event::SendDone { status: WcStatus::Success });
    }
    assert_eq!(a2, Event::Disconnected);
    assert!(matches!(b1, Event::Recv { status: WcStatus::LocalLengthError, .. }), "{b1:?}");
    assert_eq!(b2, Event::Disconnected);
    assert_eq!(b.poll(soon()), Err(TransportError::Disconnected));
    assert_eq!(a.send(b"x"), Err(TransportError::Disconnected));
}

#[test]
fn send_without_receive_is_rnr() {
    let Some(mut l) = listener(7473) else { return };
    let (mut a, b) = pair(&mut l, 1024, 0);
    a.send(b"x").unwrap();
    // iWARP has no RNR: the Send completes locally, the receiver terminates the connection.
    let want = if b.fabric().reports_receiver_not_ready() { WcStatus::ReceiverNotReady } else { WcStatus::Success };
    assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: want });
    assert_eq!(a.poll(soon()).unwrap(), Event::Disconnected);
    assert!(!a.is_connected());
}

#[test]
fn one_sided_ops_check_key_rights_and_bounds() {
    let Some(mut l) = listener(7474) else { return };
    let (mut a, mut b) = pair(&mut l, 1024, 1);
    let r = a.register(8, Access::READ).unwrap();
    a.write_local(&r, 0, b"abcdefgh").unwrap();
    assert_eq!(b.rdma_read(r.handle, r.offset + 2, 3, soon()).unwrap(), b"cde");
    let w = a.register(16, Access::WRITE).unwrap();
    b.rdma_write(w.handle, w.offset + 4, b"xyz", soon()).unwrap();
    assert_eq!(&a.read_local(&w).unwrap()[..8], b"\0\0\0\0xyz\0");
    assert!(matches!(a.accesses(&w), Err(TransportError::Environment(_))));
    // No write right on a read-only region: the target refuses it, the region is unchanged.
    refused_write(&mut b, r.handle, r.offset, b"z");
    assert!(!b.is_connected());
    assert_eq!(a.poll(soon()).unwrap(), Event::Disconnected);
    assert_eq!(a.read_local(&r).unwrap(), b"abcdefgh");

    let (mut a, mut b) = pair(&mut l, 1024, 1);
    let w = a.register(4, Access::WRITE).unwrap();
    refused_write(&mut b, w.handle, w.offset + 2, b"xyz"); // past the end
    assert_eq!(a.read_local(&w).unwrap(), [0; 4]);
    let (mut a, mut b) = pair(&mut l, 1024, 1);
    let w = a.register(4, Access::WRITE).unwrap();
    refused_write(&mut b, w.handle ^ 0x100, w.offset, b"x"); // wrong R_key
    assert_eq!(a.read_local(&w).unwrap(), [0; 4]);
}

/// An RDMA Write the target must refuse. InfiniBand: its completion fails with the target's
/// error; iWARP: it completes locally and the target's TERMINATE ends the connection. Either
/// way the connection then goes down.
fn refused_write(b: &mut VerbsConnection, handle: u32, offset: u64, data: &[u8]) {
    let r = b.rdma_write(handle, offset, data, soon());
    eprintln!("{}: refused write: {r:?}", b.fabric().name());
    if b.fabric().remote_errors_on_completion() {
        assert!(matches!(r, Err(TransportError::Completion(_))), "{r:?}");
    } else {
        assert_eq!(r, Ok(()));
    }
    assert_eq!(b.poll(soon()), Ok(Event::Disconnected));
}

#[test]
fn send_with_invalidate_invalidates() {
    let Some(mut l) = listener(7475) else { return };
    let (mut a, mut b) = pair(&mut l, 1024, 1);
    let r = a.register(64, Access::WRITE).unwrap();
    a.post_recv(1024, 1).unwrap();
    b.rdma_write(r.handle, r.offset, b"before", soon()).unwrap();
    b.send_with_invalidate(b"reply", r.handle).unwrap();
    let named = b.fabric().names_invalidated_rkey(); // both sides share the device
    match a.poll(soon()).unwrap() {
        Event::Recv { status: WcStatus::Success, data, invalidated } => {
            eprintln!("{}: Send With Invalidate received, invalidated {invalidated:?}", b.fabric().name());
            assert_eq!(data, b"reply");
            if named {
                assert_eq!(invalidated, Some(r.handle));
                assert!(!a.is_valid(&r));
            } else {
                assert!(invalidated.is_none_or(|k| k == r.handle), "{invalidated:?}");
            }
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(b.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
    // Invalidated, whether or not the completion said so: the same Write is now refused.
    refused_write(&mut b, r.handle, r.offset, b"late");
    assert_eq!(&a.read_local(&r).unwrap()[..6], b"before");
}

/// A message the peer sends just before it disconnects is reported before the disconnection,
/// however the message's completion and the CM's DISCONNECTED event fall between our reads of
/// the CQ and of the CM channel (svcrdma's ERR_CHUNK, then its close: RFC 8166 4.5). The
/// passive side sends while the active side is already waiting, at a different moment each
/// round.
#[test]
fn last_message_before_disconnect_is_not_lost() {
    let Some(mut l) = listener(7477) else { return };
    for round in 0..20u64 {
        let (mut a, mut b) = pair(&mut l, 1024, 0);
        a.post_recv(1024, 4).unwrap();
        let got = std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_micros(round * 250));
                b.send(b"last").unwrap();
                // Its own Send completed before it goes: what follows is our side alone.
                assert_eq!(b.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
                drop(b);
            });
            let mut got = Vec::new();
            loop {
                match a.poll(soon()) {
                    Ok(Event::Disconnected) | Err(_) => break got,
                    Ok(e) => got.push(e),
                }
            }
        });
        assert_eq!(
            got,
            vec![Event::Recv { status: WcStatus::Success, data: b"last".to_vec(), invalidated: None }],
            "round {round}"
        );
    }
}

#[test]
fn we_as_passive_side_reject() {
    let Some(mut l) = listener(7476) else { return };
    let at = l.local_addr();
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let p = l.next_request(soon()).expect("connect request");
            p.reject(&[0xde, 0xad]).unwrap();
        });
        let mut c = VerbsConnector::new(&at.ip().to_string(), at.port()).unwrap();
        let e = c.connect(&ACTIVE_PD, soon()).err().expect("rejected");
        assert!(matches!(&e, TransportError::Unreachable(m) if m.contains("rejected")), "{e}");
        h.join().unwrap();
    });
    // Nobody listens on this port: the peer is unreachable (InfiniBand: a CM reject or
    // unreachable event; iWARP: rdma_connect's own ECONNREFUSED), not an environment error.
    let mut c = VerbsConnector::new(&at.ip().to_string(), 7499).unwrap();
    let e = c.connect(&ACTIVE_PD, soon()).err().expect("nobody listens");
    eprintln!("no listener: {e}");
    assert!(matches!(e, TransportError::Unreachable(_)), "{e}");
}

/// As [`pair_with`], the active side through `connect_verbs` (the requester's slots).
fn slots_pair(l: &mut VerbsListener, size: usize, recvs: usize) -> (VerbsConnection, VerbsConnection) {
    pair_with(l, size, recvs, |c| c.connect_verbs(&ACTIVE_PD, soon()).expect("connect"))
}

fn message(i: usize) -> Vec<u8> {
    format!("message {i}").into_bytes()
}

/// Calls leave through the send slots in order, though only one Send in 16 asks for a
/// completion: more calls than slots, so the slots come back only through those completions;
/// replies come back in place, in order, their receive slots reposted (each round needs the
/// slots the last one reposted: a Send with none posted fails RNR).
#[test]
fn slots_carry_calls_and_replies_in_order() {
    const SEND_SLOTS: usize = 16;
    const WINDOW: usize = 8;
    const ROUNDS: usize = 5;
    let Some(mut l) = listener(7478) else { return };
    let calls = 3 * SEND_SLOTS + 5;
    let (mut a, mut b) = slots_pair(&mut l, 64, calls);
    a.open_slots(WINDOW, 64, SEND_SLOTS, 64).unwrap();
    let mut blocked = 0;
    for i in 0..calls {
        while !a.send_in_slot(&message(i)).unwrap() {
            // Every slot in use: no reply is due, so what comes back is a free slot.
            blocked += 1;
            assert_eq!(a.take_messages(Duration::from_secs(5), |m| panic!("a message: {m:?}")), Ok(0));
        }
    }
    assert!(blocked > 0, "the send slots never ran out");
    for i in 0..calls {
        match b.poll(soon()).unwrap() {
            Event::Recv { status: WcStatus::Success, data, invalidated: None } => assert_eq!(data, message(i)),
            other => panic!("call {i}: {other:?}"),
        }
    }
    let mut got = Vec::new();
    for round in 0..ROUNDS {
        for i in 0..WINDOW {
            b.send(&message(1000 + round * WINDOW + i)).unwrap();
        }
        let want = (round + 1) * WINDOW;
        while got.len() < want {
            let n = a.take_messages(Duration::from_secs(5), |m| got.push(m.to_vec())).unwrap();
            assert!(n > 0 || got.len() < want);
        }
        assert_eq!(got.len(), want, "round {round}");
    }
    assert_eq!(got, (0..ROUNDS * WINDOW).map(|i| message(1000 + i)).collect::<Vec<_>>());
    // Nothing more: the wait ends at its deadline.
    assert_eq!(
        a.take_messages(Duration::from_millis(50), |m| panic!("a message: {m:?}")),
        Err(TransportError::Timeout)
    );
    assert!(matches!(a.send_in_slot(&[0; 65]), Err(TransportError::Invalid(_))));
}

/// A Send that fails (no receive posted at the peer) is the error of the next wait, and the
/// connection is down after it.
#[test]
fn a_failed_send_from_a_slot_is_reported() {
    let Some(mut l) = listener(7479) else { return };
    let (mut a, b) = slots_pair(&mut l, 64, 0);
    a.open_slots(1, 64, 4, 64).unwrap();
    assert_eq!(a.send_in_slot(b"x"), Ok(true));
    let r = a.take_messages(Duration::from_secs(5), |m| panic!("a message: {m:?}"));
    if b.fabric().reports_receiver_not_ready() {
        assert_eq!(r, Err(TransportError::Completion(WcStatus::ReceiverNotReady)));
    } else {
        // iWARP has no RNR: the receiver terminates the connection.
        assert_eq!(r, Err(TransportError::Disconnected));
    }
    assert_eq!(a.send_in_slot(b"y"), Err(TransportError::Disconnected));
}

/// A reply the peer sends just before it goes is handed over; then the wait, asleep by then,
/// ends with the disconnection (its flushed receive slots), not at the deadline.
#[test]
fn slots_see_the_peer_go() {
    let Some(mut l) = listener(7480) else { return };
    let (mut a, mut b) = slots_pair(&mut l, 64, 1);
    a.open_slots(4, 64, 4, 64).unwrap();
    assert_eq!(a.send_in_slot(b"call"), Ok(true));
    match b.poll(soon()).unwrap() {
        Event::Recv { status: WcStatus::Success, data, .. } => assert_eq!(data, b"call"),
        other => panic!("{other:?}"),
    }
    b.send(b"reply").unwrap();
    assert_eq!(b.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
    let mut got = Vec::new();
    assert_eq!(a.take_messages(Duration::from_secs(5), |m| got.push(m.to_vec())), Ok(1));
    assert_eq!(got, vec![b"reply".to_vec()]);
    let t = Instant::now();
    std::thread::scope(|s| {
        s.spawn(move || {
            // Later than the spin: the wait is asleep when the peer goes.
            std::thread::sleep(Duration::from_millis(50));
            drop(b);
        });
        assert_eq!(
            a.take_messages(Duration::from_secs(5), |m| panic!("a message: {m:?}")),
            Err(TransportError::Disconnected)
        );
    });
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(a.send_in_slot(b"z"), Err(TransportError::Disconnected));
}
