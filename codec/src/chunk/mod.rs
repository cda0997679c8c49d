//! Segments and chunk lists (RFC 8166 3.4.3-3.4.6, 4.3, XDR in 4.1.2).
//!
//! Decoding validates a whole list once, then keeps only the borrowed bytes: the iterators
//! re-read words that are known to be present and well formed, so they never fail.

use crate::error::{DecodeError, EncodeError};
use crate::xdr::{Item, Reader, Writer};

mod write;
pub use write::ChunkWriter;
pub(crate) use write::{be_words, Put};

/// Bytes of a plain segment: handle, length, offset (RFC 8166 4.7 "HLOO").
pub const SEGMENT_LEN: usize = 16;
/// Bytes of a read-list entry: discriminator, position and a plain segment ("1 PHLOO").
pub const READ_ENTRY_LEN: usize = 4 + 4 + SEGMENT_LEN;

/// A plain RDMA segment (RFC 8166 3.4.3, `xdr_rdma_segment`). Laid out as on the wire
/// (handle, length, offset), so that encoding reads handle and length as one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct Segment {
    /// The R_key (steering tag) of the registered memory.
    pub handle: u32,
    /// Length of the segment in bytes.
    pub length: u32,
    /// Virtual address or offset in the registered memory.
    pub offset: u64,
}

impl Segment {
    pub const fn new(handle: u32, length: u32, offset: u64) -> Self {
        Segment { handle, length, offset }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Segment { handle: r.u32("handle")?, length: r.u32("length")?, offset: r.u64("offset")? })
    }

    /// Reads a segment from 16 bytes known to be present.
    fn from_bytes(b: &[u8]) -> Self {
        let w = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Segment { handle: w(0), length: w(4), offset: (w(8) as u64) << 32 | w(12) as u64 }
    }

    #[inline]
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.array(self.to_bytes())
    }

    /// The 16 bytes of the segment on the wire ("HLOO").
    #[inline]
    pub fn to_bytes(&self) -> [u8; SEGMENT_LEN] {
        let mut b = [0u8; SEGMENT_LEN];
        self.write_to(&mut b);
        b
    }

    /// Writes the 16 bytes of the segment in place.
    #[inline(always)]
    pub fn write_to(&self, b: &mut [u8; SEGMENT_LEN]) {
        // Handle and length as one 64-bit word in memory order (one load), byte-swapped and its
        // halves exchanged: handle, then length, each big-endian.
        let hl = (self.length as u64) << 32 | self.handle as u64;
        b[0..8].copy_from_slice(&hl.swap_bytes().rotate_left(32).to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_be_bytes());
    }
}

/// An RDMA read segment (RFC 8166 3.4.5, `xdr_read_chunk`): a position and a plain segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReadSegment {
    /// Byte offset in the unreduced payload stream where the chunk's data belongs.
    pub position: u32,
    pub target: Segment,
}

impl ReadSegment {
    pub const fn new(position: u32, handle: u32, length: u32, offset: u64) -> Self {
        ReadSegment { position, target: Segment::new(handle, length, offset) }
    }

    /// Writes the read-list entry "1 P HLOO" (discriminator included) in place.
    #[inline(always)]
    pub(crate) fn write_entry(&self, e: &mut [u8; READ_ENTRY_LEN]) {
        let (d, seg) = e.split_last_chunk_mut::<SEGMENT_LEN>().expect("24 > 16");
        d.copy_from_slice(&(1u64 << 32 | self.position as u64).to_be_bytes());
        self.target.write_to(seg);
    }

    /// Reads an entry (discriminator included) from 24 bytes known to be present.
    fn from_entry(b: &[u8]) -> Self {
        let position = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
        ReadSegment { position, target: Segment::from_bytes(&b[8..24]) }
    }
}

/// The read list of a header (RFC 8166 4.3.1): validated, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadList<'a> {
    /// The entries, each `1 PHLOO` (24 bytes), without the terminating zero.
    entries: &'a [u8],
}

