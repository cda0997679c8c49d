use super::*;
use crate::error::{DecodeError, ErrorKind};
use crate::profile::{Profile, PropertyIds, SubsetBitOrder};
use crate::xdr::{Reader, Writer};

fn words(ws: &[u32]) -> std::vec::Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

fn decode<'a>(opttype: u32, b: &'a [u8], p: &Profile) -> Result<Op<'a>, DecodeError> {
    let mut r = Reader::new(b);
    let op = Op::decode(opttype, &mut r, p)?.unwrap();
    r.expect_empty("rdma_optinfo")?;
    let mut out = [0u8; 256];
    let mut w = Writer::new(&mut out);
    op.encode(&mut w).unwrap();
    assert_eq!(w.written(), b);
    assert_eq!(op.encoded_len(), b.len());
    Ok(op)
}

// 4.1: optinfo_initxch { xcharspec optixch_start; xcharsubset optixch_nochg; }, with
// Table 1's RBSIZ (uint32), REQREMINV (bool), BRS (bkreqsup) and RBSIZ unchangeable.
#[test]
fn initxch_with_the_three_characteristics() {
    let b = words(&[3, 1, 4, 8192, 2, 4, 1, 3, 4, 2, 1, 0b1]);
    let Op::InitXch(o) = decode(ROPT_INITXCH, &b, &Profile::default()).unwrap() else { panic!() };
    let ids = PropertyIds::Xcharext02;
    let got: std::vec::Vec<_> = o.start.characteristics().map(Result::unwrap).collect();
    assert_eq!(
        got,
        [Characteristic::RbSiz(8192), Characteristic::ReqRemInv(true), Characteristic::Brs(BkReqSup::BKREQSUP_GENL)]
    );
    assert_eq!(o.start.iter().nth(2).unwrap().characteristic(ids).unwrap().name(), "BRS");
    assert!(o.nochg.is_set(0) && !o.nochg.is_set(1) && !o.nochg.is_set(40));
    assert_eq!(o.nochg.bits().collect::<std::vec::Vec<_>>(), [0]);
}

#[test]
fn unknown_and_experimental_ids_are_kept_raw() {
    let b = words(&[2, 77, 3, 0xaabbcc00, 0xffff_ff01, 0]);
    let Op::ReqXch(o) = decode(ROPT_REQXCH, &b, &Profile::default()).unwrap() else { panic!() };
    let mut c = o.want.characteristics().map(Result::unwrap);
    assert_eq!(c.next(), Some(Characteristic::Unknown { id: 77, data: &[0xaa, 0xbb, 0xcc] }));
    assert_eq!(c.next(), Some(Characteristic::Experimental { id: 0xffff_ff01, data: &[] }));
    assert!(o.want.iter().nth(1).unwrap().is_experimental());
    assert!(!o.want.iter().next().unwrap().is_experimental());
}

#[test]
fn known_values_are_checked() {
    let p = Profile::default();
    // REQREMINV = 2: "not valid when interpreted using the characteristic-associated typedef".
    let e = decode(ROPT_REQXCH, &words(&[1, 2, 4, 2]), &p).unwrap_err();
    assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::NotBool { value: 2 }));
    let e = decode(ROPT_REQXCH, &words(&[1, 3, 4, 3]), &p).unwrap_err();
    assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::InvalidEnum { value: 3 }));
    // Too short (no data) and too long (8 bytes for a uint32).
    let e = decode(ROPT_REQXCH, &words(&[1, 1, 0]), &p).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated { needed: 4, available: 0 });
    let e = decode(ROPT_REQXCH, &words(&[1, 1, 8, 4096, 0]), &p).unwrap_err();
    assert_eq!(e, DecodeError::new("xchv_data", 16, ErrorKind::TrailingData { extra: 4 }));
    // "extends beyond the bounds of the message".
    let e = decode(ROPT_REQXCH, &words(&[1, 1, 12, 4096]), &p).unwrap_err();
    assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::Truncated { needed: 12, available: 4 }));
    let e = decode(ROPT_REQXCH, &words(&[0x1000_0000, 1]), &p).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
}

