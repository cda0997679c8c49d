//! The RPC-over-RDMA Version Two transport header (draft-cel-nfsv4-rpcrdma-version-two-01
//! section 4.2; wire notes 1.5-1.7 and C1-C8), with the -00 envelope and the -02 and -04 error
//! numberings as profiles. RDMA2_OPTIONAL bodies are decoded by [`crate::xcharext`] and
//! [`crate::rtrext`] from a sub-reader over `rdma_optinfo`, which they must fill exactly.
//!
//! Also here: [`Array`], the validated-once view over an XDR counted array (`T x<>`) that
//! both extensions use for their lists.

use core::fmt;

use crate::check::Role;
pub use crate::check::Violations;
use crate::chunk::{ChunkLists, ChunkWriter, ReadSegment, Segment};
use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::profile::{Profile, V2Envelope, V2ErrorNumbering};
use crate::xdr::{pad4, round_up4, Reader, Writer};
use crate::{rtrext, xcharext};

/// Byte offsets of the fixed fields and of the -01 body fields (wire notes 1.5).
pub mod field {
    pub const XID: usize = 0;
    pub const VERS: usize = 4;
    pub const CREDIT: usize = 8;
    pub const PROC: usize = 12;
    /// First byte after the fixed fields: rdma_direction or rdma_optdir (-01), rdma_err.
    pub const BODY: usize = 16;
    /// RDMA2_OPTIONAL under -01: rdma_opttype, the optinfo length word, the optinfo data.
    pub const OPTTYPE: usize = 20;
    pub const OPTINFO_LEN: usize = 24;
    pub const OPTINFO: usize = 28;
    /// The same under -00 (no rdma_optdir).
    pub const OPTTYPE_00: usize = 16;
    pub const OPTINFO_LEN_00: usize = 20;
    pub const OPTINFO_00: usize = 24;
}

/// rdma_vers for Version Two.
pub const VERSION: u32 = 2;

// ---------------------------------------------------------------------------------------------
// Counted arrays

/// An element of an XDR counted array: decodable alone, with a minimum encoded size that
/// bounds the count before anything loops (rustls' `Codec`, smoltcp's `Repr`).
pub trait Item<'a>: Copy {
    /// The fewest bytes one element can take.
    const MIN_LEN: usize;
    /// Decodes the element's structure (extension-specific typing is checked by the caller).
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError>;
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError>;
    fn encoded_len(&self) -> usize;
}

impl<'a> Item<'a> for u32 {
    const MIN_LEN: usize = 4;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.u32("element")
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(*self)
    }
    fn encoded_len(&self) -> usize {
        4
    }
}

/// `rpcrdma2_segment` (rtrext's `rpcrdma1_segment`, wire notes R7): the v1 plain segment.
impl<'a> Item<'a> for Segment {
    const MIN_LEN: usize = 16;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Segment::new(r.u32("rdma_handle")?, r.u32("rdma_length")?, r.u64("rdma_offset")?))
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        Segment::encode(self, w)
    }
    fn encoded_len(&self) -> usize {
        16
    }
}

#[derive(Clone, Copy)]
enum Repr<'a, T> {
    /// Validated bytes of `count` elements (count word excluded), first byte at `base`.
    Wire { bytes: &'a [u8], count: u32, base: usize },
    /// Plain values, for building.
    Slice(&'a [T]),
}

/// `T x<>`: a count and its elements, either validated borrowed bytes (after decoding) or a
/// slice of values (for building). Both iterate the same way and encode the same bytes.
#[derive(Clone, Copy)]
pub struct Array<'a, T> {
    repr: Repr<'a, T>,
}

