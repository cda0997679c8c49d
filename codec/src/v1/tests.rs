use super::*;
use crate::chunk::{ReadSegment, Segment};
use crate::error::{DecodeError, ErrorKind};
use crate::profile::{ErrorArm, Profile};
use crate::xdr::Writer;

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

/// Headers of every list shape up to three read entries, three write chunks of up to three
/// segments and a reply chunk of up to three, as the builder writes them, with 4 bytes of
/// payload.
fn shapes() -> std::vec::Vec<std::vec::Vec<u8>> {
    let reads = [ReadSegment::new(8, 1, 5, 0x10), ReadSegment::new(8, 2, 7, 0x20), ReadSegment::new(20, 3, 9, 0x30)];
    let seg = [Segment::new(3, 8192, 0x30), Segment::new(4, 4, 0x40), Segment::new(5, 0, u64::MAX)];
    let chunks: [&[Segment]; 4] = [&seg[..0], &seg[..1], &seg[..2], &seg[..3]];
    let mut out = std::vec::Vec::new();
    for r in 0..=3 {
        for w in 0..=3 {
            let writes: std::vec::Vec<&[Segment]> = (0..w).map(|i| chunks[(i + r) % 4]).collect();
            for reply in [None, Some(0), Some(1), Some(2), Some(3)] {
                for nomsg in [false, true] {
                    let b = if nomsg { HeaderBuilder::nomsg(7, 32) } else { HeaderBuilder::msg(7, 32) };
                    let b = b.read_list(&reads[..r]).write_list(&writes);
                    let b = match reply {
                        Some(n) => b.reply_chunk(&seg[..n]),
                        None => b,
                    };
                    let mut v = std::vec![0u8; b.encoded_len()];
                    let mut w = Writer::new(&mut v);
                    b.write(&mut w).unwrap();
                    v.extend_from_slice(&[0, 0, 0, 7]);
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The fast path and the precise decoder accept the same inputs with the same result.
#[test]
fn fast_path_agrees_with_the_precise_decoder() {
    let mut cases: std::vec::Vec<std::vec::Vec<u8>> = std::vec::Vec::new();
    for v in shapes() {
        assert!(Message::scan(&v).is_some(), "the fast path takes {v:?}");
        for cut in 0..v.len() {
            cases.push(v[..cut].to_vec());
        }
        // Each discriminator and count of the lists made 2, then huge.
        for at in (16..v.len() - 4).step_by(4) {
            for x in [2u32, 0x8000_0001] {
                let mut m = v.clone();
                m[at..at + 4].copy_from_slice(&x.to_be_bytes());
                cases.push(m);
            }
        }
        cases.push(v);
    }
    let full = words(&[
        7, 1, 32, 0, 1, 44, 0x100, 4096, 0, 0x1000, 0, 1, 2, 0x200, 4096, 0, 0x2000, 0x201, 4096, 0, 0x3000, 0, 1, 1,
        0x300, 512, 0, 0x4000, 7, 0,
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
    let n =
        HeaderBuilder::nomsg(0x77, 8).read_list(&reads).write_list(&writes).reply_chunk(&seg).encode(&mut buf).unwrap();
    let m = Message::decode(&buf[..n], &Profile::default()).unwrap();
    assert_eq!(m.payload_offset, n);
    assert_eq!(m.header.encoded_len(), n);
    let c = m.header.body.chunks().unwrap();
    assert_eq!(c.reads.segments().next(), Some(reads[0]));
    assert_eq!(c.writes.len(), 1);
    assert_eq!(c.reply.unwrap().length(), 8192);
}

/// The builder's fast path writes what the `Writer` path writes for every list shape, and
/// leaves every buffer too short to the `Writer` path (whose error says how many bytes).
#[test]
fn builder_fast_path_matches_the_writer_for_every_shape() {
    let reads = [ReadSegment::new(8, 1, 5, 0x10), ReadSegment::new(8, 2, 7, 0x20), ReadSegment::new(20, 3, 9, 0x30)];
    let seg = [Segment::new(3, 8192, 0x30), Segment::new(4, 4, 0x40), Segment::new(5, 0, u64::MAX)];
    let chunks: [&[Segment]; 4] = [&seg[..0], &seg[..1], &seg[..2], &seg[..3]];
    let mut n_shapes = 0;
    for r in 0..=3 {
        for w in 0..=3 {
            let writes: std::vec::Vec<&[Segment]> = (0..w).map(|i| chunks[(i + r) % 4]).collect();
            for reply in [None, Some(0), Some(1), Some(2), Some(3)] {
                let b = HeaderBuilder::msg(0x0102_0304, 0x0506_0708).read_list(&reads[..r]).write_list(&writes);
                let b = match reply {
                    Some(n) => b.reply_chunk(&seg[..n]),
                    None => b,
                };
                let mut slow = [0u8; 512];
                let mut wr = Writer::new(&mut slow);
                b.write(&mut wr).unwrap();
                let want = wr.written().to_vec();
                let mut fast = [0u8; 512];
                assert_eq!(b.encode(&mut fast), Ok(want.len()), "{b:?}");
                assert_eq!(&fast[..want.len()], &want[..], "{b:?}");
                for short in 0..want.len() {
                    let mut s = std::vec![0u8; short];
                    let mut wr = Writer::new(&mut slow[..short]);
                    let e = b.write(&mut wr).unwrap_err();
                    assert_eq!(b.encode(&mut s), Err(e), "{b:?} in {short} bytes");
                }
                n_shapes += 1;
            }
        }
    }
    assert_eq!(n_shapes, 4 * 4 * 5);
}

#[test]
fn raw_body_stays_whatever_the_order() {
    let body = [0u8, 0, 0, 9];
    let a = HeaderBuilder::err_chunk(1, 1).raw_body(&body).raw_error_code(5);
    let b = HeaderBuilder::err_chunk(1, 1).raw_error_code(5).raw_body(&body);
    let (mut x, mut y) = ([0u8; 32], [0u8; 32]);
    assert_eq!(a.encode(&mut x), Ok(20));
    assert_eq!(b.encode(&mut y), Ok(20));
    assert_eq!(x, y);
    assert_eq!(&x[16..20], &body);
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