impl<'a> ReadList<'a> {
    /// The empty list.
    pub const EMPTY: ReadList<'static> = ReadList { entries: &[] };

    /// Decodes `1 PHLOO 1 PHLOO ... 0`. Each entry consumes 24 bytes, so the loop is bounded
    /// by the input length whatever the input claims.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = r.position();
        while r.bool("rdma_reads")? {
            r.u32("position")?;
            Segment::decode(r)?;
        }
        let all = r.since(start);
        Ok(ReadList { entries: &all[..all.len() - 4] })
    }

    /// Number of read segments.
    pub fn len(&self) -> usize {
        self.entries.len() / READ_ENTRY_LEN
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first entry's position, without decoding the rest of it.
    #[inline]
    pub(crate) fn first_position(&self) -> Option<u32> {
        let e = self.entries.get(..8)?;
        Some(u32::from_be_bytes([e[4], e[5], e[6], e[7]]))
    }

    /// The read segments in list order.
    pub fn segments(&self) -> ReadSegments<'a> {
        ReadSegments { entries: self.entries }
    }

    /// Read chunks: runs of adjacent segments that share a position (RFC 8166 3.4.5).
    pub fn chunks(&self) -> ReadChunks<'a> {
        ReadChunks { entries: self.entries }
    }

    /// The position-zero read chunk, if any (RFC 8166 3.5.3).
    pub fn position_zero(&self) -> Option<ReadChunk<'a>> {
        self.chunks().find(|c| c.position == 0)
    }

    /// Encoded length, terminator included.
    pub fn encoded_len(&self) -> usize {
        self.entries.len() + 4
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.bytes(self.entries)?;
        w.u32(0)
    }
}

/// Iterator over read segments.
#[derive(Debug, Clone)]
pub struct ReadSegments<'a> {
    entries: &'a [u8],
}

impl<'a> Iterator for ReadSegments<'a> {
    type Item = ReadSegment;

    fn next(&mut self) -> Option<ReadSegment> {
        if self.entries.len() < READ_ENTRY_LEN {
            return None;
        }
        let (e, rest) = self.entries.split_at(READ_ENTRY_LEN);
        self.entries = rest;
        Some(ReadSegment::from_entry(e))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.entries.len() / READ_ENTRY_LEN;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ReadSegments<'_> {}

/// A read chunk: one or more adjacent read segments at one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadChunk<'a> {
    pub position: u32,
    entries: &'a [u8],
}

impl<'a> ReadChunk<'a> {
    /// The chunk's segments, in the order their contents concatenate.
    pub fn segments(&self) -> impl ExactSizeIterator<Item = Segment> + 'a {
        ReadSegments { entries: self.entries }.map(|s| s.target)
    }

    pub fn segment_count(&self) -> usize {
        self.entries.len() / READ_ENTRY_LEN
    }

    /// Total bytes of the chunk (u64: a hostile list can sum past u32).
    pub fn length(&self) -> u64 {
        self.segments().map(|s| s.length as u64).sum()
    }
}

/// Iterator over read chunks.
#[derive(Debug, Clone)]
pub struct ReadChunks<'a> {
    entries: &'a [u8],
}

impl<'a> Iterator for ReadChunks<'a> {
    type Item = ReadChunk<'a>;

    fn next(&mut self) -> Option<ReadChunk<'a>> {
        let first = ReadSegments { entries: self.entries }.next()?;
        let mut n = 1;
        while let Some(e) = self.entries.get(n * READ_ENTRY_LEN..(n + 1) * READ_ENTRY_LEN) {
            if ReadSegment::from_entry(e).position != first.position {
                break;
            }
            n += 1;
        }
        let (chunk, rest) = self.entries.split_at(n * READ_ENTRY_LEN);
        self.entries = rest;
        Some(ReadChunk { position: first.position, entries: chunk })
    }
}

/// A write chunk or the reply chunk (RFC 8166 3.4.6, `xdr_write_chunk`): counted segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteChunk<'a> {
    /// `count * 16` bytes of segments.
    segments: &'a [u8],
}

