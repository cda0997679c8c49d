//! Builds Version One headers from plain values, well-formed or malformed on purpose.

use core::fmt;

use super::types::{field, ErrorCode, Proc, VERSION};
use crate::chunk::{be_words, ChunkWriter, Put, ReadSegment, Segment, READ_ENTRY_LEN, SEGMENT_LEN};
use crate::error::EncodeError;
use crate::xdr::Writer;

/// What a [`HeaderBuilder`] writes after rdma_proc, chosen by its constructor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape<'s> {
    Lists,
    MsgP {
        align: u32,
        thresh: u32,
    },
    Done,
    Error {
        code: ErrorCode,
        low: u32,
        high: u32,
    },
    /// Bytes written verbatim after the fixed fields instead of the body.
    Raw(&'s [u8]),
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
#[derive(Clone, Copy)]
pub struct HeaderBuilder<'s> {
    /// rdma_xid, rdma_vers, rdma_credit and rdma_proc as they go on the wire (set once by
    /// the constructor, so that encoding copies them as one 16-byte block).
    fixed: [u8; field::BODY],
    shape: Shape<'s>,
    reads: &'s [ReadSegment],
    writes: &'s [&'s [Segment]],
    reply: Option<&'s [Segment]>,
}

impl fmt::Debug for HeaderBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeaderBuilder")
            .field("xid", &self.word(field::XID))
            .field("vers", &self.word(field::VERS))
            .field("credit", &self.word(field::CREDIT))
            .field("proc_", &self.word(field::PROC))
            .field("shape", &self.shape)
            .field("reads", &self.reads)
            .field("writes", &self.writes)
            .field("reply", &self.reply)
            .finish()
    }
}

impl<'s> HeaderBuilder<'s> {
    fn new(xid: u32, credit: u32, proc_: Proc) -> Self {
        HeaderBuilder {
            fixed: be_words([xid, VERSION, credit, proc_.0]),
            shape: Shape::Lists,
            reads: &[],
            writes: &[],
            reply: None,
        }
    }

    /// The fixed field at byte `at`.
    fn word(&self, at: usize) -> u32 {
        u32::from_be_bytes([self.fixed[at], self.fixed[at + 1], self.fixed[at + 2], self.fixed[at + 3]])
    }

    /// Sets the fixed field at byte `at`.
    fn set_word(&mut self, at: usize, v: u32) {
        self.fixed[at..at + 4].copy_from_slice(&v.to_be_bytes());
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
        let b = HeaderBuilder {
            shape: Shape::Error { code: ErrorCode::ERR_VERS, low, high },
            ..Self::new(xid, credit, Proc::RDMA_ERROR)
        };
        b.raw_vers(vers)
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
        self.set_word(field::VERS, vers);
        self
    }

    /// Any rdma_proc word, e.g. 5 or 0xffffffff. The body written stays the one of the
    /// builder's constructor.
    pub fn raw_proc(mut self, proc_: u32) -> Self {
        self.set_word(field::PROC, proc_);
        self
    }

    /// Any rdma_err word for an RDMA_ERROR (low and high are written only for ERR_VERS).
    /// After [`HeaderBuilder::raw_body`], the raw body stays.
    pub fn raw_error_code(mut self, code: u32) -> Self {
        let (low, high) = match self.shape {
            Shape::Raw(_) => return self,
            Shape::Error { low, high, .. } => (low, high),
            _ => (0, 0),
        };
        self.shape = Shape::Error { code: ErrorCode(code), low, high };
        self
    }

    /// Replaces everything after the fixed fields with these bytes (truncated lists,
    /// non-boolean discriminators, huge counts).
    pub fn raw_body(mut self, body: &'s [u8]) -> Self {
        self.shape = Shape::Raw(body);
        self
    }

    /// The exact length [`HeaderBuilder::encode`] writes (RFC 8166 4.7's word counts: a read
    /// list entry is 6 words, a write chunk 2 + 4 per segment, each list ends with a word).
    pub fn encoded_len(&self) -> usize {
        field::BODY
            + match self.shape {
                Shape::Raw(raw) => raw.len(),
                Shape::Lists => self.lists_len(),
                Shape::MsgP { .. } => 8 + self.lists_len(),
                Shape::Done => 0,
                Shape::Error { code, .. } => 4 + if code == ErrorCode::ERR_VERS { 8 } else { 0 },
            }
    }