#[test]
fn v2_03_ids_move_brs_and_add_rtrext_properties() {
    let p = Profile { property_ids: PropertyIds::V2Draft03, ..Profile::default() };
    // BRS=2 INLINE; RBSTRUCT=4 {8192, [{2, {4096, 4096, PLT}}]}; 3 is RTRSUPP (uint32 7).
    let b = words(&[3, 2, 4, 1, 4, 24, 8192, 1, 2, 4096, 4096, 1, 3, 4, 7]);
    let Op::ReqXch(o) = decode(ROPT_REQXCH, &b, &p).unwrap() else { panic!() };
    let c: std::vec::Vec<_> = o.want.characteristics().map(Result::unwrap).collect();
    assert_eq!(c[0], Characteristic::Brs(BkReqSup::BKREQSUP_INLINE));
    let Characteristic::RbStruct(buf) = c[1] else { panic!() };
    assert_eq!(buf.length, 8192);
    assert_eq!(buf.groups.get(0).unwrap().count, 2);
    assert_eq!(c[2], Characteristic::RtrSupp(7));
    assert_eq!(Known::Brs.id(PropertyIds::V2Draft03), Some(2));
    assert_eq!(Known::ReqRemInv.id(PropertyIds::V2Draft03), None);
    // A truncated RBSTRUCT is an xchv_data error.
    let e = decode(ROPT_REQXCH, &words(&[1, 4, 8, 8192, 1]), &p).unwrap_err();
    assert_eq!(e.field, "xchv_data");
    assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
}

#[test]
fn subset_bits_in_two_words_and_both_orders() {
    let b = words(&[2, 0b101, 0x8000_0000, 0, 0]);
    let Op::RespXch(o) = decode(ROPT_RESPXCH, &b, &Profile::default()).unwrap() else { panic!() };
    assert_eq!(o.done.bits().collect::<std::vec::Vec<_>>(), [0, 2, 63]);
    assert!(o.rej.is_empty() && o.pend.word_count() == 0);
    let p = Profile { subset_bit_order: SubsetBitOrder::MsbFirst, ..Profile::default() };
    let Op::RespXch(o) = decode(ROPT_RESPXCH, &b, &p).unwrap() else { panic!() };
    assert_eq!(o.done.bits().collect::<std::vec::Vec<_>>(), [29, 31, 32]);
    let mut ws = [0u32; 2];
    assert!(set_bit(&mut ws, 32, SubsetBitOrder::MsbFirst) && !set_bit(&mut ws, 64, SubsetBitOrder::LsbFirst));
    assert_eq!(ws, [0, 0x8000_0000]);
}

#[test]
fn updxch_and_building_from_values() {
    let b = words(&[1, 4, 16384, 1]);
    let Op::UpdXch(o) = decode(ROPT_UPDXCH, &b, &Profile::default()).unwrap() else { panic!() };
    assert!(o.pendclr);
    let e = decode(ROPT_UPDXCH, &words(&[1, 4, 16384, 5]), &Profile::default()).unwrap_err();
    assert_eq!(e, DecodeError::new("optupdxch_pendclr", 12, ErrorKind::NotBool { value: 5 }));
    let vals = [XcharVal::new(XCHAR_RBSIZ, &[0, 0, 0x20, 0]), XcharVal::new(99, &[1])];
    let op = Op::InitXch(InitXch {
        start: XcharSpec::new(&vals, PropertyIds::Xcharext02),
        nochg: XcharSubset::new(&[0b10], SubsetBitOrder::LsbFirst),
    });
    let mut out = [0u8; 64];
    let mut w = Writer::new(&mut out);
    op.encode(&mut w).unwrap();
    assert_eq!(w.written(), &words(&[2, 1, 4, 0x2000, 99, 1, 0x0100_0000, 1, 2])[..]);
    assert_eq!(op.encoded_len(), w.len());
}

#[test]
fn literal_rtrext_numbering_disowns_1_to_4() {
    let mut p = Profile::default();
    assert!(is_opttype(1, &p) && !is_opttype(5, &p));
    p.rtrext_opttypes = RtrextOpttypes::Literal;
    assert!(!is_opttype(1, &p));
}
