//! XDR stream reassembly (RFC 8166 3.4.5, 3.4.6; implementation-experience 3.7).
//!
//! A Responder rebuilds the unreduced call Payload stream by inserting each Read chunk's
//! contents at its Position. The chunk carries the data item without its XDR roundup, and the
//! inline content after it carries no pad either (impl-exp 3.7), so the pad is restored here.
//! For replies, [`write_placements`] says which bytes of a result item land in which segment
//! of its Write chunk.

use core::fmt;

use crate::chunk::{Segment, WriteChunk};
use crate::xdr::pad4;

/// Why a stream could not be reassembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReassemblyError {
    /// A chunk's position lies past the reduced stream's end (RFC 8166 3.4.5).
    PositionBeyondPayload { chunk: usize, position: u32 },
    /// A chunk's position lies inside the previous chunk's item.
    Overlap { chunk: usize, position: u32 },
    /// The output buffer is too small.
    OutputTooSmall { needed: usize, available: usize },
    /// A result item is longer than its Write chunk (RFC 8166 3.4.6).
    ItemTooLong { item: u64, capacity: u64 },
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReassemblyError::PositionBeyondPayload { chunk, position } => {
                write!(f, "read chunk {chunk} at position {position} lies past the end of the payload stream")
            }
            ReassemblyError::Overlap { chunk, position } => {
                write!(f, "read chunk {chunk} at position {position} overlaps the previous chunk")
            }
            ReassemblyError::OutputTooSmall { needed, available } => {
                write!(f, "output buffer too small: needs {needed} bytes, has {available}")
            }
            ReassemblyError::ItemTooLong { item, capacity } => {
                write!(f, "result of {item} bytes does not fit a write chunk of {capacity} bytes")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ReassemblyError {}

struct Out<'o> {
    buf: &'o mut [u8],
    len: usize,
}

impl Out<'_> {
    fn put(&mut self, b: &[u8]) -> Result<(), ReassemblyError> {
        let end = self.len + b.len();
        if end > self.buf.len() {
            return Err(ReassemblyError::OutputTooSmall { needed: end, available: self.buf.len() });
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }

    fn zeros(&mut self, n: usize) -> Result<(), ReassemblyError> {
        self.put(&[0u8; 3][..n])
    }
}

/// Rebuilds the unreduced Payload stream into `out` and returns its length.
///
/// `reduced` is the reduced stream: the inline payload of an RDMA_MSG, or the contents of the
/// Position-Zero Read chunk of an RDMA_NOMSG. `chunks` gives each other Read chunk's position
/// and the contents pulled with RDMA Read, in list order. Each item gets its XDR pad back
/// unless the requester already included it (a chunk length that is a multiple of four).
pub fn reassemble_call<'c>(
    reduced: &[u8],
    chunks: impl IntoIterator<Item = (u32, &'c [u8])>,
    out: &mut [u8],
) -> Result<usize, ReassemblyError> {
    let mut o = Out { buf: out, len: 0 };
    let mut consumed = 0usize; // bytes of `reduced` copied so far
    for (i, (position, data)) in chunks.into_iter().enumerate() {
        let pos = position as usize;
        if pos < o.len {
            return Err(ReassemblyError::Overlap { chunk: i, position });
        }
        let inline_part = pos - o.len;
        if consumed + inline_part > reduced.len() {
            return Err(ReassemblyError::PositionBeyondPayload { chunk: i, position });
        }
        o.put(&reduced[consumed..consumed + inline_part])?;
        consumed += inline_part;
        o.put(data)?;
        o.zeros(pad4(data.len()))?;
    }
    o.put(&reduced[consumed..])?;
    Ok(o.len)
}

/// Where part of a result item goes: `length` bytes from `item_offset` of the item into
/// `segment` at `segment_offset` bytes from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WritePlacement {
    pub item_offset: u64,
    pub segment_index: usize,
    pub segment: Segment,
    pub length: u32,
}

