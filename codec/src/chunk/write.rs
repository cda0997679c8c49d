//! Writing chunk lists: the fast encoding cursor ([`Put`]) and [`ChunkWriter`] for lists
//! built from plain values.

use super::{ChunkLists, ReadSegment, Segment};
use crate::error::EncodeError;
use crate::xdr::Writer;

/// A cursor writing into a buffer the caller has already sized: the fast path of encoding.
/// Each write returns None instead of an error; the caller then runs the precise `Writer`
/// path, which reports how many bytes were needed.
/// The unwritten part shrinks with each write: one length comparison per write.
#[derive(Debug)]
pub(crate) struct Put<'b> {
    rest: &'b mut [u8],
    len: usize,
}

impl<'b> Put<'b> {
    #[inline(always)]
    pub(crate) fn new(out: &'b mut [u8]) -> Self {
        Put { len: out.len(), rest: out }
    }

    /// Bytes written so far.
    #[inline(always)]
    pub(crate) fn pos(&self) -> usize {
        self.len - self.rest.len()
    }

    /// Writes a fixed-size piece (built in registers by the caller).
    #[inline(always)]
    pub(crate) fn array<const N: usize>(&mut self, b: [u8; N]) -> Option<()> {
        let (head, tail) = core::mem::take(&mut self.rest).split_first_chunk_mut::<N>()?;
        *head = b;
        self.rest = tail;
        Some(())
    }

    /// Fills the next `N` bytes in place with `f`.
    #[inline(always)]
    pub(crate) fn with<const N: usize>(&mut self, f: impl FnOnce(&mut [u8; N])) -> Option<()> {
        let (head, tail) = core::mem::take(&mut self.rest).split_first_chunk_mut::<N>()?;
        f(head);
        self.rest = tail;
        Some(())
    }

    #[inline(always)]
    pub(crate) fn bytes(&mut self, b: &[u8]) -> Option<()> {
        if self.rest.len() < b.len() {
            return None;
        }
        let (head, tail) = core::mem::take(&mut self.rest).split_at_mut(b.len());
        head.copy_from_slice(b);
        self.rest = tail;
        Some(())
    }

    #[inline(always)]
    pub(crate) fn u32(&mut self, v: u32) -> Option<()> {
        self.array(v.to_be_bytes())
    }

    /// The next `n` bytes, to be filled by the caller.
    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Option<&'b mut [u8]> {
        if self.rest.len() < n {
            return None;
        }
        let (head, tail) = core::mem::take(&mut self.rest).split_at_mut(n);
        self.rest = tail;
        Some(head)
    }

    /// Sets aside the next `N` bytes, to be filled once what follows is written (a length).
    #[inline(always)]
    pub(crate) fn slot<const N: usize>(&mut self) -> Option<&'b mut [u8; N]> {
        let (head, tail) = core::mem::take(&mut self.rest).split_first_chunk_mut::<N>()?;
        self.rest = tail;
        Some(head)
    }
}

/// Big-endian words as one array (one write for several fixed fields).
#[inline(always)]
pub(crate) fn be_words<const W: usize, const N: usize>(words: [u32; W]) -> [u8; N] {
    const { assert!(N == 4 * W) };
    let mut b = [0u8; N];
    for (i, w) in words.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&w.to_be_bytes());
    }
    b
}

impl ChunkLists<'_> {
    /// Fast-path encoding of the three lists (see [`Put`]).
    #[inline]
    pub(crate) fn put(&self, p: &mut Put<'_>) -> Option<()> {
        p.bytes(self.reads.entries)?;
        p.u32(0)?;
        p.bytes(self.writes.entries)?;
        match &self.reply {
            Some(c) => {
                p.array::<12>(be_words([0, 1, c.segment_count() as u32]))?;
                p.bytes(c.segments)
            }
            None => p.array::<8>(be_words([0, 0])),
        }
    }
}

/// Writes chunk lists from plain values, for senders that build headers rather than echo
/// decoded ones. Each method writes one list; call them in order: reads, writes, reply.
#[derive(Debug)]
pub struct ChunkWriter;

impl ChunkWriter {
    /// A read list from segments in list order.
    pub fn read_list<I>(w: &mut Writer<'_>, segments: I) -> Result<(), EncodeError>
    where
        I: IntoIterator<Item = ReadSegment>,
    {
        for s in segments {
            w.u32(1)?;
            w.u32(s.position)?;
            s.target.encode(w)?;
        }
        w.u32(0)
    }

    /// A write list from chunks, each a slice of segments.
    pub fn write_list(w: &mut Writer<'_>, chunks: &[&[Segment]]) -> Result<(), EncodeError> {
        for chunk in chunks {
            w.u32(1)?;
            Self::counted_segments(w, chunk)?;
        }
        w.u32(0)
    }

    /// The reply chunk slot: absent, or present with these segments.
    pub fn reply_chunk(w: &mut Writer<'_>, reply: Option<&[Segment]>) -> Result<(), EncodeError> {
        match reply {
            None => w.u32(0),
            Some(segs) => {
                w.u32(1)?;
                Self::counted_segments(w, segs)
            }
        }
    }

    /// A counted segment array (`xdr_write_chunk`).
    pub fn counted_segments(w: &mut Writer<'_>, segs: &[Segment]) -> Result<(), EncodeError> {
        w.u32(segs.len() as u32)?;
        for s in segs {
            s.encode(w)?;
        }
        Ok(())
    }
}
