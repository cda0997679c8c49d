//! The representative messages of issue 8, shared by `codec/benches/codec.rs` (divan timings)
//! and `benches/icount-driver` (instruction counts), so both measure exactly the same code.
//!
//! Each message is built with the codec's builders, then compared byte for byte with the
//! golden vectors' forms (`vectors/v1`, `vectors/v2`, `vectors/ext`): see [`verify`]. The
//! operations below (`decode`, `check`, `encode`, ...) are what the loops repeat; inputs are
//! passed through `black_box` by the callers.
#![allow(dead_code)]

use std::path::Path;

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::private_data::{self, Effective, Lookup, PrivateData};
use rpcrdma_codec::rpc::CallHeader;
use rpcrdma_codec::rtrext::{self, Loc, Mitem, XmtReq};
use rpcrdma_codec::v2::{self, MsgType, OptInfo};
use rpcrdma_codec::xcharext::{self, InitXch, XcharSpec, XcharSubset, XcharVal};
use rpcrdma_codec::xdr::Array;

use rpcrdma_codec::{v1, DecodeError, Encode, EncodeError, Profile};

/// The forms, in report order: (name, what it is).
pub const FORMS: &[(&str, &str)] = &[
    ("msg-null", "v1 RDMA_MSG, no chunks, NFSv3 NULL call"),
    ("msg-read-write2", "v1 RDMA_MSG, one read chunk + one two-segment write chunk, RPC call"),
    ("nomsg-reply", "v1 RDMA_NOMSG with a one-segment reply chunk (Long Reply)"),
    ("err-vers", "v1 RDMA_ERROR ERR_VERS reply"),
    ("cm-private-data", "RFC 8797 CM private data in a 56-byte IB REQ buffer"),
    ("v2-initxch", "v2 RDMA2_OPTIONAL ROPT_INITXCH, three characteristics + subset"),
    ("v2-xmtreq", "v2 RDMA2_OPTIONAL ROPT_XMTREQ, two placements (EXRW + TBSN), 8-byte payload"),
];

pub fn profile() -> Profile {
    Profile::default()
}

// ------------------------------------------------------------------------------------------
// Values, as the golden vectors spell them.

/// v1/msg-no-chunks-null-call: xid 1, credit 32, NFSv3 (100003 v3) NULL.
pub mod msg_null {
    use super::*;
    pub const XID: u32 = 1;
    pub fn builder() -> v1::HeaderBuilder<'static> {
        v1::HeaderBuilder::msg(XID, 32)
    }
    pub fn payload(out: &mut Vec<u8>) {
        out.extend(CallHeader::new(XID, 100_003, 3, 0).encode_to_vec());
    }
}

/// One read chunk (v1/msg-call-all-lists: position 44, 4096 bytes) and one two-segment
/// write chunk (v1/msg-call-write-one-chunk-two-segments), no reply chunk; the RPC call of
/// msg-call-all-lists (prog 0x20000000 v1 proc 3, the opaque's length word then the chunk).
pub mod msg_read_write2 {
    use super::*;
    pub const XID: u32 = 0x30;
    pub static READS: [ReadSegment; 1] = [ReadSegment::new(44, 0x1122_3344, 4096, 0x1_0000_2000)];
    pub static WRITE0: [Segment; 2] =
        [Segment::new(0x3001, 4096, 0x6000_0000), Segment::new(0x3002, 4096, 0x7000_0000)];
    pub static WRITES: [&[Segment]; 1] = [&WRITE0];
    pub fn builder() -> v1::HeaderBuilder<'static> {
        v1::HeaderBuilder::msg(XID, 32).read_list(&READS).write_list(&WRITES)
    }
    pub fn payload(out: &mut Vec<u8>) {
        out.extend(CallHeader::new(XID, 0x2000_0000, 1, 3).encode_to_vec());
        out.extend(4096u32.to_be_bytes());
    }
}