impl<'a> WriteChunk<'a> {
    /// Decodes `N HLOO ... HLOO`; a count the input cannot hold fails at the count word.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let count = r.count("target", SEGMENT_LEN)? as usize;
        let start = r.position();
        for _ in 0..count {
            Segment::decode(r)?;
        }
        Ok(WriteChunk { segments: r.since(start) })
    }

    /// The segment count (RFC 8166 3.4.6: zero makes an "empty Write chunk").
    pub fn segment_count(&self) -> usize {
        self.segments.len() / SEGMENT_LEN
    }

    pub fn segments(&self) -> Segments<'a> {
        Segments { bytes: self.segments }
    }

    /// Total bytes (u64: a hostile chunk can sum past u32).
    pub fn length(&self) -> u64 {
        self.segments().map(|s| s.length as u64).sum()
    }

    /// "An unused Write chunk has a non-zero segment count, but all of its segments are empty."
    pub fn is_unused(&self) -> bool {
        self.segment_count() > 0 && self.segments().all(|s| s.length == 0)
    }

    pub fn encoded_len(&self) -> usize {
        4 + self.segments.len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.segment_count() as u32)?;
        w.bytes(self.segments)
    }
}

/// Iterator over plain segments.
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    bytes: &'a [u8],
}

impl Iterator for Segments<'_> {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        if self.bytes.len() < SEGMENT_LEN {
            return None;
        }
        let (s, rest) = self.bytes.split_at(SEGMENT_LEN);
        self.bytes = rest;
        Some(Segment::from_bytes(s))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.len() / SEGMENT_LEN;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Segments<'_> {}

/// The write list (RFC 8166 4.3.2): validated, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteList<'a> {
    /// The entries `1 N HLOO...`, without the terminating zero.
    entries: &'a [u8],
    count: usize,
}

impl<'a> WriteList<'a> {
    pub const EMPTY: WriteList<'static> = WriteList { entries: &[], count: 0 };

    /// Decodes `1 N HLOO.. 1 N HLOO.. 0`; each entry consumes at least 8 bytes.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = r.position();
        let mut count = 0;
        while r.bool("rdma_writes")? {
            WriteChunk::decode(r)?;
            count += 1;
        }
        let all = r.since(start);
        Ok(WriteList { entries: &all[..all.len() - 4], count })
    }

    /// Number of write chunks.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn chunks(&self) -> WriteChunks<'a> {
        WriteChunks { entries: self.entries }
    }

    pub fn encoded_len(&self) -> usize {
        self.entries.len() + 4
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.bytes(self.entries)?;
        w.u32(0)
    }
}

/// Iterator over write chunks.
#[derive(Debug, Clone)]
pub struct WriteChunks<'a> {
    entries: &'a [u8],
}

impl<'a> Iterator for WriteChunks<'a> {
    type Item = WriteChunk<'a>;

    fn next(&mut self) -> Option<WriteChunk<'a>> {
        if self.entries.len() < 8 {
            return None;
        }
        let b = self.entries;
        let n = u32::from_be_bytes([b[4], b[5], b[6], b[7]]) as usize;
        let end = 8 + n * SEGMENT_LEN;
        let chunk = WriteChunk { segments: &b[8..end] };
        self.entries = &b[end..];
        Some(chunk)
    }
}

/// The three chunk lists of RDMA_MSG, RDMA_NOMSG and RDMA_MSGP (RFC 8166 4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkLists<'a> {
    pub reads: ReadList<'a>,
    pub writes: WriteList<'a>,
    pub reply: Option<WriteChunk<'a>>,
}