impl<'a, T: Item<'a>> Array<'a, T> {
    /// An array of plain values.
    pub const fn from_slice(items: &'a [T]) -> Self {
        Array { repr: Repr::Slice(items) }
    }

    /// The empty array.
    pub const fn empty() -> Self {
        Array { repr: Repr::Slice(&[]) }
    }

    /// Decodes a count (checked against the bytes left, in `field`) and its elements.
    pub fn decode(r: &mut Reader<'a>, field: Field) -> Result<Self, DecodeError> {
        Self::decode_with(r, field, T::decode)
    }

    /// Like [`Array::decode`], with `item` decoding (and checking) each element.
    pub fn decode_with<F>(r: &mut Reader<'a>, field: Field, mut item: F) -> Result<Self, DecodeError>
    where
        F: FnMut(&mut Reader<'a>) -> Result<T, DecodeError>,
    {
        let count = r.count(field, T::MIN_LEN)?;
        let (start, base) = (r.position(), r.offset());
        for _ in 0..count {
            item(r)?;
        }
        Ok(Array { repr: Repr::Wire { bytes: r.since(start), count, base } })
    }

    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Wire { count, .. } => count as usize,
            Repr::Slice(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> ArrayIter<'a, T> {
        match self.repr {
            Repr::Wire { bytes, count, base } => {
                ArrayIter { inner: IterRepr::Wire { r: Reader::with_base(bytes, base), left: count } }
            }
            Repr::Slice(s) => ArrayIter { inner: IterRepr::Slice(s.iter()) },
        }
    }

    /// Element `i` (walks the array: elements may vary in size).
    pub fn get(&self, i: usize) -> Option<T> {
        self.iter().nth(i)
    }

    /// The elements' encoding as received (count word excluded), for a decoded array.
    pub fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire { bytes, .. } => Some(bytes),
            Repr::Slice(_) => None,
        }
    }

    pub fn encoded_len(&self) -> usize {
        4 + match self.repr {
            Repr::Wire { bytes, .. } => bytes.len(),
            Repr::Slice(s) => s.iter().map(Item::encoded_len).sum(),
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.len() as u32)?;
        match self.repr {
            Repr::Wire { bytes, .. } => w.bytes(bytes),
            Repr::Slice(s) => s.iter().try_for_each(|x| x.encode(w)),
        }
    }
}

impl<'a, T: Item<'a>> Default for Array<'a, T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<'a, T: Item<'a> + PartialEq> PartialEq for Array<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: Item<'a> + Eq> Eq for Array<'a, T> {}

impl<'a, T: Item<'a> + fmt::Debug> fmt::Debug for Array<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[derive(Clone)]
enum IterRepr<'a, T> {
    Wire { r: Reader<'a>, left: u32 },
    Slice(core::slice::Iter<'a, T>),
}

/// Iterator over an [`Array`]. Decoded arrays were validated, so re-reading cannot fail.
#[derive(Clone)]
pub struct ArrayIter<'a, T> {
    inner: IterRepr<'a, T>,
}

impl<'a, T: Item<'a>> Iterator for ArrayIter<'a, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match &mut self.inner {
            IterRepr::Wire { r, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                T::decode(r).ok()
            }
            IterRepr::Slice(s) => s.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.inner {
            IterRepr::Wire { left, .. } => *left as usize,
            IterRepr::Slice(s) => s.len(),
        };
        (n, Some(n))
    }
}

impl<'a, T: Item<'a>> ExactSizeIterator for ArrayIter<'a, T> {}

impl<T> fmt::Debug for ArrayIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArrayIter")
    }
}

// ---------------------------------------------------------------------------------------------
// Header fields

/// `enum msg_type` (`rpcrdma2_msg_type`, wire notes C3): rdma_direction, rdma_optdir, xmsi_dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsgType {
    Call = 0,
    Reply = 1,
}

impl MsgType {
    pub fn from_u32(v: u32) -> Option<MsgType> {
        match v {
            0 => Some(MsgType::Call),
            1 => Some(MsgType::Reply),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MsgType::Call => "CALL",
            MsgType::Reply => "REPLY",
        }
    }

    /// Reads the enum; another value is `invalid-enum` in `field`.
    pub fn decode(r: &mut Reader<'_>, field: Field) -> Result<MsgType, DecodeError> {
        let at = r.offset();
        let value = r.u32(field)?;
        MsgType::from_u32(value).ok_or(DecodeError::new(field, at, ErrorKind::InvalidEnum { value }))
    }
}

/// rdma_proc (`rpcrdma2_proc`). 2 and 3 have no arm (wire notes C4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Proc {
    Msg = 0,
    NoMsg = 1,
    Error = 4,
    Optional = 5,
}

impl Proc {
    pub fn from_u32(v: u32) -> Option<Proc> {
        Some(match v {
            0 => Proc::Msg,
            1 => Proc::NoMsg,
            4 => Proc::Error,
            5 => Proc::Optional,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Proc::Msg => "RDMA2_MSG",
            Proc::NoMsg => "RDMA2_NOMSG",
            Proc::Error => "RDMA2_ERROR",
            Proc::Optional => "RDMA2_OPTIONAL",
        }
    }
}

/// `rpcrdma2_chunk_lists`: rdma_direction (absent under -00), then the v1 lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Chunks<'a> {
    /// `None` only in the -00 envelope, which has no direction field.
    pub direction: Option<MsgType>,
    pub lists: ChunkLists<'a>,
}

impl<'a> Chunks<'a> {
    pub fn decode(r: &mut Reader<'a>, envelope: V2Envelope) -> Result<Self, DecodeError> {
        let direction = match envelope {
            V2Envelope::Draft01 => Some(MsgType::decode(r, "rdma_direction")?),
            V2Envelope::Draft00 => None,
        };
        Ok(Chunks { direction, lists: ChunkLists::decode(r)? })
    }

