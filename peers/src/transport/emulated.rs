//! An in-process RDMA fabric that fails the way hardware does where conformance depends on it:
//! a Send larger than the posted receive fails the connection (local length error at the
//! receiver, remote invalid request at the sender); a Send with no receive posted fails with
//! receiver-not-ready; RDMA Read and Write check the R_key, access rights and bounds of the
//! target region; Send With Invalidate really invalidates; order is preserved; an error moves
//! the queue pair to the error state, which disconnects. RDMA-CM private data reaches the other
//! side zero-padded, as IB/RoCE CMs deliver it (56 bytes in a REQ, 196 in a REP).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use super::{Access, Connection, Connector, Event, Region, RemoteAccess, RemoteOp, Result, TransportError, WcStatus};

/// Private-data area of an IB CM REQ as seen by the passive side through RDMA-CM.
pub const REQ_PRIVATE_DATA_LEN: usize = 56;
/// Private-data area of an IB CM REP as seen by the active side through RDMA-CM.
pub const REP_PRIVATE_DATA_LEN: usize = 196;

#[derive(Debug)]
struct Memory {
    data: Vec<u8>,
    base: u64,
    access: Access,
    valid: bool,
    log: Vec<RemoteAccess>,
}

#[derive(Debug, Default)]
struct Side {
    recvs: VecDeque<usize>,
    events: VecDeque<Event>,
    regions: HashMap<u32, Memory>,
    /// Set once this side has been told of the disconnection.
    told_down: bool,
}

#[derive(Debug)]
struct Pair {
    sides: [Side; 2],
    up: bool,
    next_key: u32,
}

impl Pair {
    /// Moves both queue pairs to the error state: pending receives are flushed and each side
    /// sees the disconnection.
    fn fail(&mut self) {
        if self.up {
            self.up = false;
            for s in &mut self.sides {
                s.recvs.clear();
                s.events.push_back(Event::Disconnected);
            }
        }
    }

    /// An R_key that is hard to predict (RFC 8166 8.1.2), never reused on this connection.
    fn new_key(&mut self) -> u32 {
        // xorshift32 step on a counter-fed state
        let mut x = self.next_key;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.next_key = x;
        x
    }
}

#[derive(Debug)]
struct Shared {
    pair: Mutex<Pair>,
    changed: Condvar,
}

/// One end of an emulated connection.
#[derive(Debug)]
pub struct EmulatedConnection {
    shared: Arc<Shared>,
    side: usize,
    peer_private_data: Vec<u8>,
}

fn padded(pd: &[u8], len: usize) -> Vec<u8> {
    let mut v = pd.to_vec();
    if v.len() < len {
        v.resize(len, 0);
    }
    v
}

/// A connected pair: the active end (given `active_pd` as its own private data) and the
/// passive end. Each sees the other's private data zero-padded as a CM would deliver it.
pub fn connected_pair(active_pd: &[u8], passive_pd: &[u8], seed: u32) -> (EmulatedConnection, EmulatedConnection) {
    let shared = Arc::new(Shared {
        pair: Mutex::new(Pair { sides: [Side::default(), Side::default()], up: true, next_key: seed | 1 }),
        changed: Condvar::new(),
    });
    let active = EmulatedConnection {
        shared: shared.clone(),
        side: 0,
        peer_private_data: padded(passive_pd, REP_PRIVATE_DATA_LEN),
    };
    let passive = EmulatedConnection { shared, side: 1, peer_private_data: padded(active_pd, REQ_PRIVATE_DATA_LEN) };
    (active, passive)
}

impl EmulatedConnection {
    fn lock(&self) -> MutexGuard<'_, Pair> {
        // A panic in another holder leaves the state consistent enough to report from.
        self.shared.pair.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn peer(&self) -> usize {
        1 - self.side
    }

