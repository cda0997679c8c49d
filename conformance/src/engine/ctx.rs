//! The context a scenario runs in: one connection to the peer at a time, every message sent
//! and received recorded in a transcript, every wait bounded by a deadline, and every message
//! received decoded once into a [`Frame`].

use std::time::{Duration, Instant};

use rpcrdma_codec::check::Role;
use rpcrdma_codec::private_data::PrivateData;
use rpcrdma_codec::v1::field;
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use rpcrdma_peers::proto::Call;
use rpcrdma_peers::transport::{Access, Connection, Connector, Event, Region, RemoteOp, TransportError, WcStatus};

use crate::engine::mismatch::{Mismatch, NoMessage};
use crate::engine::options::RunOptions;
use crate::frame::v1::Chunks;
use crate::frame::Frame;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Sent,
    Received,
    /// Something that is not a message: a connection event, a completion error, silence.
    Event,
}

/// One line of a check's conversation.
#[derive(Debug, Clone)]
pub struct TranscriptEntry {
    pub direction: Direction,
    /// Time since the check started.
    pub at: Duration,
    /// One-line decoding (or the event).
    pub summary: String,
    pub bytes: Vec<u8>,
    /// What the entry was on the wire, for the packet capture.
    pub wire: Wire,
}

/// What a transcript entry was on the wire (for `--pcap`). Connection setup and one-sided
/// operations are `Direction::Event` entries with empty `bytes`, so report writers that only
/// know messages show them as events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Wire {
    /// A message (`bytes`) carried by a plain Send; nothing, for other events.
    #[default]
    Plain,
    /// A message carried by a Send With Invalidate of this R_key.
    SendWithInvalidate(u32),
    /// The RDMA-CM exchange that set up a connection.
    Connect(CmExchange),
    /// An RDMA Read or Write.
    Rdma(RdmaOp),
}

/// An RDMA-CM connection setup: the CM REQ, and the CM REP (with RTU) or a rejection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CmExchange {
    /// Whether our side sent the REQ.
    pub we_are_active: bool,
    /// The private data of the REQ, as the active side gave it.
    pub req: Vec<u8>,
    /// The private data of the REP, as delivered; None when the connection was not established.
    pub rep: Option<Vec<u8>>,
}

/// A one-sided operation: who performed it, on which memory, moving which bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdmaOp {
    pub op: RemoteOp,
    /// Whether our side issued it (else the peer did, on our memory).
    pub by_us: bool,
    pub handle: u32,
    pub offset: u64,
    /// The bytes read or written.
    pub data: Vec<u8>,
    /// Not observed but reconstructed after the fact (verbs does not show a target the
    /// one-sided operations on its memory): from the segments we advertised, the reply's
    /// written lengths, and what our regions held when the reply came.
    pub reconstructed: bool,
}

impl RdmaOp {
    /// One line for the transcript: `peer RDMA Write of 5 bytes at 0x1234:0x5000`.
    pub fn describe(&self) -> String {
        format!(
            "{} RDMA {} of {} bytes at {:#x}:{:#x}{}",
            if self.by_us { "our" } else { "peer" },
            if self.op == RemoteOp::Read { "Read" } else { "Write" },
            self.data.len(),
            self.handle,
            self.offset,
            if self.reconstructed { " (reconstructed)" } else { "" }
        )
    }
}

/// What came back when the scenario waited. A frame is large and silence small; receipts are
/// few and short-lived, so the frame stays inline rather than boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    Message(Frame),
    /// Nothing before the deadline, a disconnect, or a failed completion.
    Nothing(NoMessage),
}

impl Received {
    pub const SILENCE: Received = Received::Nothing(NoMessage::Silence);

    /// A short description for Expected/Actual lines.
    pub fn describe(&self) -> String {
        match self {
            Received::Message(f) => match f.invalidated {
                Some(h) => format!("{f} (Send With Invalidate of {h:#x})"),
                None => f.to_string(),
            },
            Received::Nothing(n) => n.to_string(),
        }
    }

    /// The frame, if a message came.
    pub fn frame(&self) -> Option<&Frame> {
        match self {
            Received::Message(f) => Some(f),
            Received::Nothing(_) => None,
        }
    }
}

