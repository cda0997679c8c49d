//! The context a scenario runs in: one connection to the peer at a time, every message sent
//! and received recorded in a transcript, every wait bounded by a deadline.

use std::time::{Duration, Instant};

use rpcrdma_codec::private_data::PrivateData;
use rpcrdma_codec::rpc::{CallHeader, RpcMessage};
use rpcrdma_codec::v1::{HeaderBuilder, Message};
use rpcrdma_codec::xdr::Writer;
use rpcrdma_codec::Profile;

use super::RunOptions;
use crate::transport::{Access, Connection, Connector, Event, Region, TransportError, WcStatus};

/// NFS program and version used for liveness and data scenarios (RFC 1813).
pub const NFS_PROGRAM: u32 = 100003;
pub const NFS_V3: u32 = 3;

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
}

/// What came back when the scenario waited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    Message {
        bytes: Vec<u8>,
        invalidated: Option<u32>,
    },
    /// Nothing before the deadline.
    Silence,
    Disconnected,
    /// Our Send completed with an error (the peer's receive was missing or too small).
    SendFailed(WcStatus),
    /// A receive completed with an error (the peer's Send overran our buffer, ...).
    RecvFailed(WcStatus),
}

impl Received {
    /// A short description for Expected/Actual lines.
    pub fn describe(&self) -> String {
        match self {
            Received::Message { bytes, invalidated } => {
                let inv = invalidated.map(|h| format!(" (Send With Invalidate of {h:#x})")).unwrap_or_default();
                format!("{}{inv}", summarize(bytes))
            }
            Received::Silence => "no reply before the deadline".into(),
            Received::Disconnected => "the peer disconnected".into(),
            Received::SendFailed(s) => format!("our Send failed: {}", s.name()),
            Received::RecvFailed(s) => format!("our receive failed: {}", s.name()),
        }
    }
}

/// One-line decoding of a transport message for transcripts.
pub fn summarize(bytes: &[u8]) -> String {
    match Message::decode(bytes, &Profile::default()) {
        Ok(m) => {
            let mut s = m.header.to_string();
            if !m.payload.is_empty() && matches!(m.header.body, rpcrdma_codec::v1::Body::Msg(_)) {
                match RpcMessage::decode(m.payload) {
                    Ok(r) => s.push_str(&format!(" | {}", r.header)),
                    Err(e) => s.push_str(&format!(" | RPC: {e}")),
                }
            }
            s
        }
        Err(e) => match rpcrdma_codec::v1::FixedFields::decode(bytes) {
            Ok(f) => format!("xid={:#010x} vers={} credit={} proc={} ({e})", f.xid, f.vers, f.credit, f.proc_),
            Err(_) => format!("{} bytes ({e})", bytes.len()),
        },
    }
}

/// An exchange: what we sent and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub xid: u32,
    pub received: Received,
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
    peer_private_data: Vec<u8>,
}