    fn post_send(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<()> {
        let mut p = self.lock();
        self.post_send_locked(&mut p, msg, invalidate)
    }

    /// One Send, the pair locked (a batch holds the lock across its Sends).
    fn post_send_locked(&self, p: &mut Pair, msg: &[u8], invalidate: Option<u32>) -> Result<()> {
        let (me, peer) = (self.side, self.peer());
        if !p.up {
            return Err(TransportError::Disconnected);
        }
        let Some(size) = p.sides[peer].recvs.pop_front() else {
            p.sides[me].events.push_back(Event::SendDone { status: WcStatus::ReceiverNotReady });
            p.fail();
            self.shared.changed.notify_all();
            return Ok(());
        };
        if msg.len() > size {
            self.fail_send(p, WcStatus::LocalLengthError);
            return Ok(());
        }
        if let Some(handle) = invalidate {
            match p.sides[peer].regions.get_mut(&handle) {
                Some(m) if m.valid => m.valid = false,
                _ => {
                    self.fail_send(p, WcStatus::LocalProtectionError);
                    return Ok(());
                }
            }
        }
        p.sides[peer].events.push_back(Event::Recv {
            status: WcStatus::Success,
            data: msg.to_vec(),
            invalidated: invalidate,
        });
        p.sides[me].events.push_back(Event::SendDone { status: WcStatus::Success });
        self.shared.changed.notify_all();
        Ok(())
    }

    /// A Send the receiver could not take: its receive completes with `at_receiver`, ours
    /// with remote invalid request, and both queue pairs go to the error state.
    fn fail_send(&self, p: &mut Pair, at_receiver: WcStatus) {
        let (me, peer) = (self.side, self.peer());
        p.sides[peer].events.push_back(Event::Recv { status: at_receiver, data: Vec::new(), invalidated: None });
        p.sides[me].events.push_back(Event::SendDone { status: WcStatus::RemoteInvalidRequest });
        p.fail();
        self.shared.changed.notify_all();
    }

    /// Checks a one-sided access against the peer's region; on failure the connection fails
    /// as a queue pair does on IBV_WC_REM_ACCESS_ERR.
    fn one_sided(
        &mut self,
        op: RemoteOp,
        handle: u32,
        offset: u64,
        length: u32,
        write: Option<&[u8]>,
    ) -> Result<Vec<u8>> {
        let peer = self.peer();
        let mut p = self.lock();
        if !p.up {
            return Err(TransportError::Disconnected);
        }
        let ok = p.sides[peer].regions.get(&handle).and_then(|m| {
            let allowed = match op {
                RemoteOp::Read => m.access.remote_read,
                RemoteOp::Write => m.access.remote_write,
            };
            let start = offset.checked_sub(m.base)?;
            let end = start.checked_add(length as u64)?;
            (m.valid && allowed && end <= m.data.len() as u64).then_some(start as usize)
        });
        let Some(start) = ok else {
            p.fail();
            self.shared.changed.notify_all();
            return Err(TransportError::Completion(WcStatus::RemoteAccessError));
        };
        let m = p.sides[peer].regions.get_mut(&handle).expect("checked above");
        m.log.push(RemoteAccess { op, at: start as u64, length });
        let range = start..start + length as usize;
        Ok(match write {
            Some(data) => {
                m.data[range].copy_from_slice(data);
                Vec::new()
            }
            None => m.data[range].to_vec(),
        })
    }

    fn region<'p>(&self, p: &'p Pair, r: &Region) -> Result<&'p Memory> {
        p.sides[self.side]
            .regions
            .get(&r.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", r.handle)))
    }
}

impl Connection for EmulatedConnection {
    fn peer_private_data(&self) -> &[u8] {
        &self.peer_private_data
    }

    fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        let me = self.side;
        let mut p = self.lock();
        if !p.up {
            return Err(TransportError::Disconnected);
        }
        p.sides[me].recvs.extend(std::iter::repeat_n(size, count));
        Ok(())
    }

    fn send(&mut self, msg: &[u8]) -> Result<()> {
        self.post_send(msg, None)
    }

    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> Result<()> {
        self.post_send(msg, Some(handle))
    }

    /// The batch's Sends under one lock: the peer cannot take a receive or close between them
    /// (each is still posted as `post_send_locked` posts one: a Send that finds no receive
    /// posted, or a send fault, does not stop the rest).
    fn send_batch(&mut self, msgs: &[(Vec<u8>, Option<u32>)]) -> Result<()> {
        let mut p = self.lock();
        msgs.iter().try_for_each(|(msg, invalidate)| self.post_send_locked(&mut p, msg, *invalidate))
    }

    fn register(&mut self, length: u32, access: Access) -> Result<Region> {
        let me = self.side;
        let mut p = self.lock();
        let handle = p.new_key();
        // Addresses look like user virtual addresses and differ per region.
        let base = 0x7f00_0000_0000u64 + (handle as u64) * 0x10_0000;
        p.sides[me]
            .regions
            .insert(handle, Memory { data: vec![0; length as usize], base, access, valid: true, log: Vec::new() });
        Ok(Region { handle, offset: base, length })
    }

    fn write_local(&mut self, r: &Region, at: u32, data: &[u8]) -> Result<()> {
        let me = self.side;
        let mut p = self.lock();
        let m = p.sides[me]
            .regions
            .get_mut(&r.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", r.handle)))?;
        let end = at as usize + data.len();
        if end > m.data.len() {
            return Err(TransportError::Invalid(format!("write of {end} bytes past a {}-byte region", m.data.len())));
        }
        m.data[at as usize..end].copy_from_slice(data);
        Ok(())
    }

    fn read_local(&self, r: &Region) -> Result<Vec<u8>> {
        let p = self.lock();
        Ok(self.region(&p, r)?.data.clone())
    }

    fn accesses(&self, r: &Region) -> Result<Vec<RemoteAccess>> {
        let p = self.lock();
        Ok(self.region(&p, r)?.log.clone())
    }

    fn is_valid(&self, r: &Region) -> bool {
        let p = self.lock();
        self.region(&p, r).is_ok_and(|m| m.valid)
    }

    fn deregister(&mut self, r: &Region) -> Result<()> {
        let me = self.side;
        let mut p = self.lock();
        p.sides[me].regions.remove(&r.handle);
        Ok(())
    }

    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, _deadline: Instant) -> Result<Vec<u8>> {
        self.one_sided(RemoteOp::Read, handle, offset, length, None)
    }

    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], _deadline: Instant) -> Result<()> {
        let len = u32::try_from(data.len()).map_err(|_| TransportError::Invalid("write over 4 GiB".into()))?;
        self.one_sided(RemoteOp::Write, handle, offset, len, Some(data)).map(|_| ())
    }

    fn poll(&mut self, deadline: Instant) -> Result<Event> {
        let me = self.side;
        let mut p = self.lock();
        loop {
            if let Some(e) = p.sides[me].events.pop_front() {
                if e == Event::Disconnected {
                    p.sides[me].told_down = true;
                }
                return Ok(e);
            }
            if !p.up && p.sides[me].told_down {
                return Err(TransportError::Disconnected);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(TransportError::Timeout);
            }
            p = self
                .shared
                .changed
                .wait_timeout(p, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    fn disconnect(&mut self) {
        let mut p = self.lock();
        p.fail();
        self.shared.changed.notify_all();
    }

    fn is_connected(&self) -> bool {
        self.lock().up
    }
}

impl Drop for EmulatedConnection {
    fn drop(&mut self) {
        // Destroying a queue pair disconnects it, as rdma_destroy_id does.
        self.disconnect();
    }
}

/// The passive side of the emulated fabric: what a listener does with a connect request.
pub trait Listener: Send {
    /// The requester's private data as delivered; returns our private data to accept with,
    /// or the reason to reject.
    fn on_request(&mut self, private_data: &[u8]) -> std::result::Result<Vec<u8>, String>;

    /// The connection is established: serve it (from another thread) and return.
    fn on_established(&mut self, conn: EmulatedConnection);

    /// The port it listens at on the emulated fabric: NFS's well-known one unless it says.
    fn port(&self) -> u16 {
        super::NFS_RDMA_PORT
    }
}

/// Connects to an in-process [`Listener`].
#[derive(Debug)]
pub struct EmulatedConnector<L> {
    listener: L,
    connections: u32,
}

impl<L: Listener> EmulatedConnector<L> {
    pub fn new(listener: L) -> Self {
        EmulatedConnector { listener, connections: 0 }
    }
}

impl<L: Listener> Connector for EmulatedConnector<L> {
    fn connect(&mut self, private_data: &[u8], _deadline: Instant) -> Result<Box<dyn Connection>> {
        let theirs = self.listener.on_request(private_data).map_err(TransportError::Unreachable)?;
        self.connections += 1;
        let seed = 0x9e37_79b9u32.wrapping_mul(self.connections);
        let (active, passive) = connected_pair(private_data, &theirs, seed);
        self.listener.on_established(passive);
        Ok(Box::new(active))
    }

    fn describe(&self) -> String {
        "emulated".into()
    }

    /// The listener's own port: the emulated peer is addressed wherever it listens.
    fn port(&self) -> Option<u16> {
        Some(self.listener.port())
    }

    /// The listener, when it listens at `port`; else refused, as RDMA-CM refuses a port
    /// nobody listens at.
    fn connect_at(&mut self, port: u16, private_data: &[u8], deadline: Instant) -> Option<Result<Box<dyn Connection>>> {
        let at = self.listener.port();
        Some(if port == at {
            self.connect(private_data, deadline)
        } else {
            Err(TransportError::Unreachable(format!(
                "nobody listens at port {port} (the emulated peer listens at {at})"
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(2)
    }

    fn pair() -> (EmulatedConnection, EmulatedConnection) {
        connected_pair(&[1, 2, 3, 4, 5, 6, 7, 8], &[9; 8], 7)
    }

    #[test]
    fn private_data_arrives_zero_padded() {
        let (a, b) = pair();
        assert_eq!(a.peer_private_data().len(), REP_PRIVATE_DATA_LEN);
        assert_eq!(&a.peer_private_data()[..9], &[9, 9, 9, 9, 9, 9, 9, 9, 0]);
        assert_eq!(b.peer_private_data().len(), REQ_PRIVATE_DATA_LEN);
    }

    #[test]
    fn send_is_delivered_in_order() {
        let (mut a, mut b) = pair();
        b.post_recv(1024, 2).unwrap();
        a.send(b"one").unwrap();
        a.send(b"two").unwrap();
        assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
        for want in [&b"one"[..], b"two"] {
            match b.poll(soon()).unwrap() {
                Event::Recv { status: WcStatus::Success, data, invalidated: None } => assert_eq!(data, want),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn oversized_send_fails_the_connection() {
        let (mut a, mut b) = pair();
        b.post_recv(16, 1).unwrap();
        a.send(&[0; 17]).unwrap();
        assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::RemoteInvalidRequest });
        assert_eq!(a.poll(soon()).unwrap(), Event::Disconnected);
        assert!(matches!(b.poll(soon()).unwrap(), Event::Recv { status: WcStatus::LocalLengthError, .. }));
        assert_eq!(b.poll(soon()).unwrap(), Event::Disconnected);
        assert_eq!(b.poll(soon()), Err(TransportError::Disconnected));
        assert_eq!(a.send(b"x"), Err(TransportError::Disconnected));
    }

    #[test]
    fn send_without_receive_is_rnr() {
        let (mut a, _b) = pair();
        a.send(b"x").unwrap();
        assert_eq!(a.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::ReceiverNotReady });
        assert!(!a.is_connected());
    }

    #[test]
    fn one_sided_ops_check_key_rights_and_bounds() {
        let (mut a, mut b) = pair();
        let r = a.register(8, Access::READ).unwrap();
        a.write_local(&r, 0, b"abcdefgh").unwrap();
        assert_eq!(b.rdma_read(r.handle, r.offset + 2, 3, soon()).unwrap(), b"cde");
        assert_eq!(a.accesses(&r).unwrap(), vec![RemoteAccess { op: RemoteOp::Read, at: 2, length: 3 }]);
        // No write right on a read-only region.
        assert_eq!(
            b.rdma_write(r.handle, r.offset, b"z", soon()),
            Err(TransportError::Completion(WcStatus::RemoteAccessError))
        );
        assert!(!a.is_connected());

        let (mut a, mut b) = pair();
        let w = a.register(4, Access::WRITE).unwrap();
        assert!(b.rdma_write(w.handle, w.offset + 2, b"xyz", soon()).is_err(), "past the end");
        let (mut a, mut b) = pair();
        let w = a.register(4, Access::WRITE).unwrap();
        assert!(b.rdma_write(w.handle ^ 1, w.offset, b"x", soon()).is_err(), "wrong R_key");
        let _ = a.register(4, Access::WRITE).unwrap();
    }

    #[test]
    fn send_with_invalidate_invalidates() {
        let (mut a, mut b) = pair();
        let r = a.register(64, Access::WRITE).unwrap();
        a.post_recv(1024, 1).unwrap();
        b.send_with_invalidate(b"reply", r.handle).unwrap();
        match a.poll(soon()).unwrap() {
            Event::Recv { status: WcStatus::Success, invalidated, .. } => assert_eq!(invalidated, Some(r.handle)),
            other => panic!("{other:?}"),
        }
        assert!(!a.is_valid(&r));
        assert!(b.rdma_write(r.handle, r.offset, b"late", soon()).is_err());
    }

    #[test]
    fn poll_times_out_and_wakes_on_disconnect() {
        let (mut a, b) = pair();
        let t = Instant::now();
        assert_eq!(a.poll(t + Duration::from_millis(20)), Err(TransportError::Timeout));
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            drop(b);
        });
        assert_eq!(a.poll(soon()).unwrap(), Event::Disconnected);
        h.join().unwrap();
    }
}