/// v1/nomsg-reply-reply-chunk: the responder's Long Reply.
pub mod nomsg_reply {
    use super::*;
    pub static REPLY: [Segment; 1] = [Segment::new(0x2000, 6000, 0x2000_0000)];
    pub fn builder() -> v1::HeaderBuilder<'static> {
        v1::HeaderBuilder::nomsg(0x17, 32).reply_chunk(&REPLY)
    }
}

/// v1/error-vers-reply.
pub mod err_vers {
    use super::*;
    pub fn builder() -> v1::HeaderBuilder<'static> {
        v1::HeaderBuilder::err_vers(0x1a, 1, 1, 1, 1)
    }
}

/// ext/pd-req-56-zero-padded: 4 KiB both ways, R set, in a 56-byte REQ buffer.
pub mod cm_private_data {
    use super::*;
    pub const BUFFER: usize = private_data::IB_REQ_LEN;
    pub fn value() -> PrivateData {
        PrivateData::new(4096, 4096, true).unwrap()
    }
}

/// v2/initxch-known: RBSIZ 8192, REQREMINV true, BRS BKREQSUP_GENL; nochg = {0}.
pub mod v2_initxch {
    use super::*;
    pub static VALS: [XcharVal<'static>; 3] = [
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x20, 0]),
        XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 1]),
        XcharVal::new(xcharext::XCHAR_BRS, &[0, 0, 0, 2]),
    ];
    pub static NOCHG: [u32; 1] = [1];
    pub fn builder(p: &Profile) -> v2::HeaderBuilder<'static> {
        let op = xcharext::Op::InitXch(InitXch {
            start: XcharSpec::new(&VALS, p.property_ids),
            nochg: XcharSubset::new(&NOCHG, p.subset_bit_order),
        });
        v2::HeaderBuilder::optional(0x20, 1, MsgType::CALL, xcharext::ROPT_INITXCH, OptInfo::Xchar(op))
    }
}

/// v2/xmtreq-exrw-tbsn: 8192 bytes at 0 by explicit RDMA, 16 bytes at 8192 into target
/// buffer segments 3 and 4 at offset 12; one transmission, two response buffers, 8 payload bytes.
pub mod v2_xmtreq {
    use super::*;
    pub static EX: [Segment; 1] = [Segment::new(0x11, 8192, 0x4000)];
    pub static BSNUM: [u32; 2] = [3, 4];
    pub static DP: [Mitem<'static>; 2] = [
        Mitem { disp: 0, length: 8192, loc: Loc::Exrw(Array::from_slice(&EX)) },
        Mitem { disp: 8192, length: 16, loc: Loc::Tbsn { offset: 12, bsnum: Array::from_slice(&BSNUM) } },
    ];
    pub static PAYLOAD: [u8; 8] = [0, 0, 0, 0x30, 0, 0, 0, 0];
    pub fn builder(p: &Profile) -> v2::HeaderBuilder<'static> {
        let op = rtrext::Op::XmtReq(XmtReq {
            dp: Array::from_slice(&DP),
            rsd: Array::empty(),
            count: 1,
            rsbuf: 2,
            pslen: 8,
        });
        let opttype = rtrext::OpKind::XmtReq.opttype(p.rtrext_opttypes);
        v2::HeaderBuilder::optional(0x30, 0x10, MsgType::CALL, opttype, OptInfo::Rtr(op))
    }
}

// ------------------------------------------------------------------------------------------
// The operations the loops repeat.

#[inline]
pub fn v1_decode<'a>(b: &'a [u8], p: &Profile) -> Result<v1::Message<'a>, DecodeError> {
    v1::Message::decode(b, p)
}

#[inline]
pub fn v1_check(m: &v1::Message<'_>, role: Role) -> Violations {
    Violations::of(m, role)
}

#[inline]
pub fn v1_decode_check(b: &[u8], p: &Profile, role: Role) -> Result<Violations, DecodeError> {
    v1::Message::decode(b, p).map(|m| Violations::of(&m, role))
}

/// Encode from values: the builder a sender uses.
#[inline]
pub fn v1_encode(h: &v1::HeaderBuilder<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
    h.encode(out)
}

