use super::*;
use crate::check::Violations;
use crate::chunk::Segment;
use crate::error::{DecodeError, ErrorKind};
use crate::profile::{Profile, RtrextOpttypes};
use crate::v2::MsgType;
use crate::xdr::{Array, Reader, Writer};

fn words(ws: &[u32]) -> std::vec::Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

fn decode(kind: OpKind, b: &[u8]) -> Result<Op<'_>, DecodeError> {
    let p = Profile::default();
    let mut r = Reader::new(b);
    let op = Op::decode(kind.opttype(p.rtrext_opttypes), &mut r, &p)?.unwrap();
    r.expect_empty("rdma_optinfo")?;
    let mut out = [0u8; 512];
    let mut w = Writer::new(&mut out);
    op.encode(&mut w).unwrap();
    assert_eq!(w.written(), b);
    assert_eq!(op.encoded_len(), b.len());
    Ok(op)
}

fn ids(v: &Violations) -> std::vec::Vec<&'static str> {
    v.iter().map(|v| v.rule.id).collect()
}

#[test]
fn opttype_numbering() {
    assert_eq!(OpKind::XmtReq.opttype(RtrextOpttypes::Combined), 5);
    assert_eq!(OpKind::ReptErr.opttype(RtrextOpttypes::Combined), 8);
    assert_eq!(OpKind::from_opttype(3, RtrextOpttypes::Literal), Some(OpKind::XmtCont));
    assert_eq!(OpKind::from_opttype(3, RtrextOpttypes::Combined), None);
}

// 9.2 optxmt_req: one EXRW item (like a read chunk) and one TBSN item, a response
// direction set with a CHOICE and a BYSIZE item; 1 transmission, 2 reserved, 100 bytes.
#[test]
fn xmtreq_with_every_request_placement() {
    let b = words(&[
        2, // optxrq_dp
        0, 8192, 1, 1, 0x11, 8192, 0, 0x4000, // EXRW: one segment
        8192, 16, 2, 12, 2, 3, 4, // TBSN: offset 12 into segments 3, 4
        1, // optxrq_rsd
        100, 200, 2, // range 100..200, two items
        512, 3, 1, 0x22, 4096, 0, 0x8000, // CHOICE
        1024, 4, 2048, 0, // BYSIZE, no segments
        1, 2, 100,
    ]);
    let Op::XmtReq(o) = decode(OpKind::XmtReq, &b).unwrap() else { panic!() };
    let m: std::vec::Vec<_> = o.dp.iter().collect();
    assert_eq!(m[0].loc.kind(), XmdpType::XMPTYPE_EXRW);
    let Loc::Exrw(segs) = m[0].loc else { panic!() };
    assert_eq!(segs.get(0), Some(Segment::new(0x11, 8192, 0x4000)));
    let Loc::Tbsn { offset, bsnum } = m[1].loc else { panic!() };
    assert_eq!((offset, bsnum.iter().collect::<std::vec::Vec<_>>()), (12, std::vec![3, 4]));
    let set = o.rsd.get(0).unwrap();
    assert_eq!(set.range, RsdRange { begin: 100, end: 200 });
    let items: std::vec::Vec<_> = set.items.iter().collect();
    assert_eq!(items[0].loc.kind(), XmdpType::XMPTYPE_CHOICE);
    assert!(matches!(items[1].loc, RsdLoc::BySize { dsdov: 2048, bsex } if bsex.is_empty()));
    assert_eq!((o.count, o.rsbuf, o.pslen), (1, 2, 100));
    assert!(check(&Op::XmtReq(o), Some(MsgType::CALL), 100).is_empty());
}

// Table 1: CHOICE/BYSIZE in an xmdp_loc and TOOSHORT/NOITEM in an xmdp_rsdloc are "XDR
// Invalid"; TOOSHORT/NOITEM in a request's xmdp_loc are "Sem. Invalid".
#[test]
fn the_validity_split() {
    let e = decode(OpKind::XmtResp, &words(&[1, 0, 10, 3, 0, 1, 0])).unwrap_err();
    assert_eq!(e, DecodeError::new("xmdmi_where", 12, ErrorKind::InvalidEnum { value: 3 }));
    let e = decode(OpKind::XmtReq, &words(&[0, 1, 0, 8, 1, 0, 5, 1, 0, 0])).unwrap_err();
    assert_eq!(e, DecodeError::new("xmdrsdi_loc", 24, ErrorKind::InvalidEnum { value: 5 }));
    let b = words(&[1, 0, 10, 6, 0, 1, 0, 0]);
    let op = decode(OpKind::XmtReq, &b).unwrap();
    assert_eq!(ids(&check(&op, Some(MsgType::CALL), 0)), ["rtrext-03/6.2/result-type-in-request"]);
    let b = words(&[2, 0, 10, 5, 20, 30, 6, 1, 0]);
    let op = decode(OpKind::XmtResp, &b).unwrap();
    assert!(check(&op, Some(MsgType::REPLY), 0).is_empty());
}