    pub fn encoded_len(&self) -> usize {
        self.direction.map_or(0, |_| 4) + self.lists.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if let Some(d) = self.direction {
            w.u32(d as u32)?;
        }
        self.lists.encode(w)
    }
}

/// The meaning of an RDMA2_ERROR, independent of its code's numbering (wire notes 1.6, 1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorBody {
    /// RDMA2_ERR_VERS (1 in every revision).
    Vers { low: u32, high: u32 },
    /// RDMA2_ERR_BAD_HEADER (-01: 2).
    BadHeader,
    /// RDMA2_ERR_BAD_XDR (-02 on: 2).
    BadXdr,
    /// RDMA2_ERR_CANT_REPLY (-02: 3).
    CantReply { processed: bool, segment_index: u32, length_needed: u32 },
    /// RDMA2_ERR_INVAL_PROC (-02: 4, -04: 3).
    InvalProc,
    /// RDMA2_ERR_READ_CHUNKS (-04: 4).
    ReadChunks { max_chunks: u32 },
    /// RDMA2_ERR_WRITE_CHUNKS (-04: 5).
    WriteChunks { max_chunks: u32 },
    /// RDMA2_ERR_SEGMENTS (-04: 6).
    Segments { max_segments: u32 },
    /// RDMA2_ERR_WRITE_RESOURCE (-04: 7).
    WriteResource { chunk_index: u32, length_needed: u32 },
    /// RDMA2_ERR_REPLY_RESOURCE (-04: 8).
    ReplyResource { length_needed: u32 },
    /// RDMA2_ERR_INVAL_OPTION (-01: 3, -02: 5, -04: 9).
    InvalOption,
    /// RDMA2_ERR_SYSTEM (-03: 6, -04: 10).
    System,
}

impl ErrorBody {
    /// The rdma_err value of this error under `numbering`, if it has one there.
    pub fn code(&self, numbering: V2ErrorNumbering) -> Option<u32> {
        use ErrorBody as E;
        use V2ErrorNumbering as N;
        Some(match (numbering, self) {
            (_, E::Vers { .. }) => 1,
            (N::Draft01, E::BadHeader) => 2,
            (N::Draft01, E::InvalOption) => 3,
            (N::Draft02 | N::Draft04, E::BadXdr) => 2,
            (N::Draft02, E::CantReply { .. }) => 3,
            (N::Draft02, E::InvalProc) => 4,
            (N::Draft02, E::InvalOption) => 5,
            (N::Draft02, E::System) => 6,
            (N::Draft04, E::InvalProc) => 3,
            (N::Draft04, E::ReadChunks { .. }) => 4,
            (N::Draft04, E::WriteChunks { .. }) => 5,
            (N::Draft04, E::Segments { .. }) => 6,
            (N::Draft04, E::WriteResource { .. }) => 7,
            (N::Draft04, E::ReplyResource { .. }) => 8,
            (N::Draft04, E::InvalOption) => 9,
            (N::Draft04, E::System) => 10,
            _ => return None,
        })
    }

    /// The XDR enum name.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorBody::Vers { .. } => "RDMA2_ERR_VERS",
            ErrorBody::BadHeader => "RDMA2_ERR_BAD_HEADER",
            ErrorBody::BadXdr => "RDMA2_ERR_BAD_XDR",
            ErrorBody::CantReply { .. } => "RDMA2_ERR_CANT_REPLY",
            ErrorBody::InvalProc => "RDMA2_ERR_INVAL_PROC",
            ErrorBody::ReadChunks { .. } => "RDMA2_ERR_READ_CHUNKS",
            ErrorBody::WriteChunks { .. } => "RDMA2_ERR_WRITE_CHUNKS",
            ErrorBody::Segments { .. } => "RDMA2_ERR_SEGMENTS",
            ErrorBody::WriteResource { .. } => "RDMA2_ERR_WRITE_RESOURCE",
            ErrorBody::ReplyResource { .. } => "RDMA2_ERR_REPLY_RESOURCE",
            ErrorBody::InvalOption => "RDMA2_ERR_INVAL_OPTION",
            ErrorBody::System => "RDMA2_ERR_SYSTEM",
        }
    }

    /// Bytes of the arm after rdma_err.
    pub fn body_len(&self) -> usize {
        match self {
            ErrorBody::Vers { .. } | ErrorBody::WriteResource { .. } => 8,
            ErrorBody::CantReply { .. } => 12,
            ErrorBody::ReadChunks { .. }
            | ErrorBody::WriteChunks { .. }
            | ErrorBody::Segments { .. }
            | ErrorBody::ReplyResource { .. } => 4,
            _ => 0,
        }
    }

    fn encode_arm(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match *self {
            ErrorBody::Vers { low, high } => {
                w.u32(low)?;
                w.u32(high)
            }
            ErrorBody::CantReply { processed, segment_index, length_needed } => {
                w.bool(processed)?;
                w.u32(segment_index)?;
                w.u32(length_needed)
            }
            ErrorBody::ReadChunks { max_chunks } | ErrorBody::WriteChunks { max_chunks } => w.u32(max_chunks),
            ErrorBody::Segments { max_segments } => w.u32(max_segments),
            ErrorBody::WriteResource { chunk_index, length_needed } => {
                w.u32(chunk_index)?;
                w.u32(length_needed)
            }
            ErrorBody::ReplyResource { length_needed } => w.u32(length_needed),
            _ => Ok(()),
        }
    }
}