/// Encode a decoded header again (`Header::encode_into`, e.g. a responder echoing a reply chunk).
#[inline]
pub fn v1_reencode(h: &v1::Header<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
    h.encode_into(out)
}

#[inline]
pub fn v2_decode<'a>(b: &'a [u8], p: &Profile) -> Result<v2::Message<'a>, DecodeError> {
    v2::Message::decode(b, p)
}

#[inline]
pub fn v2_check(m: &v2::Message<'_>, role: Role) -> v2::Violations {
    v2::check(m, role)
}

#[inline]
pub fn v2_decode_check(b: &[u8], p: &Profile, role: Role) -> Result<v2::Violations, DecodeError> {
    v2::Message::decode(b, p).map(|m| v2::check(&m, role))
}

#[inline]
pub fn v2_encode(h: &v2::HeaderBuilder<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
    h.encode(out)
}

#[inline]
pub fn v2_reencode(h: &v2::Header<'_>, out: &mut [u8]) -> Result<usize, EncodeError> {
    h.encode_into(out)
}

/// Private data: locate and decode (`private_data::find`).
#[inline]
pub fn pd_find(b: &[u8], p: &Profile) -> Result<Lookup, DecodeError> {
    private_data::find(b, p)
}

/// Private data: the parameters to act on (`private_data::effective`: find, then the RFC 8797
/// 5.1 defaults), the private-data counterpart of decode + check.
#[inline]
pub fn pd_effective(b: &[u8], p: &Profile) -> Effective {
    private_data::effective(b, p)
}

#[inline]
pub fn pd_encode(pd: &PrivateData, out: &mut [u8]) -> Result<usize, EncodeError> {
    pd.encode_into(out)
}

/// The plain copy the codec is compared with: every byte of the message into a buffer.
#[inline]
pub fn copy(b: &[u8], out: &mut [u8]) -> usize {
    out[..b.len()].copy_from_slice(b);
    b.len()
}

// ------------------------------------------------------------------------------------------
// The bytes, built with the builders and checked against the golden vectors.

fn v1_bytes(h: &v1::HeaderBuilder<'_>, payload: Option<fn(&mut Vec<u8>)>) -> Vec<u8> {
    let mut out = h.encode_to_vec();
    if let Some(f) = payload {
        f(&mut out);
    }
    out
}

fn v2_bytes(h: &v2::HeaderBuilder<'_>, payload: &[u8]) -> Vec<u8> {
    let mut out = h.encode_to_vec();
    out.extend_from_slice(payload);
    out
}

/// The bytes of one form, as the builders make them (header and payload).
pub fn bytes(name: &str) -> Vec<u8> {
    let p = profile();
    match name {
        "msg-null" => v1_bytes(&msg_null::builder(), Some(msg_null::payload)),
        "msg-read-write2" => v1_bytes(&msg_read_write2::builder(), Some(msg_read_write2::payload)),
        "nomsg-reply" => v1_bytes(&nomsg_reply::builder(), None),
        "err-vers" => v1_bytes(&err_vers::builder(), None),
        "cm-private-data" => {
            let mut b = vec![0u8; cm_private_data::BUFFER];
            cm_private_data::value().encode_into(&mut b).unwrap();
            b
        }
        "v2-initxch" => v2_bytes(&v2_initxch::builder(&p), &[]),
        "v2-xmtreq" => v2_bytes(&v2_xmtreq::builder(&p), &v2_xmtreq::PAYLOAD),
        other => panic!("unknown form {other}"),
    }
}

/// The role each form is sent in, for the semantic check.
pub fn role(name: &str) -> Role {
    match name {
        "nomsg-reply" | "err-vers" => Role::Reply,
        _ => Role::Call,
    }
}

