//! Builds Version One headers from plain values, well-formed or malformed on purpose.

use super::types::{field, ErrorCode, Proc, VERSION};
use crate::chunk::{be_words, ChunkWriter, Put, ReadSegment, Segment};
use crate::error::EncodeError;
use crate::xdr::Writer;

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
    HeaderBuilder<'_> => write, fast encode;
}