/// `rpcrdma2_error`: the rdma_err word as sent and what it means under the decoding profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorInfo {
    pub code: u32,
    pub body: ErrorBody,
}

impl ErrorInfo {
    /// `body` with its code under `numbering`; None when that numbering lacks it.
    pub fn new(body: ErrorBody, numbering: V2ErrorNumbering) -> Option<ErrorInfo> {
        Some(ErrorInfo { code: body.code(numbering)?, body })
    }

    /// Decodes rdma_err and its arm; a code with no arm is `unknown-error-code`.
    pub fn decode(r: &mut Reader<'_>, numbering: V2ErrorNumbering) -> Result<ErrorInfo, DecodeError> {
        use ErrorBody as E;
        use V2ErrorNumbering as N;
        let at = r.offset();
        let code = r.u32("rdma_err")?;
        let body = match (numbering, code) {
            (_, 1) => E::Vers { low: r.u32("rdma_vers_low")?, high: r.u32("rdma_vers_high")? },
            (N::Draft01, 2) => E::BadHeader,
            (N::Draft01, 3) => E::InvalOption,
            (N::Draft02 | N::Draft04, 2) => E::BadXdr,
            (N::Draft02, 3) => E::CantReply {
                processed: r.bool("rdma_processed")?,
                segment_index: r.u32("rdma_segment_index")?,
                length_needed: r.u32("rdma_length_needed")?,
            },
            (N::Draft02, 4) | (N::Draft04, 3) => E::InvalProc,
            (N::Draft02, 5) | (N::Draft04, 9) => E::InvalOption,
            (N::Draft02, 6) | (N::Draft04, 10) => E::System,
            (N::Draft04, 4) => E::ReadChunks { max_chunks: r.u32("rdma_max_chunks")? },
            (N::Draft04, 5) => E::WriteChunks { max_chunks: r.u32("rdma_max_chunks")? },
            (N::Draft04, 6) => E::Segments { max_segments: r.u32("rdma_max_segments")? },
            (N::Draft04, 7) => E::WriteResource {
                chunk_index: r.u32("rdma_chunk_index")?,
                length_needed: r.u32("rdma_length_needed")?,
            },
            (N::Draft04, 8) => E::ReplyResource { length_needed: r.u32("rdma_length_needed")? },
            (_, value) => return Err(DecodeError::new("rdma_err", at, ErrorKind::UnknownErrorCode { value })),
        };
        Ok(ErrorInfo { code, body })
    }

