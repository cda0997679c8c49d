//! The Version One header and body union (`rdma_msg`, `rdma_body`): the fast scan, the
//! field-by-field decoder, encoding and the one-line summary.

use core::fmt;

use super::types::{field, ErrorCode, Proc, RFC5666_EXTRA_LEN, VERSION};
use crate::chunk::{be_words, ChunkLists, Put};
use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::{ErrorArm, Profile};
use crate::xdr::{Reader, Writer};

/// The body of an RDMA_ERROR (RFC 8166 `rpc_rdma_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorBody<'a> {
    /// ERR_VERS with the range of versions the sender supports.
    Vers { low: u32, high: u32 },
    /// ERR_CHUNK.
    Chunk,
    /// An unknown code, decodable only under the RFC 5666 profile (`rdma_extra[8]`).
    Other { code: ErrorCode, extra: &'a [u8] },
}

impl ErrorBody<'_> {
    pub fn code(&self) -> ErrorCode {
        match self {
            ErrorBody::Vers { .. } => ErrorCode::ERR_VERS,
            ErrorBody::Chunk => ErrorCode::ERR_CHUNK,
            ErrorBody::Other { code, .. } => *code,
        }
    }

    /// The XDR enum name, or None for an unknown code.
    pub fn name(&self) -> Option<&'static str> {
        self.code().name()
    }
}

/// The body union (`rdma_body`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    Msg(ChunkLists<'a>),
    NoMsg(ChunkLists<'a>),
    MsgP { align: u32, thresh: u32, chunks: ChunkLists<'a> },
    Done,
    Error(ErrorBody<'a>),
}

impl<'a> Body<'a> {
    pub fn proc_(&self) -> Proc {
        match self {
            Body::Msg(_) => Proc::RDMA_MSG,
            Body::NoMsg(_) => Proc::RDMA_NOMSG,
            Body::MsgP { .. } => Proc::RDMA_MSGP,
            Body::Done => Proc::RDMA_DONE,
            Body::Error(_) => Proc::RDMA_ERROR,
        }
    }

    /// The chunk lists, for the bodies that have them.
    pub fn chunks(&self) -> Option<&ChunkLists<'a>> {
        match self {
            Body::Msg(c) | Body::NoMsg(c) | Body::MsgP { chunks: c, .. } => Some(c),
            Body::Done | Body::Error(_) => None,
        }
    }
}

/// A decoded Version One transport header (`rdma_msg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    pub body: Body<'a>,
}

