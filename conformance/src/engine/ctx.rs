//! The context a scenario runs in: one connection to the peer at a time, every message sent
//! and received recorded in a transcript, every wait bounded by a deadline, and every message
//! received decoded once into a [`Frame`].

use std::time::{Duration, Instant};

use rpcrdma_codec::check::Role;
use rpcrdma_codec::private_data::PrivateData;
use rpcrdma_codec::v1::field;
use rpcrdma_codec::xdr::Encode;

use rpcrdma_peers::proto::Call;
use rpcrdma_peers::transport::{Access, Connection, Connector, Event, Region, TransportError, WcStatus};

use super::{Mismatch, NoMessage, RunOptions};
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
}

/// What came back when the scenario waited.
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
                Some(h) => format!("{} (Send With Invalidate of {h:#x})", without_invalidation(f)),
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

fn without_invalidation(f: &Frame) -> String {
    let mut plain = f.clone();
    plain.invalidated = None;
    plain.to_string()
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
            peer_private_data: Vec::new(),
        }
    }

    fn log(&mut self, direction: Direction, summary: String, bytes: &[u8]) {
        self.transcript.push(TranscriptEntry { direction, at: self.started.elapsed(), summary, bytes: bytes.to_vec() });
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
        self.disconnect();
        let deadline = deadline_after(self.options.timeout);
        let mut conn = self.connector.connect(private_data, deadline).map_err(|e| {
            self.log(Direction::Event, format!("connect: {e}"), &[]);
            Mismatch::Connect(e)
        })?;
        self.peer_private_data = conn.peer_private_data().to_vec();
        let note = format!("connected to {} with private data {}", self.connector.describe(), hex(private_data));
        self.log(Direction::Event, note, &[]);
        conn.post_recv(self.options.receive_size as usize, self.options.credits_requested as usize)
            .map_err(Mismatch::Connect)?;
        self.conn = Some(conn);
        Ok(())
    }

    /// Connects if not connected.
    pub fn ensure_connected(&mut self) -> Result<(), Mismatch> {
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
        self.conn().register(length, access).expect("registration on a live connection")
    }

    /// A registered region holding `data`, for the peer to RDMA Read.
    pub fn source(&mut self, data: &[u8]) -> Region {
        let region = self.register(data.len() as u32, Access::READ);
        self.conn().write_local(&region, 0, data).expect("a fresh region");
        region
    }

    /// Posts a Send of `bytes`.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let summary = Frame::decode(bytes.to_vec(), None, Role::Call).to_string();
        self.log(Direction::Sent, summary, bytes);
        match self.conn.as_deref_mut() {
            Some(c) => c.send(bytes),
            None => Err(TransportError::Disconnected),
        }
    }

    /// Waits until `deadline` for the next message or failure; keeps the receive window
    /// full by reposting a receive for each message that arrives. Each message is decoded
    /// once, here.
    pub fn recv_until(&mut self, deadline: Instant) -> Received {
        loop {
            let Some(c) = self.conn.as_deref_mut() else { return Received::Nothing(NoMessage::Disconnected) };
            let got = match c.poll(deadline) {
                Ok(Event::SendDone { status: WcStatus::Success }) => continue,
                Ok(Event::SendDone { status }) => Received::Nothing(NoMessage::SendFailed(status)),
                Ok(Event::Recv { status: WcStatus::Success, data, invalidated }) => {
                    let size = self.options.receive_size as usize;
                    let _ = c.post_recv(size, 1);
                    Received::Message(Frame::decode(data, invalidated, Role::Reply))
                }
                Ok(Event::Recv { status, .. }) => Received::Nothing(NoMessage::RecvFailed(status)),
                Ok(Event::Disconnected) | Err(TransportError::Disconnected) => {
                    Received::Nothing(NoMessage::Disconnected)
                }
                Err(TransportError::Timeout) => Received::SILENCE,
                Err(e) => {
                    self.log(Direction::Event, format!("poll: {e}"), &[]);
                    Received::Nothing(NoMessage::Disconnected)
                }
            };
            match &got {
                Received::Message(f) => {
                    let summary = f.to_string();
                    self.log(Direction::Received, summary, &f.bytes().to_vec());
                }
                other => self.log(Direction::Event, other.describe(), &[]),
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

    /// Ends the check: disconnects and hands back the transcript.
    pub fn finish(mut self) -> (Vec<TranscriptEntry>, Option<bool>) {
        self.disconnect();
        (std::mem::take(&mut self.transcript), self.survived)
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
