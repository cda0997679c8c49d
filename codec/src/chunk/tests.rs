use super::*;
use crate::error::ErrorKind;

fn words(ws: &[u32]) -> std::vec::Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

// RFC 8166 4.7: "A Read chunk ... 1 PHLOO 1 PHLOO 1 PHLOO 0".
#[test]
fn read_list_groups_segments_by_position() {
    let b = words(&[1, 0, 7, 100, 0, 0x1000, 1, 0, 8, 3, 0, 0x2000, 1, 12, 9, 5, 1, 2, 0]);
    let mut r = Reader::new(&b);
    let list = ReadList::decode(&mut r).unwrap();
    assert!(r.is_empty());
    assert_eq!(list.len(), 3);
    let chunks: std::vec::Vec<_> = list.chunks().collect();
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].position, 0);
    assert_eq!(chunks[0].segment_count(), 2);
    assert_eq!(chunks[0].length(), 103);
    assert_eq!(chunks[1].segments().next(), Some(Segment::new(9, 5, 0x1_0000_0002)));
    assert_eq!(list.position_zero().unwrap().length(), 103);
}

// RFC 8166 4.7: Write list "1 3 HLOO HLOO HLOO 1 2 HLOO HLOO 0".
#[test]
fn write_list_of_counted_arrays() {
    let mut ws = std::vec![1, 3];
    for i in 0..3 {
        ws.extend([10 + i, 4096, 0, i * 4096]);
    }
    ws.extend([1, 2, 20, 512, 0, 0, 21, 0, 0, 0, 0]);
    let b = words(&ws);
    let mut r = Reader::new(&b);
    let list = WriteList::decode(&mut r).unwrap();
    assert!(r.is_empty());
    assert_eq!(list.len(), 2);
    let c: std::vec::Vec<_> = list.chunks().collect();
    assert_eq!(c[0].segment_count(), 3);
    assert_eq!(c[0].length(), 3 * 4096);
    assert_eq!(c[1].segments().nth(1), Some(Segment::new(21, 0, 0)));
    let mut out = [0u8; 128];
    let mut w = Writer::new(&mut out);
    list.encode(&mut w).unwrap();
    assert_eq!(w.written(), &b[..]);
}

#[test]
fn unused_and_empty_write_chunks() {
    let b = words(&[2, 1, 0, 0, 0, 2, 0, 0, 0]);
    let c = WriteChunk::decode(&mut Reader::new(&b)).unwrap();
    assert!(c.is_unused());
    let zero = words(&[0]);
    let e = WriteChunk::decode(&mut Reader::new(&zero)).unwrap();
    assert_eq!(e.segment_count(), 0);
    assert!(!e.is_unused());
}

#[test]
fn no_chunks_is_three_zero_words() {
    let b = words(&[0, 0, 0]);
    let mut r = Reader::new(&b);
    let c = ChunkLists::decode(&mut r).unwrap();
    assert!(c.is_empty());
    assert_eq!(c.encoded_len(), 12);
}

#[test]
fn huge_reply_count_fails_at_count_word() {
    let b = words(&[0, 0, 1, 0xffff_ffff, 0]);
    let e = ChunkLists::decode(&mut Reader::with_base(&b, 16)).unwrap_err();
    assert_eq!(e.field, "target");
    assert_eq!(e.offset, 28);
    assert!(matches!(e.kind, ErrorKind::CountExceedsInput { count: u32::MAX, .. }));
}

#[test]
fn chunk_writer_matches_decoder() {
    let mut out = [0u8; 256];
    let mut w = Writer::new(&mut out);
    ChunkWriter::read_list(&mut w, [ReadSegment::new(0, 1, 2, 3)]).unwrap();
    ChunkWriter::write_list(&mut w, &[&[Segment::new(4, 5, 6)]]).unwrap();
    ChunkWriter::reply_chunk(&mut w, Some(&[Segment::new(7, 8, 9)])).unwrap();
    let n = w.len();
    let mut r = Reader::new(&out[..n]);
    let c = ChunkLists::decode(&mut r).unwrap();
    assert_eq!(c.reads.segments().next(), Some(ReadSegment::new(0, 1, 2, 3)));
    assert_eq!(c.writes.chunks().next().unwrap().segments().next(), Some(Segment::new(4, 5, 6)));
    assert_eq!(c.reply.unwrap().segments().next(), Some(Segment::new(7, 8, 9)));
    assert_eq!(c.encoded_len(), n);
}