impl<'a> ChunkLists<'a> {
    /// No chunks: "simply three 32-bit fields that contain zero" (RFC 8166 4.7).
    pub const NONE: ChunkLists<'static> = ChunkLists { reads: ReadList::EMPTY, writes: WriteList::EMPTY, reply: None };

    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let reads = ReadList::decode(r)?;
        let writes = WriteList::decode(r)?;
        let reply = if r.bool("rdma_reply")? { Some(WriteChunk::decode(r)?) } else { None };
        Ok(ChunkLists { reads, writes, reply })
    }

    /// True when read list, write list and reply chunk are all absent.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.reply.is_none()
    }

    pub fn encoded_len(&self) -> usize {
        self.reads.encoded_len() + self.writes.encoded_len() + 4 + self.reply.map_or(0, |c| c.encoded_len())
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.reads.encode(w)?;
        self.writes.encode(w)?;
        match &self.reply {
            Some(c) => {
                w.u32(1)?;
                c.encode(w)
            }
            None => w.u32(0),
        }
    }
}

/// The big-endian word at `at`, if the buffer holds it.
#[inline(always)]
pub(crate) fn word(buf: &[u8], at: usize) -> Option<u32> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The big-endian word of four bytes.
#[inline(always)]
fn be(b: &[u8; 4]) -> u32 {
    u32::from_be_bytes(*b)
}

impl<'a> ChunkLists<'a> {
    /// The fast path of [`ChunkLists::decode`]: the three lists at the start of `lists`, and
    /// the bytes after them; None for anything malformed (the caller then runs the precise
    /// decoder, which says what and where). One length comparison per entry, each proving
    /// the entry and the next discriminator present; no error values.
    #[inline(always)]
    pub(crate) fn scan(lists: &'a [u8]) -> Option<(ChunkLists<'a>, &'a [u8])> {
        // Read list: "1 PHLOO" entries of 24 bytes, then 0.
        let mut rest = lists;
        let mut d = be(rest.first_chunk::<4>()?);
        while d == 1 {
            let (e, _) = rest.split_first_chunk::<{ READ_ENTRY_LEN + 4 }>()?;
            d = be(e[READ_ENTRY_LEN..].first_chunk::<4>().expect("4 bytes"));
            rest = &rest[READ_ENTRY_LEN..];
        }
        if d != 0 {
            return None;
        }
        let reads = ReadList { entries: &lists[..lists.len() - rest.len()] };
        // Write list: "1 N HLOO*N" entries, then 0.
        let writes_start = rest.get(4..)?;
        let mut rest = writes_start;
        let mut d = be(rest.first_chunk::<4>()?);
        let mut count = 0;
        while d == 1 {
            let (h, _) = rest.split_first_chunk::<8>()?;
            let n = be(h[4..].first_chunk::<4>().expect("4 bytes")) as u64;
            // The entry and the next discriminator (u64: no count overflows it).
            let len = 8 + n * SEGMENT_LEN as u64;
            if (rest.len() as u64) < len + 4 {
                return None;
            }
            rest = &rest[len as usize..];
            d = be(rest.first_chunk::<4>()?);
            count += 1;
        }
        if d != 0 {
            return None;
        }
        let writes = WriteList { entries: &writes_start[..writes_start.len() - rest.len()], count };
        // Reply chunk: 0, or "1 N HLOO*N".
        let (h, _) = rest.split_first_chunk::<8>()?;
        match be(h[4..].first_chunk::<4>().expect("4 bytes")) {
            0 => Some((ChunkLists { reads, writes, reply: None }, &rest[8..])),
            1 => {
                let (h, tail) = rest.split_first_chunk::<12>()?;
                let n = be(h[8..].first_chunk::<4>().expect("4 bytes")) as u64;
                let len = n * SEGMENT_LEN as u64;
                if (tail.len() as u64) < len {
                    return None;
                }
                let (segments, payload) = tail.split_at(len as usize);
                Some((ChunkLists { reads, writes, reply: Some(WriteChunk { segments }) }, payload))
            }
            _ => None,
        }
    }
}

/// `rpcrdma2_segment` (rtrext's `rpcrdma1_segment`, wire notes R7): the v1 plain segment.
impl<'a> Item<'a> for Segment {
    const MIN_LEN: usize = 16;
    const FIXED: bool = true;
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

crate::xdr::impl_encode! {
    ChunkLists<'_> => encode;
}

#[cfg(test)]
mod tests;
