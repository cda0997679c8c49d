//! The Version Two header and body union (`rpcrdma2_xprt_hdr`, `rpcrdma2_body`): the
//! field-by-field decoder, encoding and the one-line summary. RDMA2_OPTIONAL bodies are
//! decoded by [`super::xcharext`] and [`super::rtrext`] from a sub-reader over `rdma_optinfo`,
//! which they must fill exactly. [`Message::decode`] lives with its fast path in `scan`, which
//! imports this module (never the other way round).

use core::fmt;

use super::types::{field, Chunks, ErrorBody, ErrorInfo, MsgType, Proc, VERSION};
use super::{rtrext, xcharext};
use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::{Profile, V2Envelope};
use crate::xdr::{round_up4, Reader, Writer};

/// The content of `rdma_optinfo`: a known extension operation, or raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptInfo<'a> {
    /// xcharext-02 ROPT_INITXCH .. ROPT_UPDXCH.
    Xchar(xcharext::Op<'a>),
    /// rtrext-03 ROPT_XMTREQ .. ROPT_REPTERR.
    Rtr(rtrext::Op<'a>),
    /// An opttype this decoder does not know (the receiver answers RDMA2_ERR_INVAL_OPTION).
    Raw(&'a [u8]),
}

impl<'a> OptInfo<'a> {
    /// Decodes `data` (the optinfo bytes, first byte at absolute offset `base`) for `opttype`.
    /// A known operation must fill the opaque exactly (wire notes 1.5).
    #[inline]
    pub fn decode(opttype: u32, data: &'a [u8], base: usize, profile: &Profile) -> Result<Self, DecodeError> {
        let mut r = Reader::with_base(data, base);
        let info = if let Some(op) = xcharext::Op::decode(opttype, &mut r, profile)? {
            OptInfo::Xchar(op)
        } else if let Some(op) = rtrext::Op::decode(opttype, &mut r, profile)? {
            OptInfo::Rtr(op)
        } else {
            return Ok(OptInfo::Raw(data));
        };
        r.expect_empty("rdma_optinfo")?;
        Ok(info)
    }

    /// Unpadded length of the optinfo data.
    pub fn data_len(&self) -> usize {
        match self {
            OptInfo::Xchar(op) => op.encoded_len(),
            OptInfo::Rtr(op) => op.encoded_len(),
            OptInfo::Raw(b) => b.len(),
        }
    }

    /// Writes the optinfo data (without length word or pad).
    pub fn encode_data(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            OptInfo::Xchar(op) => op.encode(w),
            OptInfo::Rtr(op) => op.encode(w),
            OptInfo::Raw(b) => w.bytes(b),
        }
    }

    /// The operation's name (`ROPT_INITXCH`), or None for raw data.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            OptInfo::Xchar(op) => Some(op.name()),
            OptInfo::Rtr(op) => Some(op.name()),
            OptInfo::Raw(_) => None,
        }
    }

    /// The XDR type overlaying optinfo (`optinfo_initxch`), or None for raw data.
    pub fn type_name(&self) -> Option<&'static str> {
        match self {
            OptInfo::Xchar(op) => Some(op.type_name()),
            OptInfo::Rtr(op) => Some(op.type_name()),
            OptInfo::Raw(_) => None,
        }
    }
}

/// `rpcrdma2_optional`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Optional<'a> {
    /// `None` only in the -00 envelope, which has no rdma_optdir.
    pub dir: Option<MsgType>,
    pub opttype: u32,
    pub info: OptInfo<'a>,
}

impl<'a> Optional<'a> {
    #[inline]
    pub fn decode(r: &mut Reader<'a>, profile: &Profile) -> Result<Self, DecodeError> {
        let dir = match profile.v2_envelope {
            V2Envelope::Draft01 => Some(MsgType::decode(r, "rdma_optdir")?),
            V2Envelope::Draft00 => None,
        };
        let opttype = r.u32("rdma_opttype")?;
        let base = r.offset() + 4;
        let data = r.opaque("rdma_optinfo", u32::MAX)?;
        Ok(Optional { dir, opttype, info: OptInfo::decode(opttype, data, base, profile)? })
    }

    pub fn encoded_len(&self) -> usize {
        self.dir.map_or(0, |_| 4) + 4 + 4 + round_up4(self.info.data_len())
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if let Some(d) = self.dir {
            w.u32(d.0)?;
        }
        w.u32(self.opttype)?;
        let at = w.reserve_u32()?;
        self.info.encode_data(w)?;
        w.finish_opaque(at)
    }
}