impl std::fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").field("peer", &self.connector.describe()).finish()
    }
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
            peer_private_data: Vec::new(),
        }
    }

    fn log(&mut self, direction: Direction, summary: String, bytes: &[u8]) {
        self.transcript.push(TranscriptEntry { direction, at: self.started.elapsed(), summary, bytes: bytes.to_vec() });
    }

    /// The private data we advertise by default (RFC 8797: our sizes, remote invalidation).
    pub fn default_private_data(&self) -> Vec<u8> {
        self.private_data(true)
    }

    /// Our private data with our sizes and the given R bit.
    pub fn private_data(&self, remote_invalidation: bool) -> Vec<u8> {
        let pd = PrivateData::new(self.options.send_size, self.options.receive_size, remote_invalidation)
            .expect("our sizes are at least 1024");
        let mut b = [0u8; 8];
        pd.encode_into(&mut b).expect("8 bytes");
        b.to_vec()
    }

    /// Connects with our default private data and posts receives for the credits we request.
    pub fn connect(&mut self) -> Result<(), String> {
        let pd = self.default_private_data();
        self.connect_with(&pd)
    }

    /// Connects with the given private data (possibly malformed, possibly empty).
    pub fn connect_with(&mut self, private_data: &[u8]) -> Result<(), String> {
        self.disconnect();
        let deadline = Instant::now() + self.options.timeout;
        let mut conn = self.connector.connect(private_data, deadline).map_err(|e| {
            let msg = format!("connect: {e}");
            self.log(Direction::Event, msg.clone(), &[]);
            msg
        })?;
        self.peer_private_data = conn.peer_private_data().to_vec();
        let note = format!("connected to {} with private data {}", self.connector.describe(), hex(private_data));
        self.log(Direction::Event, note, &[]);
        conn.post_recv(self.options.receive_size as usize, self.options.credits_requested as usize)
            .map_err(|e| format!("post_recv: {e}"))?;
        self.conn = Some(conn);
        Ok(())
    }

    /// Connects if not connected.
    pub fn ensure_connected(&mut self) -> Result<(), String> {
        if self.conn.as_ref().is_some_and(|c| c.is_connected()) {
            return Ok(());
        }
        self.connect()
    }

    pub fn disconnect(&mut self) {
        if let Some(mut c) = self.conn.take() {
            c.disconnect();
        }
    }

    /// The peer's private data from the last connect, as the CM delivered it.
    pub fn peer_private_data(&self) -> &[u8] {
        &self.peer_private_data
    }

    /// The live connection. Panics (a failed check) when not connected.
    pub fn conn(&mut self) -> &mut dyn Connection {
        self.conn.as_deref_mut().expect("the scenario connects first")
    }

    /// A fresh XID.
    pub fn xid(&mut self) -> u32 {
        self.next_xid = self.next_xid.wrapping_add(1);
        self.next_xid
    }

    pub fn register(&mut self, length: u32, access: Access) -> Region {
        self.conn().register(length, access).expect("registration on a live connection")
    }

    /// Posts a Send of `bytes`.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        self.log(Direction::Sent, summarize(bytes), bytes);
        match self.conn.as_deref_mut() {
            Some(c) => c.send(bytes),
            None => Err(TransportError::Disconnected),
        }
    }

    /// Waits until `deadline` for the next message or failure; keeps the receive window
    /// full by reposting a receive for each message that arrives.
    pub fn recv_until(&mut self, deadline: Instant) -> Received {
        loop {
            let Some(c) = self.conn.as_deref_mut() else { return Received::Disconnected };
            let got = match c.poll(deadline) {
                Ok(Event::SendDone { status: WcStatus::Success }) => continue,
                Ok(Event::SendDone { status }) => Received::SendFailed(status),
                Ok(Event::Recv { status: WcStatus::Success, data, invalidated }) => {
                    let size = self.options.receive_size as usize;
                    let _ = c.post_recv(size, 1);
                    Received::Message { bytes: data, invalidated }
                }
                Ok(Event::Recv { status, .. }) => Received::RecvFailed(status),
                Ok(Event::Disconnected) | Err(TransportError::Disconnected) => Received::Disconnected,
                Err(TransportError::Timeout) => Received::Silence,
                Err(e) => {
                    self.log(Direction::Event, format!("poll: {e}"), &[]);
                    Received::Disconnected
                }
            };
            match &got {
                Received::Message { bytes, invalidated } => {
                    let mut s = summarize(bytes);
                    if let Some(h) = invalidated {
                        s.push_str(&format!(" [invalidated {h:#x}]"));
                    }
                    self.log(Direction::Received, s, &bytes.clone());
                }
                other => self.log(Direction::Event, other.describe(), &[]),
            }
            return got;
        }
    }

    /// Waits for the next message for at most the check timeout.
    pub fn recv(&mut self) -> Received {
        self.recv_until(Instant::now() + self.options.timeout)
    }

    /// Sends `bytes` and waits for what comes back.
    pub fn call(&mut self, xid: u32, bytes: &[u8]) -> Exchange {
        if let Err(e) = self.send(bytes) {
            self.log(Direction::Event, format!("send: {e}"), &[]);
            return Exchange { xid, received: Received::Disconnected };
        }
        Exchange { xid, received: self.recv() }
    }

    /// Waits the silence window: Ok when nothing arrived.
    pub fn expect_silence(&mut self) -> Received {
        let deadline = Instant::now() + self.options.silence;
        self.recv_until(deadline)
    }

    /// A golden vector's bytes (`v1/notbool-writes-7`) with its rdma_xid replaced by `xid`,
    /// so a reply can be matched to it. Panics (a failed check) for an unknown name.
    pub fn golden(&self, name: &str, xid: u32) -> Vec<u8> {
        let v = rpcrdma_vectors::embedded(name).unwrap_or_else(|| panic!("no golden vector {name}"));
        let mut b = v.bytes;
        if b.len() >= 4 {
            b[..4].copy_from_slice(&xid.to_be_bytes());
        }
        b
    }

    /// An RDMA_MSG carrying an NFSv3 NULL call with AUTH_NONE.
    pub fn null_call(&self, xid: u32) -> Vec<u8> {
        self.rpc_call(xid, NFS_PROGRAM, NFS_V3, 0, &[])
    }

    /// An RDMA_MSG (no chunks) carrying a call of `prog`/`vers`/`proc_` with `args`.
    pub fn rpc_call(&self, xid: u32, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; 28 + 40 + args.len()];
        let mut w = Writer::new(&mut buf);
        HeaderBuilder::msg(xid, self.options.credits_requested).write(&mut w).expect("sized");
        CallHeader::new(xid, prog, vers, proc_).encode(&mut w).expect("sized");
        w.bytes(args).expect("sized");
        let n = w.len();
        buf.truncate(n);
        buf
    }

    /// Sends a NULL call and records whether the peer answered it: the connection survived.
    pub fn liveness(&mut self) -> bool {
        if self.conn.as_ref().is_none_or(|c| !c.is_connected()) {
            self.log(Direction::Event, "liveness: not connected".into(), &[]);
            self.survived = Some(false);
            return false;
        }
        let xid = self.xid();
        let msg = self.null_call(xid);
        let ex = self.call(xid, &msg);
        let alive = match &ex.received {
            Received::Message { bytes, .. } => {
                Message::decode(bytes, &Profile::default()).is_ok_and(|m| m.header.xid == xid)
            }
            _ => false,
        };
        self.survived = Some(alive);
        alive
    }

    /// Ends the check: disconnects and hands back the transcript.
    pub fn finish(mut self) -> (Vec<TranscriptEntry>, Option<bool>) {
        self.disconnect();
        (std::mem::take(&mut self.transcript), self.survived)
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