    pub fn encoded_len(&self) -> usize {
        4 + self.body.body_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.code)?;
        self.body.encode_arm(w)
    }
}

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
            w.u32(d as u32)?;
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
            Body::Msg(_) => Proc::Msg,
            Body::NoMsg(_) => Proc::NoMsg,
            Body::Error(_) => Proc::Error,
            Body::Optional(_) => Proc::Optional,
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
    /// Decodes a Version Two header at the start of `buf`.
    pub fn decode(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
        let mut r = Reader::new(buf);
        let xid = r.u32("rdma_xid")?;
        let vers = r.u32("rdma_vers")?;
        if vers != VERSION {
            return Err(DecodeError::new("rdma_vers", field::VERS, ErrorKind::UnsupportedVersion { value: vers }));
        }
        let credit = r.u32("rdma_credit")?;
        let at = r.offset();
        let value = r.u32("rdma_proc")?;
        let proc_ = Proc::from_u32(value).ok_or(DecodeError::new("rdma_proc", at, ErrorKind::UnknownProc { value }))?;
        let body = match proc_ {
            Proc::Msg => Body::Msg(Chunks::decode(&mut r, profile.v2_envelope)?),
            Proc::NoMsg => Body::NoMsg(Chunks::decode(&mut r, profile.v2_envelope)?),
            Proc::Error => Body::Error(ErrorInfo::decode(&mut r, profile.v2_error_numbering)?),
            Proc::Optional => Body::Optional(Optional::decode(&mut r, profile)?),
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
        w.u32(self.body.proc_() as u32)?;
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
        write!(f, "{} xid={:#010x} vers={} credit={}", self.body.proc_().name(), self.xid, self.vers, self.credit)?;
        match &self.body {
            Body::Msg(c) | Body::NoMsg(c) => {
                if let Some(d) = c.direction {
                    write!(f, " dir={}", d.name())?;
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
                    write!(f, " optdir={}", d.name())?;
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

// ---------------------------------------------------------------------------------------------
// Builder

#[derive(Debug, Clone, Copy)]
enum Shape<'s> {
    Lists,
    Error(ErrorInfo),
    Optional { opttype: u32, info: OptInfo<'s> },
}

/// Builds Version Two messages from plain values: well-formed by default, malformed on
/// purpose through the `raw_*` methods and [`HeaderBuilder::draft00`].
///
/// ```
/// use rpcrdma_codec::v2::{HeaderBuilder, MsgType, OptInfo};
/// let mut buf = [0u8; 64];
/// let n = HeaderBuilder::optional(7, 32, MsgType::Call, 99, OptInfo::Raw(&[1, 2, 3]))
///     .encode(&mut buf)
///     .unwrap();
/// assert_eq!(n, 16 + 4 + 4 + 4 + 4);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HeaderBuilder<'s> {
    xid: u32,
    vers: u32,
    credit: u32,
    proc_: u32,
    shape: Shape<'s>,
    /// The rdma_direction / rdma_optdir word; None omits it (the -00 envelope).
    dir: Option<u32>,
    reads: &'s [ReadSegment],
    writes: &'s [&'s [Segment]],
    reply: Option<&'s [Segment]>,
    optinfo_len: Option<u32>,
    raw_body: Option<&'s [u8]>,
    payload: &'s [u8],
}

impl<'s> HeaderBuilder<'s> {
    fn new(xid: u32, credit: u32, proc_: Proc, dir: Option<MsgType>, shape: Shape<'s>) -> Self {
        HeaderBuilder {
            xid,
            vers: VERSION,
            credit,
            proc_: proc_ as u32,
            shape,
            dir: dir.map(|d| d as u32),
            reads: &[],
            writes: &[],
            reply: None,
            optinfo_len: None,
            raw_body: None,
            payload: &[],
        }
    }

    /// RDMA2_MSG with no chunks.
    pub fn msg(xid: u32, credit: u32, direction: MsgType) -> Self {
        Self::new(xid, credit, Proc::Msg, Some(direction), Shape::Lists)
    }

    /// RDMA2_NOMSG with no chunks.
    pub fn nomsg(xid: u32, credit: u32, direction: MsgType) -> Self {
        Self::new(xid, credit, Proc::NoMsg, Some(direction), Shape::Lists)
    }

    /// RDMA2_ERROR (no direction field: "always Responder-to-Requester", -01 4.2.2).
    pub fn error(xid: u32, credit: u32, error: ErrorInfo) -> Self {
        Self::new(xid, credit, Proc::Error, None, Shape::Error(error))
    }

    /// RDMA2_OPTIONAL with this opttype and optinfo.
    pub fn optional(xid: u32, credit: u32, dir: MsgType, opttype: u32, info: OptInfo<'s>) -> Self {
        Self::new(xid, credit, Proc::Optional, Some(dir), Shape::Optional { opttype, info })
    }

    pub fn read_list(mut self, segments: &'s [ReadSegment]) -> Self {
        self.reads = segments;
        self
    }

    pub fn write_list(mut self, chunks: &'s [&'s [Segment]]) -> Self {
        self.writes = chunks;
        self
    }

    pub fn reply_chunk(mut self, segments: &'s [Segment]) -> Self {
        self.reply = Some(segments);
        self
    }

    /// Bytes written after the header (the RPC payload).
    pub fn payload(mut self, payload: &'s [u8]) -> Self {
        self.payload = payload;
        self
    }

    /// Omits rdma_direction / rdma_optdir: the -00 envelope.
    pub fn draft00(mut self) -> Self {
        self.dir = None;
        self
    }

    /// Any rdma_direction / rdma_optdir word (e.g. 2).
    pub fn raw_direction(mut self, dir: u32) -> Self {
        self.dir = Some(dir);
        self
    }

    pub fn raw_vers(mut self, vers: u32) -> Self {
        self.vers = vers;
        self
    }

    /// Any rdma_proc word; the body written stays the constructor's.
    pub fn raw_proc(mut self, proc_: u32) -> Self {
        self.proc_ = proc_;
        self
    }

    /// Any rdma_err word for an RDMA2_ERROR (the arm written stays the body's).
    pub fn raw_error_code(mut self, code: u32) -> Self {
        if let Shape::Error(e) = &mut self.shape {
            e.code = code;
        }
        self
    }

    /// An rdma_optinfo length word that differs from the data written (pad follows the data).
    pub fn raw_optinfo_length(mut self, len: u32) -> Self {
        self.optinfo_len = Some(len);
        self
    }

    /// Replaces everything after the fixed fields (payload included) with these bytes.
    pub fn raw_body(mut self, body: &'s [u8]) -> Self {
        self.raw_body = Some(body);
        self
    }

    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.vers)?;
        w.u32(self.credit)?;
        w.u32(self.proc_)?;
        if let Some(raw) = self.raw_body {
            return w.bytes(raw);
        }
        match self.shape {
            Shape::Lists => {
                if let Some(d) = self.dir {
                    w.u32(d)?;
                }
                ChunkWriter::read_list(w, self.reads.iter().copied())?;
                ChunkWriter::write_list(w, self.writes)?;
                ChunkWriter::reply_chunk(w, self.reply)?;
            }
            Shape::Error(e) => e.encode(w)?,
            Shape::Optional { opttype, info } => {
                if let Some(d) = self.dir {
                    w.u32(d)?;
                }
                w.u32(opttype)?;
                let at = w.reserve_u32()?;
                info.encode_data(w)?;
                let n = w.len() - at - 4;
                w.patch_u32(at, self.optinfo_len.unwrap_or(n as u32));
                w.zeros(pad4(n))?;
            }
        }
        w.bytes(self.payload)
    }

    /// Writes the message into `buf`; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = Writer::new(buf);
        self.write(&mut w)?;
        Ok(w.len())
    }
}