/// `rpcrdma2_body`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    Msg(Chunks<'a>),
    NoMsg(Chunks<'a>),
    Error(ErrorInfo),
    Optional(Optional<'a>),
}

impl<'a> Body<'a> {
    pub fn proc_(&self) -> Proc {
        match self {
            Body::Msg(_) => Proc::RDMA2_MSG,
            Body::NoMsg(_) => Proc::RDMA2_NOMSG,
            Body::Error(_) => Proc::RDMA2_ERROR,
            Body::Optional(_) => Proc::RDMA2_OPTIONAL,
        }
    }

    pub fn chunks(&self) -> Option<&Chunks<'a>> {
        match self {
            Body::Msg(c) | Body::NoMsg(c) => Some(c),
            _ => None,
        }
    }
}

/// A decoded Version Two transport header (`rpcrdma2_xprt_hdr`).
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
    /// Everything after the header: the RPC payload of RDMA2_MSG, the (partial) payload of
    /// an RDMA2_OPTIONAL, normally empty otherwise.
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The field-by-field decoder behind [`Message::decode`] (which tries the scan first):
    /// the reference for what decodes, and the source of every error's field, offset and kind.
    pub(super) fn decode_precise(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
        let mut r = Reader::new(buf);
        let xid = r.u32("rdma_xid")?;
        let vers = r.u32("rdma_vers")?;
        if vers != VERSION {
            return Err(DecodeError::new("rdma_vers", field::VERS, ErrorKind::UnsupportedVersion { value: vers }));
        }
        let credit = r.u32("rdma_credit")?;
        let at = r.offset();
        let body = match Proc(r.u32("rdma_proc")?) {
            Proc::RDMA2_MSG => Body::Msg(Chunks::decode(&mut r, profile.v2_envelope)?),
            Proc::RDMA2_NOMSG => Body::NoMsg(Chunks::decode(&mut r, profile.v2_envelope)?),
            Proc::RDMA2_ERROR => Body::Error(ErrorInfo::decode(&mut r, profile.v2_error_numbering)?),
            Proc::RDMA2_OPTIONAL => Body::Optional(Optional::decode(&mut r, profile)?),
            Proc(value) => return Err(DecodeError::new("rdma_proc", at, ErrorKind::UnknownProc { value })),
        };
        let payload_offset = r.offset();
        Ok(Message { header: Header { xid, vers, credit, body }, payload_offset, payload: r.rest() })
    }
}

impl<'a> Header<'a> {
    pub fn encoded_len(&self) -> usize {
        field::BODY
            + match &self.body {
                Body::Msg(c) | Body::NoMsg(c) => c.encoded_len(),
                Body::Error(e) => e.encoded_len(),
                Body::Optional(o) => o.encoded_len(),
            }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.vers)?;
        w.u32(self.credit)?;
        w.u32(self.body.proc_().0)?;
        match &self.body {
            Body::Msg(c) | Body::NoMsg(c) => c.encode(w),
            Body::Error(e) => e.encode(w),
            Body::Optional(o) => o.encode(w),
        }
    }

    /// Writes the header into `buf`; returns the length written.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = Writer::new(buf);
        self.encode(&mut w)?;
        Ok(w.len())
    }
}

impl fmt::Display for Header<'_> {
    /// One line: `RDMA2_OPTIONAL xid=0x00000001 vers=2 credit=32 optdir=CALL opttype=1 ROPT_INITXCH optinfo=24`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} xid={:#010x} vers={} credit={}", self.body.proc_(), self.xid, self.vers, self.credit)?;
        match &self.body {
            Body::Msg(c) | Body::NoMsg(c) => {
                if let Some(d) = c.direction {
                    write!(f, " dir={d}")?;
                }
                write!(f, " reads={} writes={}", c.lists.reads.len(), c.lists.writes.len())?;
                match c.lists.reply {
                    Some(r) => write!(f, " reply={}", r.segment_count()),
                    None => write!(f, " reply=absent"),
                }
            }
            Body::Error(e) => {
                write!(f, " {} ({})", e.body.name(), e.code)?;
                if let ErrorBody::Vers { low, high } = e.body {
                    write!(f, " low={low} high={high}")?;
                }
                Ok(())
            }
            Body::Optional(o) => {
                if let Some(d) = o.dir {
                    write!(f, " optdir={d}")?;
                }
                write!(f, " opttype={}", o.opttype)?;
                if let Some(n) = o.info.name() {
                    write!(f, " {n}")?;
                }
                write!(f, " optinfo={}", o.info.data_len())
            }
        }
    }
}

crate::xdr::impl_encode! {
    Header<'_> => encode, fast encode_into;
}