#[test]
fn request_checks() {
    // Empty EXRW location for 10 bytes, ranges 50..40 then 30..60, count 0, pslen 8 > 4.
    let b = words(&[1, 0, 10, 1, 0, 2, 50, 40, 0, 30, 60, 0, 0, 0, 8]);
    let op = decode(OpKind::XmtReq, &b).unwrap();
    let got = ids(&check(&op, Some(MsgType::REPLY), 4));
    assert_eq!(
        got,
        [
            "rtrext-03/9.1/pslen-beyond-transmission",
            "rtrext-03/9.2/xmtreq-not-call",
            "rtrext-03/9.2/count-zero",
            "rtrext-03/7.3/no-location",
            "rtrext-03/7.4/rsdrange-inverted",
            "rtrext-03/7.4/rsdrange-order",
        ]
    );
}

#[test]
fn cont_and_report_error() {
    let b = words(&[0, 5, 0]);
    let op = decode(OpKind::XmtCont, &b).unwrap();
    assert_eq!(ids(&check(&op, None, 0)), ["rtrext-03/9.4/xnum-zero"]);
    let b = words(&[7, 0, 2, 1, 7, 0, 0, 4, 1, 3]);
    let Op::ReptErr(o) = decode(OpKind::ReptErr, &b).unwrap() else { panic!() };
    assert_eq!(o.bad, XmsId { xid: 7, dir: MsgType::CALL, seq: 2 });
    assert_eq!(o.lead, Some(XmsId { xid: 7, dir: MsgType::CALL, seq: 0 }));
    assert_eq!(
        o.info,
        OptrInfo { which: OptrErr::OPTRERR_BADSEQ, detail: OptrDetail::ExpCur { expect: 1, current: 3 } }
    );
    let e = decode(OpKind::ReptErr, &words(&[7, 2, 2, 0, 3])).unwrap_err();
    assert_eq!(e, DecodeError::new("xmsi_dir", 4, ErrorKind::InvalidEnum { value: 2 }));
    let e = decode(OpKind::ReptErr, &words(&[7, 0, 2, 0, 9])).unwrap_err();
    assert_eq!(e, DecodeError::new("optre_which", 16, ErrorKind::InvalidEnum { value: 9 }));
    let e = decode(OpKind::ReptErr, &words(&[7, 0, 2, 2, 3])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotBool { value: 2 });
}

#[test]
fn huge_counts_fail_before_looping() {
    let e = decode(OpKind::XmtResp, &words(&[0x4000_0000, 0, 0])).unwrap_err();
    assert_eq!(e.field, "optxrs_dp");
    assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
    let e = decode(OpKind::XmtResp, &words(&[1, 0, 0, 1, 0xffff_ffff, 0, 0])).unwrap_err();
    assert_eq!(
        e,
        DecodeError::new(
            "xmdl_ex",
            16,
            ErrorKind::CountExceedsInput { count: u32::MAX, element_size: 16, available: 8 }
        )
    );
}

#[test]
fn building_from_values() {
    let segs = [Segment::new(1, 2, 3)];
    let items = [Mitem { disp: 4, length: 2, loc: Loc::Exrw(Array::from_slice(&segs)) }];
    let op = Op::XmtResp(XmtResp { dp: Array::from_slice(&items), count: 1, pslen: 0 });
    let mut out = [0u8; 64];
    let mut w = Writer::new(&mut out);
    op.encode(&mut w).unwrap();
    assert_eq!(w.written(), &words(&[1, 4, 2, 1, 1, 1, 2, 0, 3, 1, 0])[..]);
    assert_eq!(op.encoded_len(), w.len());
    let buf = XmrbsBuf {
        length: 4096,
        groups: Array::from_slice(&[XmrbsGroup {
            count: 1,
            info: XmrbsSeg { length: 4096, align: 64, flags: XMRSFLAG_PLT },
        }]),
    };
    assert_eq!(buf.encoded_len(), 24);
    assert!(buf.groups.get(0).unwrap().info.is_placement_target());
}

#[test]
fn rule_ids_are_unique() {
    for (i, r) in rules::ALL.iter().enumerate() {
        assert!(r.id.starts_with("rtrext-03/"));
        assert!(rules::ALL[i + 1..].iter().all(|o| o.id != r.id), "{}", r.id);
    }
}
