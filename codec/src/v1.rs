//! The RPC-over-RDMA Version One transport header (RFC 8166 4.1.2, 4.2; RFC 5666 4.3).

use core::fmt;

use crate::chunk::{be_words, ChunkLists, ChunkWriter, Put, ReadSegment, Segment};
use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::{ErrorArm, Profile};
use crate::xdr::{wire_enum, Reader, Writer};

/// Byte offsets of the four fixed fields, the same in every version (RFC 8166 4.2, 7).
pub mod field {
    pub const XID: usize = 0;
    pub const VERS: usize = 4;
    pub const CREDIT: usize = 8;
    pub const PROC: usize = 12;
    /// First byte after the fixed fields.
    pub const BODY: usize = 16;
}

/// rdma_vers for Version One (RFC 8166 4.2.2).
pub const VERSION: u32 = 1;
/// "a minimal size RPC-over-RDMA header (28 bytes)" (RFC 8166 4.5).
pub const MIN_HEADER_LEN: usize = 28;
/// RFC 5666 4.3 `rdma_extra[8]`: bytes after an unknown error code.
pub const RFC5666_EXTRA_LEN: usize = 32;

wire_enum! {
    /// rdma_proc (RFC 8166 4.2.4).
    pub struct Proc(u32) {
        RDMA_MSG = 0,
        RDMA_NOMSG = 1,
        /// Not to be used (RFC 8166 4.6.1).
        RDMA_MSGP = 2,
        /// Not to be used (RFC 8166 4.6.2).
        RDMA_DONE = 3,
        RDMA_ERROR = 4,
    }
}

wire_enum! {
    /// rdma_err (RFC 8166 4.5).
    pub struct ErrorCode(u32) {
        ERR_VERS = 1,
        ERR_CHUNK = 2,
    }
}

/// The four fixed fields, readable from any version's header (RFC 8166 4.2, 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedFields {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    /// The raw rdma_proc word: its meaning depends on the version.
    pub proc_: u32,
}

impl FixedFields {
    /// Reads the fixed fields without interpreting the version.
    pub fn decode(buf: &[u8]) -> Result<FixedFields, DecodeError> {
        let mut r = Reader::new(buf);
        Ok(FixedFields {
            xid: r.u32("rdma_xid")?,
            vers: r.u32("rdma_vers")?,
            credit: r.u32("rdma_credit")?,
            proc_: r.u32("rdma_proc")?,
        })
    }
}

/// An ERR_VERS reply of any version: RFC 8166 7 fixes the position of rdma_proc, the value of
/// ERR_VERS and the layout of `rpc_rdma_errvers` for all versions, so it decodes whatever
/// rdma_vers says (a responder echoes the requester's unsupported version, RFC 8166 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrVers {
    pub fixed: FixedFields,
    pub low: u32,
    pub high: u32,
}

