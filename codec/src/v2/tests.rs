use super::*;
use crate::check::Role;
use crate::chunk::ReadSegment;
use crate::error::{DecodeError, ErrorKind};
use crate::profile::{Profile, RtrextOpttypes, V2Envelope, V2ErrorNumbering};

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
    assert_eq!(c.direction, Some(MsgType::CALL));
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
    assert_eq!(o.dir, Some(MsgType::REPLY));
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
    let n = HeaderBuilder::nomsg(3, 8, MsgType::CALL).read_list(&reads).encode(&mut buf).unwrap();
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
    let n = HeaderBuilder::optional(1, 1, MsgType::CALL, 42, OptInfo::Raw(&[1, 2]))
        .raw_optinfo_length(40)
        .encode(&mut buf)
        .unwrap();
    let e = Message::decode(&buf[..n], &Profile::default()).unwrap_err();
    assert_eq!(e.field, "rdma_optinfo");
    let n = HeaderBuilder::msg(1, 1, MsgType::CALL).raw_direction(9).encode(&mut buf).unwrap();
    let e = Message::decode(&buf[..n], &Profile::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidEnum { value: 9 });
    let n = HeaderBuilder::msg(1, 1, MsgType::CALL).raw_proc(3).encode(&mut buf).unwrap();
    assert_eq!(Message::decode(&buf[..n], &Profile::default()).unwrap_err().kind, ErrorKind::UnknownProc { value: 3 });
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

#[test]
fn builder_encoded_len_is_exact_for_every_shape() {
    use crate::chunk::Segment;
    use crate::xdr::Encode;
    let reads = [ReadSegment::new(0, 1, 100, 0x10)];
    let seg = [Segment::new(2, 8192, 0x20), Segment::new(3, 16, 0x30)];
    let writes: [&[Segment]; 1] = [&seg];
    let err = ErrorInfo::new(ErrorBody::Vers { low: 2, high: 2 }, V2ErrorNumbering::Draft01).unwrap();
    let builders = [
        HeaderBuilder::msg(1, 1, MsgType::CALL).payload(&[1, 2, 3, 4, 5]),
        HeaderBuilder::nomsg(1, 1, MsgType::REPLY).read_list(&reads).write_list(&writes).reply_chunk(&seg),
        HeaderBuilder::msg(1, 1, MsgType::CALL).draft00(),
        HeaderBuilder::error(1, 1, err),
        HeaderBuilder::error(1, 1, err).raw_error_code(77),
        HeaderBuilder::optional(1, 1, MsgType::CALL, 99, OptInfo::Raw(&[1, 2, 3])).payload(&[9; 7]),
        HeaderBuilder::optional(1, 1, MsgType::CALL, 99, OptInfo::Raw(&[1, 2, 3])).raw_optinfo_length(1),
        HeaderBuilder::optional(1, 1, MsgType::CALL, 99, OptInfo::Raw(&[])).draft00(),
        HeaderBuilder::msg(1, 1, MsgType::CALL).raw_body(&[0; 5]).payload(&[1]),
    ];
    for b in builders {
        let v = b.encode_to_vec();
        assert_eq!(v.len(), b.encoded_len(), "{b:?}");
        let mut w = std::vec![0u8; v.len()];
        assert_eq!(b.encode(&mut w), Ok(v.len()));
        assert_eq!(w, v);
    }
}