// ---------------------------------------------------------------------------------------------
// Semantic checks

crate::check::rule_table! {
    "Version Two base rules [`check`](super::check) can report (IDs `v2-01/<section>/<slug>`).";
    MSG_WITHOUT_PAYLOAD = "v2-01/4.2.1/msg-without-payload", Must,
        "When the rdma_proc field has the value RDMA2_MSG, an RPC Payload Stream MUST follow the Transport Header Stream in the Send buffer.";
    ERROR_WITH_PAYLOAD = "v2-01/4.2.1/error-with-payload", MustNot,
        "When the rdma_proc field has the value RDMA2_ERROR, an RPC Payload Stream MUST NOT follow the Transport Header Stream.";
    DIRECTION_MISMATCH = "v2-01/4.2.2/direction-mismatch", Must,
        "When the rdma_proc field has the value RDMA2_MSG or RDMA2_NOMSG, the value of the rdma_direction field MUST be the same as the value of the associated RPC message's msg_type field.";
    ERROR_FROM_REQUESTER = "v2-01/4.2.2/error-from-requester", Must,
        "When the rdma_proc field has the value RDMA2_ERROR, the direction of the message is always Responder-to-Requester (REPLY).";
    OPTDIR_ROLE = "v2-01/4.2.2/optdir-role", Must,
        "When the rdma_proc field has the value RDMA2_OPTIONAL and no RPC message payload is present, a Requester MUST set the value of the rdma_optdir field to CALL, and a Responder MUST set the value of the rdma_optdir field to REPLY.";
}