/// A decoded message: the header and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    pub header: Header<'a>,
    /// Where the payload starts: the length of the transport header.
    pub payload_offset: usize,
    /// Everything after the transport header: the RPC payload for RDMA_MSG (for RDMA_MSGP,
    /// still with its padding), normally empty otherwise.
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// Decodes a Version One header at the start of `buf`.
    #[inline]
    pub fn decode(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
        Self::fast_or(buf, Ok, || Self::decode_precise(buf, profile))
    }

    /// The fast path alone: None where [`Message::decode`] runs the precise decoder.
    #[cfg(test)]
    pub(super) fn scan(buf: &'a [u8]) -> Option<Message<'a>> {
        Self::fast_or(buf, Some, || None)
    }

    /// The fast path for the common forms (RDMA_MSG, RDMA_NOMSG, ERR_VERS, ERR_CHUNK): one
    /// pass, one bounds check per word or entry, no error values; `found` gets the message,
    /// built once, where the caller returns it (a scan returning an `Option<Message>` made
    /// the caller copy it into its `Result`). Anything else goes to `otherwise`: the precise
    /// decoder, which accepts exactly the same messages and says what is wrong with the others.
    #[inline(always)]
    fn fast_or<R>(buf: &'a [u8], found: impl FnOnce(Message<'a>) -> R, otherwise: impl FnOnce() -> R) -> R {
        'fast: {
            let Some(fixed) = buf.first_chunk::<{ field::BODY }>() else { break 'fast };
            let w = |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
            if w(field::VERS) != VERSION {
                break 'fast;
            }
            let nomsg = match w(field::PROC) {
                0 => false,
                1 => true,
                4 => match Self::scan_error(buf, w(field::XID), w(field::CREDIT)) {
                    Some(m) => return found(m),
                    None => break 'fast,
                },
                _ => break 'fast,
            };
            let Some((chunks, payload)) = ChunkLists::scan(&buf[field::BODY..]) else { break 'fast };
            let body = if nomsg { Body::NoMsg(chunks) } else { Body::Msg(chunks) };
            return found(Message {
                header: Header { xid: w(field::XID), vers: VERSION, credit: w(field::CREDIT), body },
                payload_offset: buf.len() - payload.len(),
                payload,
            });
        }
        otherwise()
    }

    /// The fast path for RDMA_ERROR with ERR_VERS or ERR_CHUNK.
    #[inline(never)]
    fn scan_error(buf: &'a [u8], xid: u32, credit: u32) -> Option<Message<'a>> {
        let word = |at| crate::chunk::word(buf, at);
        let (body, end) = match ErrorCode(word(field::BODY)?) {
            ErrorCode::ERR_VERS => {
                let (low, high) = (word(field::BODY + 4)?, word(field::BODY + 8)?);
                (ErrorBody::Vers { low, high }, field::BODY + 12)
            }
            ErrorCode::ERR_CHUNK => (ErrorBody::Chunk, field::BODY + 4),
            _ => return None,
        };
        Some(Message {
            header: Header { xid, vers: VERSION, credit, body: Body::Error(body) },
            payload_offset: end,
            payload: &buf[end..],
        })
    }

    /// The field-by-field decoder: the reference for what decodes, and the source of every
    /// error's field, offset and kind.
    #[cold]
    #[inline(never)]
    pub(super) fn decode_precise(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
        let mut r = Reader::new(buf);
        let xid = r.u32("rdma_xid")?;
        let vers = r.u32("rdma_vers")?;
        if vers != VERSION {
            return Err(DecodeError::new("rdma_vers", field::VERS, ErrorKind::UnsupportedVersion { value: vers }));
        }
        let credit = r.u32("rdma_credit")?;
        let body = Self::decode_body(&mut r, profile)?;
        let payload_offset = r.offset();
        Ok(Message { header: Header { xid, vers, credit, body }, payload_offset, payload: r.rest() })
    }

    fn decode_body(r: &mut Reader<'a>, profile: &Profile) -> Result<Body<'a>, DecodeError> {
        let at = r.offset();
        Ok(match Proc(r.u32("rdma_proc")?) {
            Proc::RDMA_MSG => Body::Msg(ChunkLists::decode(r)?),
            Proc::RDMA_NOMSG => Body::NoMsg(ChunkLists::decode(r)?),
            Proc::RDMA_MSGP => {
                let align = r.u32("rdma_align")?;
                let thresh = r.u32("rdma_thresh")?;
                Body::MsgP { align, thresh, chunks: ChunkLists::decode(r)? }
            }
            Proc::RDMA_DONE => Body::Done,
            Proc::RDMA_ERROR => Body::Error(Self::decode_error(r, profile)?),
            Proc(value) => return Err(DecodeError::new("rdma_proc", at, ErrorKind::UnknownProc { value })),
        })
    }

    fn decode_error(r: &mut Reader<'a>, profile: &Profile) -> Result<ErrorBody<'a>, DecodeError> {
        let at = r.offset();
        match ErrorCode(r.u32("rdma_err")?) {
            ErrorCode::ERR_VERS => Ok(ErrorBody::Vers { low: r.u32("rdma_vers_low")?, high: r.u32("rdma_vers_high")? }),
            ErrorCode::ERR_CHUNK => Ok(ErrorBody::Chunk),
            code => match profile.error_arm {
                ErrorArm::Rfc8166 => {
                    Err(DecodeError::new("rdma_err", at, ErrorKind::UnknownErrorCode { value: code.0 }))
                }
                ErrorArm::Rfc5666 => Ok(ErrorBody::Other { code, extra: r.take(RFC5666_EXTRA_LEN, "rdma_extra")? }),
            },
        }
    }
}

impl<'a> Header<'a> {
    /// Encoded length of the transport header.
    pub fn encoded_len(&self) -> usize {
        field::BODY
            + match &self.body {
                Body::Msg(c) | Body::NoMsg(c) => c.encoded_len(),
                Body::MsgP { chunks, .. } => 8 + chunks.encoded_len(),
                Body::Done => 0,
                Body::Error(ErrorBody::Vers { .. }) => 12,
                Body::Error(ErrorBody::Chunk) => 4,
                Body::Error(ErrorBody::Other { extra, .. }) => 4 + extra.len(),
            }
    }

    /// Writes the header into `w`.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.vers)?;
        w.u32(self.credit)?;
        w.u32(self.body.proc_().0)?;
        match &self.body {
            Body::Msg(c) | Body::NoMsg(c) => c.encode(w),
            Body::MsgP { align, thresh, chunks } => {
                w.u32(*align)?;
                w.u32(*thresh)?;
                chunks.encode(w)
            }
            Body::Done => Ok(()),
            Body::Error(e) => {
                w.u32(e.code().0)?;
                match e {
                    ErrorBody::Vers { low, high } => {
                        w.u32(*low)?;
                        w.u32(*high)
                    }
                    ErrorBody::Chunk => Ok(()),
                    ErrorBody::Other { extra, .. } => w.bytes(extra),
                }
            }
        }
    }

    /// Writes the header into `buf`; returns the length written.
    #[inline]
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        if let Some(n) = self.put(buf) {
            return Ok(n);
        }
        let mut w = Writer::new(buf);
        self.encode(&mut w)?;
        Ok(w.len())
    }

    /// The fast path of [`Header::encode_into`] for RDMA_MSG and RDMA_NOMSG.
    #[inline]
    fn put(&self, buf: &mut [u8]) -> Option<usize> {
        let (Body::Msg(chunks) | Body::NoMsg(chunks)) = &self.body else { return None };
        let mut p = Put::new(buf);
        p.array::<{ field::BODY }>(be_words([self.xid, self.vers, self.credit, self.body.proc_().0]))?;
        chunks.put(&mut p)?;
        Some(p.pos())
    }
}

impl fmt::Display for Header<'_> {
    /// One line: `RDMA_MSG xid=0x00000001 vers=1 credit=32 reads=1 writes=0 reply=absent`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} xid={:#010x} vers={} credit={}", self.body.proc_(), self.xid, self.vers, self.credit)?;
        if let Body::MsgP { align, thresh, .. } = self.body {
            write!(f, " align={align} thresh={thresh}")?;
        }
        if let Some(c) = self.body.chunks() {
            write!(f, " reads={} writes={}", c.reads.len(), c.writes.len())?;
            match c.reply {
                Some(r) => write!(f, " reply={}", r.segment_count())?,
                None => write!(f, " reply=absent")?,
            }
        }
        if let Body::Error(e) = self.body {
            match e {
                ErrorBody::Vers { low, high } => write!(f, " ERR_VERS low={low} high={high}")?,
                ErrorBody::Chunk => write!(f, " ERR_CHUNK")?,
                ErrorBody::Other { code, .. } => write!(f, " rdma_err={code}")?,
            }
        }
        Ok(())
    }
}

crate::xdr::impl_encode! {
    Header<'_> => encode, fast encode_into;
}