impl ErrVers {
    /// Decodes an RDMA_ERROR / ERR_VERS message; None when it is some other message.
    pub fn decode(buf: &[u8]) -> Result<Option<ErrVers>, DecodeError> {
        let fixed = FixedFields::decode(buf)?;
        if Proc(fixed.proc_) != Proc::RDMA_ERROR {
            return Ok(None);
        }
        let mut r = Reader::with_base(&buf[field::BODY..], field::BODY);
        if ErrorCode(r.u32("rdma_err")?) != ErrorCode::ERR_VERS {
            return Ok(None);
        }
        Ok(Some(ErrVers { fixed, low: r.u32("rdma_vers_low")?, high: r.u32("rdma_vers_high")? }))
    }
}

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
        match Self::scan(buf) {
            Some(m) => Ok(m),
            None => Self::decode_precise(buf, profile),
        }
    }

    /// The fast path for the common forms (RDMA_MSG, RDMA_NOMSG, ERR_VERS, ERR_CHUNK): one
    /// pass, one bounds check per word or entry, no error values. None sends the input to the
    /// precise decoder, which accepts exactly the same messages and says what is wrong with the
    /// others.
    #[inline]
    fn scan(buf: &'a [u8]) -> Option<Message<'a>> {
        let fixed = buf.get(..field::BODY)?;
        let w = |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        if w(field::VERS) != VERSION {
            return None;
        }
        let nomsg = match w(field::PROC) {
            0 => false,
            1 => true,
            4 => return Self::scan_error(buf, w(field::XID), w(field::CREDIT)),
            _ => return None,
        };
        let (chunks, end) = ChunkLists::scan(buf, field::BODY)?;
        let body = if nomsg { Body::NoMsg(chunks) } else { Body::Msg(chunks) };
        Some(Message {
            header: Header { xid: w(field::XID), vers: VERSION, credit: w(field::CREDIT), body },
            payload_offset: end,
            payload: &buf[end..],
        })
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
    fn decode_precise(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
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

/// What a [`HeaderBuilder`] writes after rdma_proc, chosen by its constructor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Lists,
    MsgP { align: u32, thresh: u32 },
    Done,
    Error { code: ErrorCode, low: u32, high: u32 },
}

/// Builds headers from plain values: well-formed by default, malformed on purpose through the
/// `raw_*` methods (a conformance harness must be able to send bad headers).
///
/// ```
/// use rpcrdma_codec::v1::HeaderBuilder;
/// use rpcrdma_codec::chunk::Segment;
/// let mut buf = [0u8; 64];
/// let n = HeaderBuilder::msg(7, 32)
///     .reply_chunk(&[Segment::new(0x100, 4096, 0xdead0000)])
///     .encode(&mut buf)
///     .unwrap();
/// assert_eq!(n, 16 + 4 + 4 + 4 + 4 + 16);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HeaderBuilder<'s> {
    xid: u32,
    vers: u32,
    credit: u32,
    proc_: u32,
    shape: Shape,
    reads: &'s [ReadSegment],
    writes: &'s [&'s [Segment]],
    reply: Option<&'s [Segment]>,
    /// Bytes written verbatim after the fixed fields instead of the body.
    raw_body: Option<&'s [u8]>,
}

impl<'s> HeaderBuilder<'s> {
    fn new(xid: u32, credit: u32, proc_: Proc) -> Self {
        HeaderBuilder {
            xid,
            vers: VERSION,
            credit,
            proc_: proc_.0,
            shape: Shape::Lists,
            reads: &[],
            writes: &[],
            reply: None,
            raw_body: None,
        }
    }

    /// RDMA_MSG with no chunks.
    pub fn msg(xid: u32, credit: u32) -> Self {
        Self::new(xid, credit, Proc::RDMA_MSG)
    }

    /// RDMA_NOMSG with no chunks (add at least one to make it valid).
    pub fn nomsg(xid: u32, credit: u32) -> Self {
        Self::new(xid, credit, Proc::RDMA_NOMSG)
    }

    /// RDMA_MSGP (RFC 5666 3.9; RFC 8166 4.6.1 forbids sending it).
    pub fn msgp(xid: u32, credit: u32, align: u32, thresh: u32) -> Self {
        HeaderBuilder { shape: Shape::MsgP { align, thresh }, ..Self::new(xid, credit, Proc::RDMA_MSGP) }
    }

    /// RDMA_DONE (RFC 8166 4.6.2 forbids sending it).
    pub fn done(xid: u32, credit: u32) -> Self {
        HeaderBuilder { shape: Shape::Done, ..Self::new(xid, credit, Proc::RDMA_DONE) }
    }

    /// RDMA_ERROR ERR_VERS, echoing the failing request's xid and version (RFC 8166 4.5).
    pub fn err_vers(xid: u32, vers: u32, credit: u32, low: u32, high: u32) -> Self {
        HeaderBuilder {
            vers,
            shape: Shape::Error { code: ErrorCode::ERR_VERS, low, high },
            ..Self::new(xid, credit, Proc::RDMA_ERROR)
        }
    }