/// The scan of RDMA2_OPTIONAL and the precise decoder accept the same inputs with the same
/// result, under every profile that changes what the bytes mean.
#[test]
fn optional_scan_agrees_with_the_precise_decoder() {
    use crate::profile::{PropertyIds, SubsetBitOrder};
    fn optional(head: &[u32], body: &[u32], tail: &[u32]) -> std::vec::Vec<u8> {
        let mut w = head.to_vec();
        w.push(4 * body.len() as u32);
        w.extend_from_slice(body);
        w.extend_from_slice(tail);
        words(&w)
    }
    // ROPT_INITXCH: RBSIZ 8192, REQREMINV true, BRS 2; nochg {0}.
    let initxch = optional(&[0x20, 2, 1, 5, 0, 1], &[3, 1, 4, 8192, 2, 4, 1, 3, 4, 2, 1, 1], &[]);
    // ROPT_XMTREQ (opttype 5): EXRW and TBSN placements, one rsdset of a BYSIZE item and a
    // TBSN item, then an empty rsdset right after it; count 1, rsbuf 2, pslen 8; 8 payload
    // bytes. Single-bit changes make TOOSHORT and NOITEM (1 ^ 4, 2 ^ 4), empty locations and
    // misordered ranges: the checks must find the same in both results (the scan records
    // what they look for).
    let dp = [2, 0, 8192, 1, 1, 0x11, 8192, 0, 0x4000, 8192, 16, 2, 12, 2, 3, 4];
    let rsd = [2, 10, 20, 2, 64, 4, 7, 1, 0x12, 4096, 0, 0x8000, 32, 2, 20, 40, 0];
    let body: std::vec::Vec<u32> = dp.iter().chain(&rsd).chain(&[1, 2, 8]).copied().collect();
    let xmtreq = optional(&[0x30, 2, 0x10, 5, 1, 5], &body, &[0x30, 0]);
    let literal = optional(&[0x30, 2, 0x10, 5, 0, 1], &body, &[]);
    // An EXRW placement of 8192 bytes and no segment (rtrext-03/7.3/no-location).
    let unlocated = optional(&[0x30, 2, 0x10, 5, 0, 5], &[1, 0, 8192, 1, 0, 0, 1, 2, 0], &[]);
    assert!(check(&Message::decode(&unlocated, &Profile::default()).unwrap(), Role::Call)
        .contains(rtrext::rules::NO_LOCATION.id));
    let profiles = [
        Profile::default(),
        Profile { rtrext_opttypes: RtrextOpttypes::Literal, ..Profile::default() },
        Profile { property_ids: PropertyIds::V2Draft03, ..Profile::default() },
        Profile { subset_bit_order: SubsetBitOrder::MsbFirst, ..Profile::default() },
        Profile { v2_envelope: V2Envelope::Draft00, ..Profile::default() },
    ];
    for (i, full) in [&initxch, &xmtreq, &literal, &unlocated].into_iter().enumerate() {
        let p = if i == 2 { &profiles[1] } else { &profiles[0] };
        assert!(super::scan::optional(full, p).is_some(), "the scan takes message {i}");
        let mut cases = std::vec::Vec::new();
        for cut in 0..=full.len() {
            cases.push(full[..cut].to_vec());
        }
        for at in 0..full.len() {
            for v in [1u8, 2, 4, 0x80, 0xff] {
                let mut m = full.clone();
                m[at] ^= v;
                cases.push(m);
            }
        }
        for c in &cases {
            for p in &profiles {
                match (super::scan::optional(c, p), Message::decode_precise(c, p)) {
                    (Some(f), Ok(m)) => {
                        assert_eq!(f, m);
                        for role in [Role::Call, Role::Reply] {
                            assert!(check(&f, role).iter().eq(check(&m, role).iter()), "{:?}", check(&m, role));
                        }
                    }
                    (Some(f), Err(e)) => panic!("the scan accepted what the decoder rejects ({e}): {f:?}"),
                    (None, _) => {}
                }
            }
        }
    }
}