/// Checks a decoded Version Two message sent in `role` against the base draft's direction
/// and payload rules, then the extension's rules ([`rtrext::check`]).
pub fn check(msg: &Message<'_>, role: Role) -> Violations {
    let mut out = Violations::default();
    let p = msg.payload;
    match &msg.header.body {
        Body::Msg(c) => {
            if p.is_empty() {
                out.rule(&rules::MSG_WITHOUT_PAYLOAD, Some(0), Some(msg.payload_offset));
            } else if let (Some(dir), Some(m)) = (c.direction, p.get(4..8)) {
                let mtype = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
                if MsgType::from_u32(mtype).is_some_and(|t| t != dir) {
                    out.rule(&rules::DIRECTION_MISMATCH, Some(mtype as u64), Some(msg.payload_offset + 4));
                }
            }
        }
        Body::NoMsg(_) => {}
        Body::Error(_) => {
            if !p.is_empty() {
                out.rule(&rules::ERROR_WITH_PAYLOAD, Some(p.len() as u64), Some(msg.payload_offset));
            }
            if role == Role::Call {
                out.rule(&rules::ERROR_FROM_REQUESTER, None, None);
            }
        }
        Body::Optional(o) => {
            let payload_present = match &o.info {
                OptInfo::Rtr(op) => op.pslen().is_some_and(|n| n > 0),
                OptInfo::Xchar(_) => false,
                OptInfo::Raw(_) => !p.is_empty(),
            };
            let want = match role {
                Role::Call => MsgType::Call,
                Role::Reply => MsgType::Reply,
            };
            if let Some(dir) = o.dir {
                if !payload_present && dir != want {
                    out.rule(&rules::OPTDIR_ROLE, Some(dir as u64), Some(field::BODY));
                }
            }
            if let OptInfo::Rtr(op) = &o.info {
                rtrext::check_into(op, o.dir, p.len(), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::RtrextOpttypes;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    fn roundtrip<'a>(b: &'a [u8], p: &Profile) -> Message<'a> {
        let m = Message::decode(b, p).unwrap();
        let mut out = [0u8; 512];
        let n = m.header.encode_into(&mut out).unwrap();
        assert_eq!(n, m.header.encoded_len());
        assert_eq!(n, m.payload_offset);
        assert_eq!(&out[..n], &b[..n]);
        m
    }

    // -01 4.2: rpcrdma2_chunk_lists is rdma_direction followed by the three v1 lists.
    #[test]
    fn msg_with_direction_and_no_chunks() {
        let b = words(&[1, 2, 32, 0, 0, 0, 0, 0, 1, 0]);
        let m = roundtrip(&b, &Profile::default());
        let c = m.header.body.chunks().unwrap();
        assert_eq!(c.direction, Some(MsgType::Call));
        assert!(c.lists.is_empty());
        assert_eq!(m.payload_offset, 32);
        assert_eq!(m.payload.len(), 8);
    }

    #[test]
    fn draft00_has_no_direction() {
        let p = Profile { v2_envelope: V2Envelope::Draft00, ..Profile::default() };
        let b = words(&[1, 2, 32, 1, 0, 0, 1, 1, 7, 4096, 0, 0x2000]);
        let m = roundtrip(&b, &p);
        let c = m.header.body.chunks().unwrap();
        assert_eq!(c.direction, None);
        assert_eq!(c.lists.reply.unwrap().length(), 4096);
    }

    #[test]
    fn bad_direction_is_invalid_enum() {
        let b = words(&[1, 2, 32, 0, 2, 0, 0, 0]);
        let e = Message::decode(&b, &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_direction", 16, ErrorKind::InvalidEnum { value: 2 }));
    }

    #[test]
    fn procs_2_3_and_6_have_no_arm() {
        for v in [2, 3, 6, 0xffff_ffff] {
            let e = Message::decode(&words(&[1, 2, 1, v, 0, 0, 0, 0]), &Profile::default()).unwrap_err();
            assert_eq!(e, DecodeError::new("rdma_proc", 12, ErrorKind::UnknownProc { value: v }));
        }
        let e = Message::decode(&words(&[1, 1, 1, 0]), &Profile::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnsupportedVersion { value: 1 });
    }

    #[test]
    fn error_codes_follow_the_numbering() {
        let mut p = Profile::default();
        let b = words(&[9, 2, 1, 4, 3]);
        let m = roundtrip(&b, &p);
        assert_eq!(m.header.body, Body::Error(ErrorInfo { code: 3, body: ErrorBody::InvalOption }));
        let e = Message::decode(&words(&[9, 2, 1, 4, 4]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_err", 16, ErrorKind::UnknownErrorCode { value: 4 }));
        p.v2_error_numbering = V2ErrorNumbering::Draft02;
        let b = words(&[9, 2, 1, 4, 3, 1, 2, 600]);
        let m = roundtrip(&b, &p);
        assert_eq!(
            m.header.body,
            Body::Error(ErrorInfo {
                code: 3,
                body: ErrorBody::CantReply { processed: true, segment_index: 2, length_needed: 600 }
            })
        );
        let e = Message::decode(&words(&[9, 2, 1, 4, 3, 2, 2, 600]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_processed", 20, ErrorKind::NotBool { value: 2 }));
        p.v2_error_numbering = V2ErrorNumbering::Draft04;
        let b = words(&[9, 2, 1, 4, 7, 1, 8192]);
        let m = roundtrip(&b, &p);
        assert_eq!(
            m.header.body,
            Body::Error(ErrorInfo { code: 7, body: ErrorBody::WriteResource { chunk_index: 1, length_needed: 8192 } })
        );
        for (body, code) in [(ErrorBody::InvalOption, 9), (ErrorBody::System, 10), (ErrorBody::InvalProc, 3)] {
            assert_eq!(body.code(V2ErrorNumbering::Draft04), Some(code));
        }
        assert_eq!(ErrorBody::BadHeader.code(V2ErrorNumbering::Draft04), None);
    }

    #[test]
    fn unknown_optional_is_raw_and_pads() {
        // -01 1.5 layout: optdir at 16, opttype at 20, length at 24, data at 28.
        let b = words(&[5, 2, 1, 5, 1, 0x1234, 3, 0x0a0b0c00, 0xee]);
        let m = roundtrip(&b, &Profile::default());
        let Body::Optional(o) = m.header.body else { panic!() };
        assert_eq!(o.dir, Some(MsgType::Reply));
        assert_eq!(o.info, OptInfo::Raw(&[0x0a, 0x0b, 0x0c]));
        assert_eq!(m.payload_offset, 32);
        assert_eq!(m.payload, &[0, 0, 0, 0xee]);
    }

    #[test]
    fn optinfo_must_be_filled_exactly() {
        // ROPT_REQXCH with an empty xcharspec (4 bytes) in 8 bytes of optinfo.
        let b = words(&[5, 2, 1, 5, 0, 2, 8, 0, 0]);
        let e = Message::decode(&b, &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_optinfo", 32, ErrorKind::TrailingData { extra: 4 }));
        // Under the rtrext-alone numbering opttype 2 is ROPT_XMTRESP, which needs 12 bytes.
        let p = Profile { rtrext_opttypes: RtrextOpttypes::Literal, ..Profile::default() };
        let e = Message::decode(&b, &p).unwrap_err();
        assert_eq!(e.field, "optxrs_pslen");
    }

    #[test]
    fn optinfo_overrunning_the_message() {
        let b = words(&[5, 2, 1, 5, 0, 77, 9, 0, 0]);
        let e = Message::decode(&b, &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_optinfo", 28, ErrorKind::Truncated { needed: 12, available: 8 }));
    }

    #[test]
    fn builder_writes_what_decoder_reads() {
        let reads = [ReadSegment::new(0, 1, 100, 0x10)];
        let mut buf = [0u8; 128];
        let n = HeaderBuilder::nomsg(3, 8, MsgType::Call).read_list(&reads).encode(&mut buf).unwrap();
        let m = Message::decode(&buf[..n], &Profile::default()).unwrap();
        assert_eq!(m.header.body.chunks().unwrap().lists.reads.segments().next(), Some(reads[0]));
        let e = ErrorInfo::new(ErrorBody::Vers { low: 1, high: 2 }, V2ErrorNumbering::Draft01).unwrap();
        let n = HeaderBuilder::error(3, 8, e).encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &words(&[3, 2, 8, 4, 1, 1, 2])[..]);
        let s = std::format!("{}", Message::decode(&buf[..n], &Profile::default()).unwrap().header);
        assert_eq!(s, "RDMA2_ERROR xid=0x00000003 vers=2 credit=8 RDMA2_ERR_VERS (1) low=1 high=2");
    }

    #[test]
    fn builder_makes_malformed_messages() {
        let mut buf = [0u8; 64];
        let n = HeaderBuilder::optional(1, 1, MsgType::Call, 42, OptInfo::Raw(&[1, 2]))
            .raw_optinfo_length(40)
            .encode(&mut buf)
            .unwrap();
        let e = Message::decode(&buf[..n], &Profile::default()).unwrap_err();
        assert_eq!(e.field, "rdma_optinfo");
        let n = HeaderBuilder::msg(1, 1, MsgType::Call).raw_direction(9).encode(&mut buf).unwrap();
        let e = Message::decode(&buf[..n], &Profile::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidEnum { value: 9 });
        let n = HeaderBuilder::msg(1, 1, MsgType::Call).raw_proc(3).encode(&mut buf).unwrap();
        assert_eq!(
            Message::decode(&buf[..n], &Profile::default()).unwrap_err().kind,
            ErrorKind::UnknownProc { value: 3 }
        );
    }

    #[test]
    fn base_checks() {
        let p = Profile::default();
        // RDMA2_MSG REPLY whose payload is an RPC CALL; RDMA2_ERROR with a payload, from a requester.
        let b = words(&[1, 2, 1, 0, 1, 0, 0, 0, 1, 0]);
        let v = check(&Message::decode(&b, &p).unwrap(), Role::Reply);
        assert!(v.contains("v2-01/4.2.2/direction-mismatch"));
        let b = words(&[1, 2, 1, 4, 2, 0]);
        let v = check(&Message::decode(&b, &p).unwrap(), Role::Call);
        assert_eq!(v.len(), 2);
        let b = words(&[1, 2, 1, 5, 1, 77, 0]);
        let v = check(&Message::decode(&b, &p).unwrap(), Role::Call);
        assert!(v.contains("v2-01/4.2.2/optdir-role"));
        for (i, r) in rules::ALL.iter().enumerate() {
            assert!(rules::ALL[i + 1..].iter().all(|o| o.id != r.id));
        }
    }
}