    /// RDMA_ERROR ERR_CHUNK.
    pub fn err_chunk(xid: u32, credit: u32) -> Self {
        HeaderBuilder {
            shape: Shape::Error { code: ErrorCode::ERR_CHUNK, low: 0, high: 0 },
            ..Self::new(xid, credit, Proc::RDMA_ERROR)
        }
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

    /// Any rdma_vers, e.g. 2 or 0 to provoke ERR_VERS.
    pub fn raw_vers(mut self, vers: u32) -> Self {
        self.vers = vers;
        self
    }

    /// Any rdma_proc word, e.g. 5 or 0xffffffff. The body written stays the one of the
    /// builder's constructor.
    pub fn raw_proc(mut self, proc_: u32) -> Self {
        self.proc_ = proc_;
        self
    }

    /// Any rdma_err word for an RDMA_ERROR (low and high are written only for ERR_VERS).
    pub fn raw_error_code(mut self, code: u32) -> Self {
        let (low, high) = match self.shape {
            Shape::Error { low, high, .. } => (low, high),
            _ => (0, 0),
        };
        self.shape = Shape::Error { code: ErrorCode(code), low, high };
        self
    }

    /// Replaces everything after the fixed fields with these bytes (truncated lists,
    /// non-boolean discriminators, huge counts).
    pub fn raw_body(mut self, body: &'s [u8]) -> Self {
        self.raw_body = Some(body);
        self
    }

    /// The exact length [`HeaderBuilder::encode`] writes (RFC 8166 4.7's word counts: a read
    /// list entry is 6 words, a write chunk 2 + 4 per segment, each list ends with a word).
    pub fn encoded_len(&self) -> usize {
        field::BODY
            + match (self.raw_body, self.shape) {
                (Some(raw), _) => raw.len(),
                (None, Shape::Lists) => self.lists_len(),
                (None, Shape::MsgP { .. }) => 8 + self.lists_len(),
                (None, Shape::Done) => 0,
                (None, Shape::Error { code, .. }) => 4 + if code == ErrorCode::ERR_VERS { 8 } else { 0 },
            }
    }

    fn lists_len(&self) -> usize {
        let writes: usize = self.writes.iter().map(|c| 8 + crate::chunk::SEGMENT_LEN * c.len()).sum();
        let reply = self.reply.map_or(0, |c| 4 + crate::chunk::SEGMENT_LEN * c.len());
        crate::chunk::READ_ENTRY_LEN * self.reads.len() + 4 + writes + 4 + 4 + reply
    }

    /// Writes the header into `w`.
    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.vers)?;
        w.u32(self.credit)?;
        w.u32(self.proc_)?;
        if let Some(raw) = self.raw_body {
            return w.bytes(raw);
        }
        match self.shape {
            Shape::Lists => {}
            Shape::MsgP { align, thresh } => {
                w.u32(align)?;
                w.u32(thresh)?;
            }
            Shape::Done => return Ok(()),
            Shape::Error { code, low, high } => {
                w.u32(code.0)?;
                if code == ErrorCode::ERR_VERS {
                    w.u32(low)?;
                    w.u32(high)?;
                }
                return Ok(());
            }
        }
        ChunkWriter::read_list(w, self.reads.iter().copied())?;
        ChunkWriter::write_list(w, self.writes)?;
        ChunkWriter::reply_chunk(w, self.reply)
    }

    /// Writes the header into `buf`; returns its length.
    #[inline]
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        if let Some(n) = self.put(buf) {
            return Ok(n);
        }
        let mut w = Writer::new(buf);
        self.write(&mut w)?;
        Ok(w.len())
    }

    /// The fast path of [`HeaderBuilder::encode`] for well-formed chunk lists (see [`Put`]);
    /// None leaves the rest (and the error) to [`HeaderBuilder::write`].
    #[inline]
    fn put(&self, buf: &mut [u8]) -> Option<usize> {
        if !matches!(self.shape, Shape::Lists) || self.raw_body.is_some() {
            return None;
        }
        let mut p = Put::new(buf);
        p.array::<{ field::BODY }>(be_words([self.xid, self.vers, self.credit, self.proc_]))?;
        for s in self.reads {
            // One write per entry, in place: "1 P HLOO".
            p.with::<{ crate::chunk::READ_ENTRY_LEN }>(|e| {
                e[0..4].copy_from_slice(&1u32.to_be_bytes());
                e[4..8].copy_from_slice(&s.position.to_be_bytes());
                let (_, seg) = e.split_last_chunk_mut::<{ crate::chunk::SEGMENT_LEN }>().expect("24 > 16");
                s.target.write_to(seg);
            })?;
        }
        // The read list's end, then each write chunk "1 N", its segments.
        p.u32(0)?;
        for chunk in self.writes {
            p.array::<8>(be_words([1, chunk.len() as u32]))?;
            for s in *chunk {
                p.with(|b| s.write_to(b))?;
            }
        }
        // The write list's end and the reply chunk's discriminator (and count).
        match self.reply {
            None => p.array::<8>(be_words([0, 0]))?,
            Some(segs) => {
                p.array::<12>(be_words([0, 1, segs.len() as u32]))?;
                for s in segs {
                    p.with(|b| s.write_to(b))?;
                }
            }
        }
        Some(p.pos())
    }
}