/// The facts a scan records live in the padding of a decoded array: nothing grows.
#[cfg(target_pointer_width = "64")]
#[test]
fn decoded_arrays_and_messages_keep_their_size() {
    assert_eq!(core::mem::size_of::<crate::xdr::Array<'static, u32>>(), 24);
    assert_eq!(core::mem::size_of::<Message<'static>>(), 152);
}

/// The builder's fast path for ROPT_INITXCH and ROPT_XMTREQ writes what the `Writer` path
/// writes, from values and from decoded operations, and fails on every short buffer with
/// the same error.
#[test]
fn optional_fast_encode_matches_the_writer() {
    use crate::chunk::Segment;
    use crate::xdr::{Array, Writer};
    use rtrext::{Loc, Mitem, RsdItem, RsdLoc, RsdRange, RsdSet, XmtReq};
    use xcharext::{InitXch, XcharSpec, XcharSubset, XcharVal};
    let p = Profile::default();
    let segs = [Segment::new(0x11, 8192, 0x4000), Segment::new(0x12, 16, 0x8000)];
    let bsnum = [3u32, 4];
    let dp = [
        Mitem { disp: 0, length: 8192, loc: Loc::Exrw(Array::from_slice(&segs)) },
        Mitem { disp: 8192, length: 16, loc: Loc::Tbsn { offset: 12, bsnum: Array::from_slice(&bsnum) } },
        Mitem { disp: 9000, length: 0, loc: Loc::NoItem },
    ];
    let items = [
        RsdItem { minlen: 64, loc: RsdLoc::BySize { dsdov: 7, bsex: Array::from_slice(&segs[..1]) } },
        RsdItem { minlen: 32, loc: RsdLoc::Choice(Array::from_slice(&segs)) },
        RsdItem { minlen: 8, loc: RsdLoc::Tbsn },
    ];
    let rsd = [RsdSet { range: RsdRange { begin: 10, end: 20 }, items: Array::from_slice(&items) }];
    let xmtreq = XmtReq { dp: Array::from_slice(&dp), rsd: Array::from_slice(&rsd), count: 1, rsbuf: 2, pslen: 8 };
    let vals = [XcharVal::new(1, &[0, 0, 0x20, 0]), XcharVal::new(3, &[0, 0, 0, 2])];
    let odd = [XcharVal::new(0xffff_ff00, &[1, 2, 3])];
    let nochg = [1u32, 0x8000_0000];
    let initxch = |vals| {
        OptInfo::Xchar(xcharext::Op::InitXch(InitXch {
            start: XcharSpec::new(vals, p.property_ids),
            nochg: XcharSubset::new(&nochg, p.subset_bit_order),
        }))
    };
    let payload = [0u8, 0, 0, 0x30, 0, 0, 0, 0];
    let mut builders = std::vec![
        HeaderBuilder::optional(0x30, 0x10, MsgType::CALL, 5, OptInfo::Rtr(rtrext::Op::XmtReq(xmtreq)))
            .payload(&payload),
        HeaderBuilder::optional(0x20, 1, MsgType::CALL, 1, initxch(&vals)),
        HeaderBuilder::optional(0x20, 1, MsgType::REPLY, 1, initxch(&odd)),
        HeaderBuilder::optional(0x30, 0x10, MsgType::CALL, 5, {
            OptInfo::Rtr(rtrext::Op::XmtReq(XmtReq { rsd: Array::empty(), ..xmtreq }))
        }),
    ];
    // The same operations decoded (their arrays are the received bytes).
    let mut bytes = std::vec::Vec::new();
    for b in &builders[..2] {
        let mut out = [0u8; 512];
        let n = b.encode(&mut out).unwrap();
        bytes.push(out[..n].to_vec());
    }
    let decoded: std::vec::Vec<_> = bytes.iter().map(|b| Message::decode(b, &p).unwrap()).collect();
    for m in &decoded {
        let Body::Optional(o) = m.header.body else { panic!("{m:?}") };
        builders.push(HeaderBuilder::optional(m.header.xid, 1, MsgType::CALL, o.opttype, o.info).payload(m.payload));
    }
    // Payloads around the short-copy lengths (8 to 16 bytes).
    let long: std::vec::Vec<u8> = (1..=40).collect();
    for n in [1, 4, 7, 8, 9, 15, 16, 17, 40] {
        builders.push(builders[0].payload(&long[..n]));
    }
    for b in &builders {
        let mut slow = [0u8; 512];
        let mut w = Writer::new(&mut slow);
        b.write(&mut w).unwrap();
        let n = w.len();
        let mut fast = [0u8; 512];
        assert_eq!(b.encode(&mut fast), Ok(n));
        assert_eq!(&fast[..n], &slow[..n]);
        for short in 0..n {
            let mut w = Writer::new(&mut slow[..short]);
            assert_eq!(b.encode(&mut fast[..short]), Err(b.write(&mut w).unwrap_err()));
        }
    }
}