/// Splits a result item of `item_len` bytes over a Write chunk, filling segments in array order
/// (RFC 8166 3.4.6). No XDR pad is written (3.4.6.2), so the placements add up to `item_len`.
pub fn write_placements<'a>(
    chunk: &WriteChunk<'a>,
    item_len: u64,
) -> Result<impl Iterator<Item = WritePlacement> + 'a, ReassemblyError> {
    let capacity = chunk.length();
    if item_len > capacity {
        return Err(ReassemblyError::ItemTooLong { item: item_len, capacity });
    }
    let mut left = item_len;
    let mut item_offset = 0u64;
    Ok(chunk.segments().enumerate().map_while(move |(segment_index, segment)| {
        if left == 0 {
            return None;
        }
        let length = (segment.length as u64).min(left) as u32;
        let p = WritePlacement { item_offset, segment_index, segment, length };
        left -= length as u64;
        item_offset += length as u64;
        Some(p)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xdr::Reader;

    // impl-exp 3.7: a 5-byte opaque in a read chunk at position 8; the inline content after
    // it (the word 0xcafef00d) follows the length word directly, without the chunk's pad.
    #[test]
    fn odd_read_chunk_gets_its_pad_back() {
        let reduced = [0, 0, 0, 1, 0, 0, 0, 5, 0xca, 0xfe, 0xf0, 0x0d];
        let data = [1u8, 2, 3, 4, 5];
        let mut out = [0xffu8; 32];
        let n = reassemble_call(&reduced, [(8, &data[..])], &mut out).unwrap();
        assert_eq!(n, 20);
        assert_eq!(&out[..n], &[0, 0, 0, 1, 0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0, 0xca, 0xfe, 0xf0, 0x0d]);
    }

    #[test]
    fn requester_supplied_pad_is_kept_once() {
        let data = [9u8; 8];
        let mut out = [0u8; 16];
        let n = reassemble_call(&[0, 0, 0, 8], [(4, &data[..])], &mut out).unwrap();
        assert_eq!(n, 12);
    }

    #[test]
    fn position_zero_payload_with_inner_chunk() {
        // NOMSG: the position-zero chunk is the reduced stream; a chunk at 4 sits inside it.
        let reduced = [0, 0, 0, 3, 7, 7, 7, 7];
        let mut out = [0u8; 16];
        let n = reassemble_call(&reduced, [(4, &[1u8, 2, 3][..])], &mut out).unwrap();
        assert_eq!(&out[..n], &[0, 0, 0, 3, 1, 2, 3, 0, 7, 7, 7, 7]);
    }

    #[test]
    fn bad_positions() {
        let mut out = [0u8; 64];
        assert_eq!(
            reassemble_call(&[0; 4], [(8, &[1u8][..])], &mut out),
            Err(ReassemblyError::PositionBeyondPayload { chunk: 0, position: 8 })
        );
        assert_eq!(
            reassemble_call(&[0; 8], [(0, &[1u8; 8][..]), (4, &[2u8][..])], &mut out),
            Err(ReassemblyError::Overlap { chunk: 1, position: 4 })
        );
        assert!(matches!(
            reassemble_call(&[0; 8], [(0, &[1u8; 8][..])], &mut out[..10]),
            Err(ReassemblyError::OutputTooSmall { needed: 16, .. })
        ));
    }

    #[test]
    fn odd_result_over_two_segments() {
        let b: std::vec::Vec<u8> =
            [2u32, 1, 4, 0, 0x100, 2, 4096, 0, 0x200].iter().flat_map(|w| w.to_be_bytes()).collect();
        let chunk = WriteChunk::decode(&mut Reader::new(&b)).unwrap();
        let p: std::vec::Vec<_> = write_placements(&chunk, 5).unwrap().collect();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].length, p[1].length, p[1].item_offset), (4, 1, 4));
        assert_eq!(p[1].segment.handle, 2);
        assert_eq!(
            write_placements(&chunk, 5000).err(),
            Some(ReassemblyError::ItemTooLong { item: 5000, capacity: 4100 })
        );
    }
}