fn golden(root: &Path, rel: &str) -> rpcrdma_vectors::Vector {
    let path = root.join(rel);
    // The vector itself must pass the vectors' own verifier (facts, violations, re-encoding).
    if let Err(e) = rpcrdma_vectors::check_vector(&path) {
        panic!("golden vector {rel} does not verify: {e}");
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    rpcrdma_vectors::Vector::parse(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The golden bytes each form must equal, with where they come from.
pub fn golden_bytes(root: &Path, name: &str) -> (Vec<u8>, String) {
    let one = |rel: &str| (golden(root, rel).bytes, rel.to_string());
    match name {
        "msg-null" => one("v1/msg-no-chunks-null-call.vec"),
        "msg-read-write2" => {
            // No single vector has exactly this shape: splice two reviewed ones. From
            // msg-call-all-lists: the fixed words and the read list (bytes 0..44) and the RPC
            // payload (96..); from msg-call-write-one-chunk-two-segments: its write list
            // (bytes 20..64); then an absent reply chunk.
            let a = golden(root, "v1/msg-call-all-lists.vec").bytes;
            let w = golden(root, "v1/msg-call-write-one-chunk-two-segments.vec").bytes;
            let mut out = a[..44].to_vec();
            out.extend_from_slice(&w[20..64]);
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(&a[96..]);
            (
                out,
                "v1/msg-call-all-lists.vec [0..44] + v1/msg-call-write-one-chunk-two-segments.vec [20..64] + reply absent + msg-call-all-lists.vec [96..]"
                    .into(),
            )
        }
        "nomsg-reply" => one("v1/nomsg-reply-reply-chunk.vec"),
        "err-vers" => one("v1/error-vers-reply.vec"),
        "cm-private-data" => one("ext/pd-req-56-zero-padded.vec"),
        "v2-initxch" => one("v2/initxch-known.vec"),
        "v2-xmtreq" => one("v2/xmtreq-exrw-tbsn.vec"),
        other => panic!("unknown form {other}"),
    }
}

/// Checks every form: builder bytes equal the golden bytes, the bytes decode, the semantic
/// check reports nothing, and re-encoding the decoded header gives the same header bytes.
/// Panics with the first difference. Returns one line per form.
pub fn verify(root: &Path) -> Vec<String> {
    let p = profile();
    let mut lines = Vec::new();
    for (name, _) in FORMS {
        let built = bytes(name);
        let (want, from) = golden_bytes(root, name);
        assert_eq!(built, want, "{name}: builder bytes differ from the golden form ({from})");
        let role = role(name);
        let mut out = vec![0u8; built.len()];
        match *name {
            "cm-private-data" => {
                let e = pd_effective(&built, &p);
                assert_eq!(e.status, private_data::Status::Ok, "{name}");
                assert_eq!(e.params, cm_private_data::value(), "{name}");
                assert!(matches!(pd_find(&built, &p), Ok(Lookup::Found { at: 0, .. })), "{name}");
                let n = pd_encode(&cm_private_data::value(), &mut out).unwrap();
                assert_eq!(&out[..n], &built[..n], "{name}: encode");
            }
            "v2-initxch" | "v2-xmtreq" => {
                let m = v2_decode(&built, &p).unwrap_or_else(|e| panic!("{name}: {e}"));
                let v = v2_check(&m, role);
                assert!(v.is_empty(), "{name}: violations {:?}", v.iter().map(|x| x.rule.id).collect::<Vec<_>>());
                let n = v2_reencode(&m.header, &mut out).unwrap();
                assert_eq!(&out[..n], &built[..m.payload_offset], "{name}: re-encoding");
            }
            _ => {
                let m = v1_decode(&built, &p).unwrap_or_else(|e| panic!("{name}: {e}"));
                let v = v1_check(&m, role);
                assert!(v.is_empty(), "{name}: violations {:?}", v.iter().map(|x| x.rule.id).collect::<Vec<_>>());
                let n = v1_reencode(&m.header, &mut out).unwrap();
                assert_eq!(&out[..n], &built[..m.payload_offset], "{name}: re-encoding");
            }
        }
        lines.push(format!("{name}: {} bytes = {from}", built.len()));
    }
    lines
}