crate::xdr::impl_encode! {
    Header<'_> => encode, fast encode_into;
    HeaderBuilder<'_> => write, fast encode;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn chunkless_msg_is_28_bytes() {
        let b = words(&[5, 1, 32, 0, 0, 0, 0, 0xaabbccdd]);
        let m = Message::decode(&b, &Profile::default()).unwrap();
        assert_eq!(m.payload_offset, 28);
        assert_eq!(m.payload, &[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(m.header.credit, 32);
        assert!(matches!(m.header.body, Body::Msg(c) if c.is_empty()));
    }

    /// The fast path and the precise decoder accept the same inputs with the same result.
    #[test]
    fn fast_path_agrees_with_the_precise_decoder() {
        let mut cases: std::vec::Vec<std::vec::Vec<u8>> = std::vec::Vec::new();
        let full = words(&[
            7, 1, 32, 0, 1, 44, 0x100, 4096, 0, 0x1000, 0, 1, 2, 0x200, 4096, 0, 0x2000, 0x201, 4096, 0, 0x3000, 0, 1,
            1, 0x300, 512, 0, 0x4000, 7, 0,
        ]);
        for cut in 0..=full.len() {
            cases.push(full[..cut].to_vec());
        }
        for i in 16..full.len() {
            for v in [2u8, 0xff] {
                let mut m = full.clone();
                m[i] ^= v;
                cases.push(m);
            }
        }
        cases.push(words(&[7, 1, 1, 1, 1, 0, 1, 0x7fff_ffff, 0]));
        for err in [&[1u32, 1, 2][..], &[1, 1], &[2], &[2, 9], &[3], &[]] {
            let mut w = std::vec![7, 1, 1, 4];
            w.extend_from_slice(err);
            cases.push(words(&w));
        }
        cases.push(words(&[7, 1, 1, 0, 0, 1, 0x1000_0001, 0, 0, 0, 0, 0]));
        for c in &cases {
            let fast = Message::scan(c);
            let precise = Message::decode_precise(c, &Profile::default());
            match (fast, precise) {
                (Some(f), Ok(p)) => assert_eq!(f, p),
                (Some(f), Err(e)) => panic!("fast accepted what precise rejects ({e}): {f:?}"),
                (None, Ok(p)) => assert!(
                    matches!(p.header.body, Body::MsgP { .. } | Body::Done | Body::Error(ErrorBody::Other { .. })),
                    "fast rejected {p:?}"
                ),
                (None, Err(_)) => {}
            }
        }
    }

    #[test]
    fn fast_encode_matches_the_writer_and_reports_short_buffers() {
        let b = words(&[
            7, 1, 32, 1, 1, 0, 0x100, 40, 0, 0x1000, 0, 1, 2, 0x200, 4096, 0, 0x2000, 0x201, 4096, 0, 0x3000, 0, 1, 1,
            0x300, 512, 0, 0x4000,
        ]);
        let m = Message::decode(&b, &Profile::default()).unwrap();
        let mut fast = [0u8; 128];
        let n = m.header.encode_into(&mut fast).unwrap();
        let mut slow = [0u8; 128];
        let mut w = Writer::new(&mut slow);
        m.header.encode(&mut w).unwrap();
        assert_eq!(&fast[..n], w.written());
        assert_eq!(&fast[..n], &b[..]);
        for short in 0..n {
            let e = m.header.encode_into(&mut fast[..short]).unwrap_err();
            assert_eq!(e.available, short);
            assert!(e.needed > short);
        }
    }

    #[test]
    fn err_vers_body() {
        let b = words(&[9, 1, 1, 4, 1, 1, 1]);
        let m = Message::decode(&b, &Profile::default()).unwrap();
        assert_eq!(m.header.body, Body::Error(ErrorBody::Vers { low: 1, high: 1 }));
        let mut out = [0u8; 28];
        assert_eq!(m.header.encode_into(&mut out).unwrap(), 28);
        assert_eq!(&out[..], &b[..]);
    }

    #[test]
    fn err_vers_of_any_version() {
        let b = words(&[9, 7, 3, 4, 1, 1, 2]);
        assert!(Message::decode(&b, &Profile::default()).is_err());
        let e = ErrVers::decode(&b).unwrap().unwrap();
        assert_eq!((e.fixed.xid, e.fixed.vers, e.fixed.credit, e.low, e.high), (9, 7, 3, 1, 2));
        assert_eq!(ErrVers::decode(&words(&[9, 7, 3, 4, 2])).unwrap(), None);
        assert_eq!(ErrVers::decode(&words(&[9, 7, 3, 0])).unwrap(), None);
        assert_eq!(ErrVers::decode(&words(&[9, 7, 3, 4, 1, 1])).unwrap_err().field, "rdma_vers_high");
    }

    #[test]
    fn unknown_error_code_depends_on_profile() {
        let mut b = words(&[9, 1, 1, 4, 3]);
        let e = Message::decode(&b, &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_err", 16, ErrorKind::UnknownErrorCode { value: 3 }));
        let p = Profile { error_arm: ErrorArm::Rfc5666, ..Profile::default() };
        assert_eq!(Message::decode(&b, &p).unwrap_err().field, "rdma_extra");
        b.extend([0u8; 32]);
        let m = Message::decode(&b, &p).unwrap();
        assert_eq!(m.header.body, Body::Error(ErrorBody::Other { code: ErrorCode(3), extra: &[0; 32] }));
    }

    #[test]
    fn unknown_proc_and_version() {
        let e = Message::decode(&words(&[1, 1, 1, 5]), &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_proc", 12, ErrorKind::UnknownProc { value: 5 }));
        let e = Message::decode(&words(&[1, 2, 1, 0]), &Profile::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnsupportedVersion { value: 2 });
    }

    #[test]
    fn builder_writes_what_decoder_reads() {
        let reads = [ReadSegment::new(0, 1, 100, 0x10)];
        let seg = [Segment::new(2, 8192, 0x20)];
        let writes: [&[Segment]; 1] = [&seg];
        let mut buf = [0u8; 256];
        let n = HeaderBuilder::nomsg(0x77, 8)
            .read_list(&reads)
            .write_list(&writes)
            .reply_chunk(&seg)
            .encode(&mut buf)
            .unwrap();
        let m = Message::decode(&buf[..n], &Profile::default()).unwrap();
        assert_eq!(m.payload_offset, n);
        assert_eq!(m.header.encoded_len(), n);
        let c = m.header.body.chunks().unwrap();
        assert_eq!(c.reads.segments().next(), Some(reads[0]));
        assert_eq!(c.writes.len(), 1);
        assert_eq!(c.reply.unwrap().length(), 8192);
    }

    #[test]
    fn builder_fast_path_matches_the_writer() {
        let reads = [ReadSegment::new(44, 1, 5, 0x10), ReadSegment::new(44, 2, 7, 0x20)];
        let seg = [Segment::new(3, 8192, 0x30), Segment::new(4, 4, 0x40)];
        let writes: [&[Segment]; 2] = [&seg, &[]];
        let b = HeaderBuilder::msg(9, 32).read_list(&reads).write_list(&writes).reply_chunk(&seg[..1]);
        let mut fast = [0u8; 256];
        let n = b.encode(&mut fast).unwrap();
        let mut slow = [0u8; 256];
        let mut w = Writer::new(&mut slow);
        b.write(&mut w).unwrap();
        assert_eq!(&fast[..n], w.written());
        for short in 0..n {
            assert_eq!(b.encode(&mut fast[..short]).unwrap_err().available, short);
        }
    }

    #[test]
    fn builder_makes_malformed_headers() {
        let mut buf = [0u8; 64];
        let n = HeaderBuilder::msg(1, 1).raw_body(&[0, 0, 0, 7]).encode(&mut buf).unwrap();
        let e = Message::decode(&buf[..n], &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_reads", 16, ErrorKind::NotBool { value: 7 }));
        let n = HeaderBuilder::msg(1, 1).raw_proc(9).encode(&mut buf).unwrap();
        assert_eq!(n, 28);
        assert_eq!(&buf[12..16], &[0, 0, 0, 9]);
        let n = HeaderBuilder::err_vers(1, 1, 1, 1, 1).raw_error_code(77).encode(&mut buf).unwrap();
        assert_eq!(n, 20);
    }

    #[test]
    fn builder_encoded_len_is_exact_for_every_shape() {
        use crate::xdr::Encode;
        let reads = [ReadSegment::new(0, 1, 100, 0x10), ReadSegment::new(0, 2, 4, 0x20)];
        let seg = [Segment::new(2, 8192, 0x20), Segment::new(3, 16, 0x30)];
        let writes: [&[Segment]; 2] = [&seg, &seg[..1]];
        let builders = [
            HeaderBuilder::msg(1, 1),
            HeaderBuilder::nomsg(1, 1).read_list(&reads).write_list(&writes).reply_chunk(&seg),
            HeaderBuilder::msgp(1, 1, 64, 128).read_list(&reads),
            HeaderBuilder::done(1, 1),
            HeaderBuilder::err_vers(1, 1, 1, 1, 1),
            HeaderBuilder::err_chunk(1, 1),
            HeaderBuilder::err_chunk(1, 1).raw_error_code(1),
            HeaderBuilder::err_vers(1, 1, 1, 1, 1).raw_error_code(9),
            HeaderBuilder::msg(1, 1).raw_body(&[1, 2, 3]),
            HeaderBuilder::msg(1, 1).write_list(&writes).raw_proc(7),
        ];
        for b in builders {
            let v = b.encode_to_vec();
            assert_eq!(v.len(), b.encoded_len(), "{b:?}");
            let mut w = std::vec![0u8; v.len()];
            assert_eq!(b.encode(&mut w), Ok(v.len()));
            assert_eq!(w, v);
            if let Ok(m) = Message::decode(&v, &Profile::default()) {
                assert_eq!(m.header.encode_to_vec(), v);
            }
        }
    }
}