    fn lists_len(&self) -> usize {
        let writes: usize = self.writes.iter().map(|c| 8 + SEGMENT_LEN * c.len()).sum();
        let reply = self.reply.map_or(0, |c| 4 + SEGMENT_LEN * c.len());
        READ_ENTRY_LEN * self.reads.len() + 4 + writes + 4 + 4 + reply
    }

    /// Writes the header into `w`.
    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.bytes(&self.fixed)?;
        match self.shape {
            Shape::Raw(raw) => return w.bytes(raw),
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

    /// The fast path of [`HeaderBuilder::encode`] for well-formed chunk lists (see [`Put`]):
    /// the words between the lists go with the words after them (the read list's end with the
    /// first write chunk's "1 N", or with the write list's end and the reply chunk's
    /// discriminator), and segments are written two at a time. None leaves the rest (and the
    /// error) to [`HeaderBuilder::write`].
    #[inline]
    fn put(&self, buf: &mut [u8]) -> Option<usize> {
        let Shape::Lists = self.shape else { return None };
        let mut p = Put::new(buf);
        match self.writes.split_first() {
            // The read list's end, the write list's end, the reply chunk.
            None => match self.reply {
                None => self.put_head::<12, 52>(&mut p, be_words([0, 0, 0]))?,
                Some(segs) => {
                    self.put_head::<16, 56>(&mut p, be_words([0, 0, 1, segs.len() as u32]))?;
                    put_segments(&mut p, segs)?;
                }
            },
            Some((first, more)) => {
                // The read list's end and the first write chunk "1 N", then the others.
                self.put_head::<12, 52>(&mut p, be_words([0, 1, first.len() as u32]))?;
                put_segments(&mut p, first)?;
                for chunk in more {
                    p.array::<8>(be_words([1, chunk.len() as u32]))?;
                    put_segments(&mut p, chunk)?;
                }
                // The write list's end, the reply chunk.
                match self.reply {
                    None => p.array::<8>(be_words([0, 0]))?,
                    Some(segs) => {
                        p.array::<12>(be_words([0, 1, segs.len() as u32]))?;
                        put_segments(&mut p, segs)?;
                    }
                }
            }
        }
        Some(p.pos())
    }

    /// The fixed fields, the read list ("1 P HLOO" per entry) and the `N` bytes `after` it.
    /// A read list of one entry (the usual one: one chunk of one segment) is written with
    /// one length comparison for all three (`M`: their length).
    #[inline(always)]
    fn put_head<const N: usize, const M: usize>(&self, p: &mut Put<'_>, after: [u8; N]) -> Option<()> {
        const { assert!(M == field::BODY + READ_ENTRY_LEN + N) };
        if let [s] = self.reads {
            return p.with::<M>(|b| {
                let (fixed, b) = b.split_first_chunk_mut::<{ field::BODY }>().expect("M > 16");
                *fixed = self.fixed;
                let (e, b) = b.split_first_chunk_mut::<READ_ENTRY_LEN>().expect("M - 16 > 24");
                s.write_entry(e);
                *<&mut [u8; N]>::try_from(b).expect("N bytes") = after;
            });
        }
        p.array(self.fixed)?;
        for s in self.reads {
            p.with(|e| s.write_entry(e))?;
        }
        p.array(after)
    }
}

/// Writes the segments `segs`, 16 bytes each, two at a time (one length comparison each).
#[inline(always)]
fn put_segments(p: &mut Put<'_>, segs: &[Segment]) -> Option<()> {
    let mut rest = segs;
    while let [a, b, more @ ..] = rest {
        p.with::<{ 2 * SEGMENT_LEN }>(|o| {
            let (x, y) = o.split_at_mut(SEGMENT_LEN);
            a.write_to(x.try_into().expect("16 bytes"));
            b.write_to(y.try_into().expect("16 bytes"));
        })?;
        rest = more;
    }
    if let [s] = rest {
        p.with(|b| s.write_to(b))?;
    }
    Some(())
}

crate::xdr::impl_encode! {
    HeaderBuilder<'_> => write, fast encode;
}