/// A scenario's view of the peer.
pub struct Ctx<'c> {
    connector: &'c mut dyn Connector,
    pub options: RunOptions,
    conn: Option<Box<dyn Connection>>,
    transcript: Vec<TranscriptEntry>,
    started: Instant,
    next_xid: u32,
    survived: Option<bool>,
    /// The first sign that the peer may have gone (see [`super::health`]).
    sign: Option<String>,
    peer_private_data: Vec<u8>,
    /// Our regions on this connection, with how many of the peer's accesses to each the
    /// transcript already shows.
    regions: Vec<(Region, usize)>,
    /// The chunk lists of the calls we sent, by rdma_xid, to reconstruct one-sided operations
    /// a transport cannot show.
    calls: std::collections::HashMap<u32, Chunks>,
    /// A wait ended early because the run's interrupt flag was set.
    cut: bool,
}

impl std::fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").field("peer", &self.connector.describe()).finish()
    }
}

/// `now + d`, or a day from now when that overflows the clock.
fn deadline_after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d).unwrap_or_else(|| now + Duration::from_secs(86_400))
}

impl<'c> Ctx<'c> {
    pub fn new(connector: &'c mut dyn Connector, options: RunOptions) -> Self {
        let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.subsec_nanos());
        Ctx {
            connector,
            options,
            conn: None,
            transcript: Vec::new(),
            started: Instant::now(),
            next_xid: seed | 0x1000_0000,
            survived: None,
            sign: None,
            peer_private_data: Vec::new(),
            regions: Vec::new(),
            calls: std::collections::HashMap::new(),
            cut: false,
        }
    }

    /// Whether a signal cut one of this check's waits short ([`RunOptions::interrupt`]).
    pub fn cut_short(&self) -> bool {
        self.cut
    }

    fn log(&mut self, direction: Direction, summary: String, bytes: &[u8]) {
        self.log_wire(direction, summary, bytes, Wire::Plain);
    }

    fn log_wire(&mut self, direction: Direction, summary: String, bytes: &[u8], wire: Wire) {
        let at = self.started.elapsed();
        self.transcript.push(TranscriptEntry { direction, at, summary, bytes: bytes.to_vec(), wire });
    }

    /// Records the peer's one-sided operations on our regions since the last look: as the
    /// transport saw them (the emulated fabric), or, where it cannot see them (verbs),
    /// reconstructed from the call `reply` answers.
    fn note_peer_accesses(&mut self, reply: Option<&Frame>) {
        let Some(c) = self.conn.as_deref() else { return };
        let mut ops = Vec::new();
        let mut unseen = false;
        for (region, seen) in self.regions.iter_mut() {
            let list = match c.accesses(region) {
                Ok(list) => list,
                // The transport cannot see them (verbs).
                Err(TransportError::Environment(_)) => {
                    unseen = true;
                    continue;
                }
                // A region no longer registered.
                Err(_) => continue,
            };
            let mem = c.read_local(region).unwrap_or_default();
            for a in list.iter().skip(*seen) {
                let start = a.at as usize;
                let data = mem.get(start..start + a.length as usize).unwrap_or_default().to_vec();
                let offset = region.offset + a.at;
                ops.push(RdmaOp { op: a.op, by_us: false, handle: region.handle, offset, data, reconstructed: false });
            }
            *seen = list.len();
        }
        if let (true, Some(reply)) = (unseen, reply) {
            ops.extend(self.reconstruct(reply));
        }
        for op in ops {
            self.log_wire(Direction::Event, op.describe(), &[], Wire::Rdma(op));
        }
    }

    /// The peer's one-sided operations a reply implies, for a transport that cannot show
    /// them: an RDMA Read of each read segment of the call (unless the reply is an error),
    /// and an RDMA Write of the length the reply reports in each of its write and reply
    /// chunk segments; the data is what our regions hold now. Segments that name no region
    /// of ours are left out.
    fn reconstruct(&mut self, reply: &Frame) -> Vec<RdmaOp> {
        let Some(h) = reply.v1() else { return Vec::new() };
        let Some(call) = self.calls.remove(&h.xid) else { return Vec::new() };
        let Some(c) = self.conn.as_deref() else { return Vec::new() };
        let data_at = |handle: u32, offset: u64, length: u32| -> Option<Vec<u8>> {
            let (region, _) = self.regions.iter().find(|(r, _)| r.handle == handle)?;
            let start = usize::try_from(offset.checked_sub(region.offset)?).ok()?;
            c.read_local(region).ok()?.get(start..start.checked_add(length as usize)?).map(<[u8]>::to_vec)
        };
        let mut ops = Vec::new();
        let mut add = |op: RemoteOp, handle: u32, offset: u64, length: u32| {
            if let Some(data) = data_at(handle, offset, length) {
                ops.push(RdmaOp { op, by_us: false, handle, offset, data, reconstructed: true });
            }
        };
        if let Some(chunks) = h.body.chunks() {
            for r in &call.reads {
                add(RemoteOp::Read, r.target.handle, r.target.offset, r.target.length);
            }
            for s in chunks.writes.iter().flatten().chain(chunks.reply.iter().flatten()) {
                if s.length > 0 {
                    add(RemoteOp::Write, s.handle, s.offset, s.length);
                }
            }
        }
        ops
    }

    /// Our private data with our sizes and the given R bit (RFC 8797 4).
    pub fn private_data(&self, remote_invalidation: bool) -> Vec<u8> {
        PrivateData::new(self.options.send_size, self.options.receive_size, remote_invalidation)
            .expect("our sizes are at least 1024")
            .encode_to_vec()
    }

    /// Connects with our default private data (our sizes, R set) and posts receives for the
    /// credits we request.
    pub fn connect(&mut self) -> Result<(), Mismatch> {
        let pd = self.private_data(true);
        self.connect_with(&pd)
    }

    /// Connects with the given private data (possibly malformed, possibly empty).
    pub fn connect_with(&mut self, private_data: &[u8]) -> Result<(), Mismatch> {
        self.connect_via(private_data, None).expect("the peer's own address is always tried")
    }

    /// The port the peer was given at; None for a transport with no ports.
    pub fn peer_port(&self) -> Option<u16> {
        self.connector.port()
    }

    /// Connects with our default private data to the peer's host at `port` rather than the
    /// peer's own (RFC 8267 6.3: the well-known port); None for a transport with no ports.
    pub fn connect_at(&mut self, port: u16) -> Option<Result<(), Mismatch>> {
        self.connector.port()?;
        let pd = self.private_data(true);
        self.connect_via(&pd, Some(port))
    }

    /// [`Ctx::connect_with`] at the peer's own address, or at `port` of its host.
    fn connect_via(&mut self, private_data: &[u8], port: Option<u16>) -> Option<Result<(), Mismatch>> {
        self.disconnect();
        let deadline = deadline_after(self.options.timeout);
        let mut cm = CmExchange { we_are_active: true, req: private_data.to_vec(), rep: None };
        let attempt = match port {
            None => self.connector.connect(private_data, deadline),
            Some(p) => self.connector.connect_at(p, private_data, deadline)?,
        };
        let at = port.map(|p| format!(" at port {p}")).unwrap_or_default();
        let mut conn = match attempt {
            Ok(c) => c,
            Err(e) => {
                // Nobody at another port is no sign that the peer has gone.
                if port.is_none() {
                    self.sign.get_or_insert_with(|| format!("connect: {e}"));
                }
                self.log_wire(Direction::Event, format!("connect{at}: {e}"), &[], Wire::Connect(cm));
                return Some(Err(Mismatch::Connect(e)));
            }
        };
        self.peer_private_data = conn.peer_private_data().to_vec();
        cm.rep = Some(self.peer_private_data.clone());
        let note = format!("connected to {}{at} with private data {}", self.connector.describe(), hex(private_data));
        self.log_wire(Direction::Event, note, &[], Wire::Connect(cm));
        if let Err(e) = conn.post_recv(self.options.receive_size as usize, self.options.credits_requested as usize) {
            return Some(Err(Mismatch::Connect(e)));
        }
        self.conn = Some(conn);
        Some(Ok(()))
    }

    /// Connects if not connected.
    pub fn ensure_connected(&mut self) -> Result<(), Mismatch> {
        if self.conn.as_ref().is_some_and(|c| c.is_connected()) {
            return Ok(());
        }
        self.connect()
    }

    pub fn disconnect(&mut self) {
        self.note_peer_accesses(None);
        self.regions.clear();
        self.calls.clear();
        if let Some(mut c) = self.conn.take() {
            c.disconnect();
        }
    }

    /// The peer's private data from the last connect, as the CM delivered it.
    pub fn peer_private_data(&self) -> &[u8] {
        &self.peer_private_data
    }

    /// Hands out the live connection (receives still posted) and the peer's private data, for
    /// a later context to [`Ctx::adopt`]: the fuzzer's connections that outlive a case.
    pub fn take_connection(&mut self) -> Option<(Box<dyn Connection>, Vec<u8>)> {
        self.regions.clear();
        self.calls.clear();
        let conn = self.conn.take()?;
        Some((conn, std::mem::take(&mut self.peer_private_data)))
    }

    /// Goes on over a connection another context handed out ([`Ctx::take_connection`]).
    pub fn adopt(&mut self, conn: Box<dyn Connection>, peer_private_data: Vec<u8>) {
        self.disconnect();
        self.peer_private_data = peer_private_data;
        self.conn = Some(conn);
    }

    /// The live connection. Panics (a failed check) when not connected.
    pub fn conn(&mut self) -> &mut dyn Connection {
        self.conn.as_deref_mut().expect("the scenario connects first")
    }

    /// The run's spec choices ([`RunOptions::profile`]).
    pub fn profile(&self) -> &Profile {
        &self.options.profile
    }

    /// The export's root file handle (the run's [`RunOptions::root_fh`]).
    pub fn root_fh(&self) -> &[u8] {
        &self.options.root_fh
    }

    /// A fresh XID.
    pub fn xid(&mut self) -> u32 {
        self.next_xid = self.next_xid.wrapping_add(1);
        self.next_xid
    }

    /// A call of `prog`/`vers`/`proc_` with a fresh XID, requesting our credits.
    pub fn call_of(&mut self, prog: u32, vers: u32, proc_: u32, args: Vec<u8>) -> Call {
        let xid = self.xid();
        Call::new(xid, self.options.credits_requested, prog, vers, proc_, args)
    }

    /// An NFSv3 call with a fresh XID.
    pub fn nfs3(&mut self, proc_: u32, args: Vec<u8>) -> Call {
        let xid = self.xid();
        Call::nfs3(xid, self.options.credits_requested, proc_, args)
    }

    /// The NFSv3 NULL call with a fresh XID.
    pub fn null(&mut self) -> Call {
        let xid = self.xid();
        Call::null(xid, self.options.credits_requested)
    }

    pub fn register(&mut self, length: u32, access: Access) -> Region {
        let region = self.conn().register(length, access).expect("registration on a live connection");
        self.regions.push((region, 0));
        region
    }

    /// A registered region holding `data`, for the peer to RDMA Read.
    pub fn source(&mut self, data: &[u8]) -> Region {
        let region = self.register(data.len() as u32, Access::READ);
        self.conn().write_local(&region, 0, data).expect("a fresh region");
        region
    }

    /// Posts a Send of `bytes`.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let frame = Frame::decode(bytes.to_vec(), None, Role::Call, &self.options.profile);
        if let Some(chunks) = frame.v1().and_then(|h| Some((h.xid, h.body.chunks()?.clone()))) {
            self.calls.insert(chunks.0, chunks.1);
        }
        self.log(Direction::Sent, frame.to_string(), bytes);
        let sent = match self.conn.as_deref_mut() {
            Some(c) => c.send(bytes),
            None => Err(TransportError::Disconnected),
        };
        if let Err(e) = &sent {
            self.sign.get_or_insert_with(|| format!("send: {e}"));
        }
        sent
    }

    /// Waits until `deadline` for the next message or failure; keeps the receive window
    /// full by reposting a receive for each message that arrives. Each message is decoded
    /// once, here.
    pub fn recv_until(&mut self, deadline: Instant) -> Received {
        loop {
            // With an interrupt flag, poll a tenth of a second at a time, so a signal ends
            // the wait at once (a CI runner's cancel grace is seconds, the timeout may be 30).
            let slice = match self.options.interrupt {
                Some(_) => deadline.min(Instant::now() + Duration::from_millis(100)),
                None => deadline,
            };
            if self.options.interrupted() {
                self.cut = true;
                self.log(Direction::Event, "interrupted: the wait was cut short by a signal".into(), &[]);
                return Received::SILENCE;
            }
            let Some(c) = self.conn.as_deref_mut() else { return Received::Nothing(NoMessage::Disconnected) };
            let got = match c.poll(slice) {
                Ok(Event::SendDone { status: WcStatus::Success }) => continue,
                Ok(Event::SendDone { status }) => Received::Nothing(NoMessage::SendFailed(status)),
                Ok(Event::Recv { status: WcStatus::Success, data, invalidated }) => {
                    let size = self.options.receive_size as usize;
                    let _ = c.post_recv(size, 1);
                    Received::Message(Frame::decode(data, invalidated, Role::Reply, &self.options.profile))
                }
                Ok(Event::Recv { status, .. }) => Received::Nothing(NoMessage::RecvFailed(status)),
                Ok(Event::Disconnected) | Err(TransportError::Disconnected) => {
                    Received::Nothing(NoMessage::Disconnected)
                }
                Err(TransportError::Timeout) if Instant::now() < deadline => continue,
                Err(TransportError::Timeout) => Received::SILENCE,
                Err(e) => {
                    self.log(Direction::Event, format!("poll: {e}"), &[]);
                    Received::Nothing(NoMessage::Disconnected)
                }
            };
            match &got {
                Received::Message(f) => {
                    self.note_peer_accesses(Some(f));
                    let wire = f.invalidated.map_or(Wire::Plain, Wire::SendWithInvalidate);
                    let summary = match f.invalidated {
                        Some(h) => format!("{f} [invalidated {h:#x}]"),
                        None => f.to_string(),
                    };
                    self.log_wire(Direction::Received, summary, f.bytes(), wire);
                }
                other => {
                    self.sign.get_or_insert_with(|| other.describe());
                    self.log(Direction::Event, other.describe(), &[])
                }
            }
            return got;
        }
    }

    /// Waits for the next message for at most the check timeout.
    pub fn recv(&mut self) -> Received {
        self.recv_until(deadline_after(self.options.timeout))
    }

    /// Sends `bytes` and waits for what comes back.
    pub fn call(&mut self, bytes: &[u8]) -> Received {
        if let Err(e) = self.send(bytes) {
            self.log(Direction::Event, format!("send: {e}"), &[]);
            return Received::Nothing(NoMessage::Disconnected);
        }
        self.recv()
    }

    /// Waits the silence window for what comes, if anything.
    pub fn expect_silence(&mut self) -> Received {
        self.recv_until(deadline_after(self.options.silence))
    }

    /// A golden vector's bytes (`v1/notbool-writes-7`) with its rdma_xid replaced by `xid`,
    /// so a reply can be matched to it. Panics (a failed check) for an unknown name.
    pub fn golden(&self, name: &str, xid: u32) -> Vec<u8> {
        let v = rpcrdma_vectors::embedded(name).unwrap_or_else(|| panic!("no golden vector {name}"));
        let mut b = v.bytes;
        if let Some(x) = b.get_mut(field::XID..field::XID + 4) {
            x.copy_from_slice(&xid.to_be_bytes());
        }
        b
    }

    /// Sends a NULL call and records whether the peer answered it: the connection survived.
    pub fn liveness(&mut self) -> bool {
        if self.conn.as_ref().is_none_or(|c| !c.is_connected()) {
            self.log(Direction::Event, "liveness: not connected".into(), &[]);
            self.sign.get_or_insert_with(|| "liveness: not connected".into());
            self.survived = Some(false);
            return false;
        }
        let call = self.null();
        let alive = match self.call(&call.msg()) {
            Received::Message(f) => f.v1().is_some_and(|h| h.xid == call.xid),
            Received::Nothing(_) => false,
        };
        self.survived = Some(alive);
        alive
    }

    /// Ends the check: disconnects and hands back the transcript, whether the liveness NULL
    /// was answered, and the first sign that the peer may have gone.
    pub fn finish(mut self) -> (Vec<TranscriptEntry>, Option<bool>, Option<String>) {
        self.disconnect();
        (std::mem::take(&mut self.transcript), self.survived, self.sign.take())
    }
}

pub fn hex(b: &[u8]) -> String {
    rpcrdma_codec::hex::Hex(b).to_string()
}
