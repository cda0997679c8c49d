//! The owned representation of a Version One transport header (RFC 8166 4.1.2).

use std::fmt;
use std::ops::Range;

use rpcrdma_codec::check::{Role, Violation, Violations};
use rpcrdma_codec::chunk::{ChunkLists, ReadSegment, Segment};
use rpcrdma_codec::v1::{self, ErrorCode, FixedFields, Message, Proc};
use rpcrdma_codec::{DecodeError, Profile};

/// The three chunk lists, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunks {
    pub reads: Vec<ReadSegment>,
    pub writes: Vec<Vec<Segment>>,
    pub reply: Option<Vec<Segment>>,
}

impl Chunks {
    pub fn of(lists: &ChunkLists<'_>) -> Chunks {
        Chunks {
            reads: lists.reads.segments().collect(),
            writes: lists.writes.chunks().map(|c| c.segments().collect()).collect(),
            reply: lists.reply.map(|c| c.segments().collect()),
        }
    }

    /// The length a write chunk's segments add up to.
    pub fn write_length(chunk: &[Segment]) -> u64 {
        chunk.iter().map(|s| s.length as u64).sum()
    }
}

/// The body union (`rdma_body`), owned; payloads are ranges of the frame's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Msg {
        chunks: Chunks,
        payload: Range<usize>,
    },
    NoMsg {
        chunks: Chunks,
    },
    MsgP {
        align: u32,
        thresh: u32,
        chunks: Chunks,
    },
    Done,
    /// RDMA_ERROR: ERR_VERS with its range, ERR_CHUNK, or another code.
    Error {
        code: ErrorCode,
        vers_range: Option<(u32, u32)>,
    },
}

impl Body {
    /// The rdma_proc this body is the arm of (RFC 8166 4.2.4).
    pub fn proc_(&self) -> Proc {
        match self {
            Body::Msg { .. } => Proc::RDMA_MSG,
            Body::NoMsg { .. } => Proc::RDMA_NOMSG,
            Body::MsgP { .. } => Proc::RDMA_MSGP,
            Body::Done => Proc::RDMA_DONE,
            Body::Error { .. } => Proc::RDMA_ERROR,
        }
    }

    pub fn chunks(&self) -> Option<&Chunks> {
        match self {
            Body::Msg { chunks, .. } | Body::NoMsg { chunks } | Body::MsgP { chunks, .. } => Some(chunks),
            Body::Done | Body::Error { .. } => None,
        }
    }

    /// The procedure's name (`RDMA_MSG`), or for RDMA_ERROR the error's (`RDMA_ERROR ERR_CHUNK`).
    pub fn describe(&self) -> String {
        match self {
            Body::Msg { .. } => "RDMA_MSG".into(),
            Body::NoMsg { .. } => "RDMA_NOMSG".into(),
            Body::MsgP { .. } => "RDMA_MSGP".into(),
            Body::Done => "RDMA_DONE".into(),
            // The error's name, or its number when it has none.
            Body::Error { code, .. } => format!("RDMA_ERROR {code}"),
        }
    }
}

/// The role an RDMA_MSG's inline RPC message says its sender has: msg_type CALL is a
/// requester's, REPLY a responder's, in either direction (RFC 8167 4.1: the RPC payload's
/// call direction field tells them apart; a reverse-direction call arrives where replies are
/// expected). None when there is no inline RPC message or its msg_type is neither.
fn direction(m: &Message<'_>) -> Option<Role> {
    if !matches!(m.header.body, v1::Body::Msg(_)) {
        return None;
    }
    match m.payload.get(4..8)? {
        [0, 0, 0, 0] => Some(Role::Call),
        [0, 0, 0, 1] => Some(Role::Reply),
        _ => None,
    }
}

/// A Version One header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    pub body: Body,
    /// The RFC 8166 rules the message breaks, as sent by its `role`.
    pub violations: Vec<Violation>,
    /// The header's one-line decoding, as the codec prints it.
    summary: String,
}

impl Header {
    /// Decodes the header; with it, the range of an RDMA_MSG's inline payload.
    pub fn decode(bytes: &[u8], profile: &Profile, role: Role) -> Result<(Header, Option<Range<usize>>), DecodeError> {
        let m = Message::decode(bytes, profile)?;
        let role = direction(&m).unwrap_or(role);
        let violations = Violations::of(&m, role).iter().collect();
        let payload = m.payload_offset..bytes.len();
        let body = match m.header.body {
            v1::Body::Msg(c) => Body::Msg { chunks: Chunks::of(&c), payload: payload.clone() },
            v1::Body::NoMsg(c) => Body::NoMsg { chunks: Chunks::of(&c) },
            v1::Body::MsgP { align, thresh, chunks } => Body::MsgP { align, thresh, chunks: Chunks::of(&chunks) },
            v1::Body::Done => Body::Done,
            v1::Body::Error(e) => Body::Error {
                code: e.code(),
                vers_range: match e {
                    v1::ErrorBody::Vers { low, high } => Some((low, high)),
                    _ => None,
                },
            },
        };
        let rpc = match (&body, m.payload.is_empty()) {
            (Body::Msg { .. }, false) => Some(payload),
            _ => None,
        };
        let (xid, vers, credit, summary) = (m.header.xid, m.header.vers, m.header.credit, m.header.to_string());
        let h = Header { xid, vers, credit, body, violations, summary };
        Ok((h, rpc))
    }

    pub fn fixed(&self) -> FixedFields {
        FixedFields { xid: self.xid, vers: self.vers, credit: self.credit, proc_: self.body.proc_().get() }
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}
