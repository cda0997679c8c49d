//! Property tests for every message type the codec reads: Version One headers (any body, any
//! chunk lists), Version Two headers (chunk lists, every error numbering, optional operations),
//! ONC RPC calls and replies, RDMA-CM private data, and CCP calls and replies.
//!
//! For each type:
//! - **Round trip.** A generated value is written twice: by a plain word serializer in this
//!   file (the wire layout restated from the RFCs, independent of the codec's encoder) and by
//!   the codec's encoder or builder. Both must give the same bytes; the codec must decode them
//!   to the generated value, field by field, and re-encode the decoding to the same bytes.
//! - **No panics.** Decoding any byte string (random, and random bytes behind a valid prefix)
//!   returns Ok or a typed `DecodeError` whose offset lies inside the input (`offset <= len`).
//! - **Truncation.** Cutting a valid encoding at every point before its end gives an error, and
//!   precisely: the error's offset is at or before the cut (`offset <= cut`), and the error says
//!   the input ended: either `Truncated { needed, available }` with `offset + available == cut`
//!   and `needed > available` (the named field starts at `offset` and runs past the cut), or
//!   `CountExceedsInput { count, element_size, available }` with `offset + 4 + available == cut`
//!   and `count * element_size > available` (the count word at `offset` claims more than is
//!   left after it). For headers, "its end" is the end of the transport header (what follows
//!   is payload); for RPC, private data and CCP, the end of the whole encoding.

use proptest::prelude::*;
use rpcrdma_codec::ccp::{self, CcpCall, CcpReply, ConfigRdmaReply, ConfigRdmaReq, Dispatch};
use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::private_data::{self, PrivateData};
use rpcrdma_codec::profile::V2ErrorNumbering;
use rpcrdma_codec::rpc::{AcceptStat, CallHeader, OpaqueAuth, Rejected, ReplyBody, ReplyHeader, RpcHeader, RpcMessage};
use rpcrdma_codec::v2::{self, ErrorBody as E2, ErrorInfo, MsgType, OptInfo};
use rpcrdma_codec::xcharext::{self, XcharSpec, XcharVal};
use rpcrdma_codec::xdr::Writer;
use rpcrdma_codec::{v1, DecodeError, ErrorKind, Profile};

// ------------------------------------------------------------------------------------------
// The independent serializer: XDR words (RFC 4506) in the layouts of RFC 8166 4.7 and friends.

#[derive(Default)]
struct Words(Vec<u8>);

impl Words {
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.u32((v >> 32) as u32).u32(v as u32)
    }
    fn seg(&mut self, s: &Segment) -> &mut Self {
        self.u32(s.handle).u32(s.length).u64(s.offset)
    }
    fn opaque(&mut self, d: &[u8]) -> &mut Self {
        self.u32(d.len() as u32);
        self.0.extend_from_slice(d);
        self.0.resize(self.0.len().div_ceil(4) * 4, 0);
        self
    }
    /// "1 PHLOO ... 0", "1 N HLOO ... 0", "0" or "1 N HLOO" (RFC 8166 4.7).
    fn lists(&mut self, l: &Lists) -> &mut Self {
        for r in &l.reads {
            self.u32(1).u32(r.position).seg(&r.target);
        }
        self.u32(0);
        for w in &l.writes {
            self.u32(1).u32(w.len() as u32);
            for s in w {
                self.seg(s);
            }
        }
        self.u32(0);
        match &l.reply {
            None => self.u32(0),
            Some(r) => {
                self.u32(1).u32(r.len() as u32);
                for s in r {
                    self.seg(s);
                }
                self
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Lists {
    reads: Vec<ReadSegment>,
    writes: Vec<Vec<Segment>>,
    reply: Option<Vec<Segment>>,
}

fn segment() -> impl Strategy<Value = Segment> {
    (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(h, l, o)| Segment::new(h, l, o))
}

fn lists() -> impl Strategy<Value = Lists> {
    (
        prop::collection::vec(
            (any::<u32>(), segment()).prop_map(|(p, s)| ReadSegment { position: p, target: s }),
            0..5,
        ),
        prop::collection::vec(prop::collection::vec(segment(), 0..4), 0..4),
        prop::option::of(prop::collection::vec(segment(), 0..4)),
    )
        .prop_map(|(reads, writes, reply)| Lists { reads, writes, reply })
}

fn decoded_lists(c: &rpcrdma_codec::chunk::ChunkLists<'_>) -> Lists {
    Lists {
        reads: c.reads.segments().collect(),
        writes: c.writes.chunks().map(|w| w.segments().collect()).collect(),
        reply: c.reply.map(|r| r.segments().collect()),
    }
}

/// Checks the truncation property for every cut of `full[..end]`.
/// `decode` returns the decoding as text (so one signature fits every borrowing decoder).
fn truncations(full: &[u8], end: usize, decode: impl Fn(&[u8]) -> Result<String, DecodeError>) {
    for cut in 0..end {
        let e = match decode(&full[..cut]) {
            Ok(v) => panic!("a cut at {cut} of {end} decoded: {v:?}"),
            Err(e) => e,
        };
        assert!(e.offset <= cut, "cut {cut}: error after the cut: {e:?}");
        match e.kind {
            ErrorKind::Truncated { needed, available } => {
                assert_eq!(e.offset + available, cut, "cut {cut}: {e:?}");
                assert!(needed > available, "cut {cut}: {e:?}");
            }
            ErrorKind::CountExceedsInput { count, element_size, available } => {
                assert_eq!(e.offset + 4 + available, cut, "cut {cut}: {e:?}");
                assert!(count as u64 * element_size as u64 > available as u64, "cut {cut}: {e:?}");
            }
            other => panic!("cut {cut}: not an end-of-input error: {other:?} in {e:?}"),
        }
    }
}

fn check_err(e: &DecodeError, len: usize) {
    assert!(e.offset <= len, "error offset {} past the input ({len}): {e:?}", e.offset);
    assert!(!e.field.is_empty());
    assert!(!e.kind.name().is_empty());
    let _ = e.to_string();
}

// ------------------------------------------------------------------------------------------
// Version One

#[derive(Debug, Clone)]
enum V1Body {
    Msg(Lists),
    NoMsg(Lists),
    MsgP(u32, u32, Lists),
    Done,
    ErrVers(u32, u32),
    ErrChunk,
}

fn v1_body() -> impl Strategy<Value = V1Body> {
    prop_oneof![
        4 => lists().prop_map(V1Body::Msg),
        3 => lists().prop_map(V1Body::NoMsg),
        1 => (any::<u32>(), any::<u32>(), lists()).prop_map(|(a, t, l)| V1Body::MsgP(a, t, l)),
        1 => Just(V1Body::Done),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(l, h)| V1Body::ErrVers(l, h)),
        1 => Just(V1Body::ErrChunk),
    ]
}

fn v1_words(xid: u32, credit: u32, body: &V1Body) -> Vec<u8> {
    let mut w = Words::default();
    w.u32(xid).u32(1).u32(credit);
    match body {
        V1Body::Msg(l) => w.u32(0).lists(l),
        V1Body::NoMsg(l) => w.u32(1).lists(l),
        V1Body::MsgP(a, t, l) => w.u32(2).u32(*a).u32(*t).lists(l),
        V1Body::Done => w.u32(3),
        V1Body::ErrVers(l, h) => w.u32(4).u32(1).u32(*l).u32(*h),
        V1Body::ErrChunk => w.u32(4).u32(2),
    };
    w.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn v1_round_trip(xid: u32, credit: u32, body in v1_body(), payload in prop::collection::vec(any::<u8>(), 0..12)) {
        let header = v1_words(xid, credit, &body);
        // The builder writes the same bytes as the independent serializer.
        let l = match &body { V1Body::Msg(l) | V1Body::NoMsg(l) | V1Body::MsgP(_, _, l) => Some(l), _ => None };
        let segs: Vec<&[Segment]> = l.map(|l| l.writes.iter().map(|w| w.as_slice()).collect()).unwrap_or_default();
        let b = match &body {
            V1Body::Msg(_) => v1::HeaderBuilder::msg(xid, credit),
            V1Body::NoMsg(_) => v1::HeaderBuilder::nomsg(xid, credit),
            V1Body::MsgP(a, t, _) => v1::HeaderBuilder::msgp(xid, credit, *a, *t),
            V1Body::Done => v1::HeaderBuilder::done(xid, credit),
            V1Body::ErrVers(lo, hi) => v1::HeaderBuilder::err_vers(xid, 1, credit, *lo, *hi),
            V1Body::ErrChunk => v1::HeaderBuilder::err_chunk(xid, credit),
        };
        let b = match l {
            Some(l) => {
                let b = b.read_list(&l.reads).write_list(&segs);
                match &l.reply { Some(r) => b.reply_chunk(r), None => b }
            }
            None => b,
        };
        let mut built = vec![0u8; header.len()];
        prop_assert_eq!(b.encode(&mut built), Ok(header.len()));
        prop_assert_eq!(&built, &header);

        let mut msg = header.clone();
        msg.extend_from_slice(&payload);
        for profile in [Profile::default(), Profile { error_arm: rpcrdma_codec::profile::ErrorArm::Rfc5666, ..Profile::default() }] {
            let m = v1::Message::decode(&msg, &profile).unwrap();
            prop_assert_eq!((m.header.xid, m.header.vers, m.header.credit), (xid, 1, credit));
            prop_assert_eq!(m.payload_offset, header.len());
            prop_assert_eq!(m.payload, &payload[..]);
            match (&body, &m.header.body) {
                (V1Body::Msg(l), v1::Body::Msg(c)) | (V1Body::NoMsg(l), v1::Body::NoMsg(c)) => prop_assert_eq!(&decoded_lists(c), l),
                (V1Body::MsgP(a, t, l), v1::Body::MsgP { align, thresh, chunks }) => {
                    prop_assert_eq!((a, t), (align, thresh));
                    prop_assert_eq!(&decoded_lists(chunks), l);
                }
                (V1Body::Done, v1::Body::Done) => {}
                (V1Body::ErrVers(lo, hi), v1::Body::Error(v1::ErrorBody::Vers { low, high })) => prop_assert_eq!((lo, hi), (low, high)),
                (V1Body::ErrChunk, v1::Body::Error(v1::ErrorBody::Chunk)) => {}
                (want, got) => prop_assert!(false, "body {:?} decoded as {:?}", want, got),
            }
            let mut out = vec![0u8; header.len()];
            prop_assert_eq!(m.header.encode_into(&mut out), Ok(header.len()));
            prop_assert_eq!(&out, &header);
            let _ = Violations::of(&m, Role::Call);
        }
        truncations(&msg, header.len(), |b| v1::Message::decode(b, &Profile::default()).map(|m| format!("{m:?}")));
    }

    #[test]
    fn v1_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256), prefix in v1_body()) {
        let p5666 = Profile { error_arm: rpcrdma_codec::profile::ErrorArm::Rfc5666, ..Profile::default() };
        // Random bytes, and random bytes behind a valid header start (so lists get exercised).
        let mut behind = v1_words(1, 1, &prefix);
        behind.truncate(16 + bytes.len() % 8 * 4);
        behind.extend_from_slice(&bytes);
        for input in [&bytes, &behind] {
            for p in [Profile::default(), p5666] {
                match v1::Message::decode(input, &p) {
                    Ok(m) => {
                        prop_assert!(m.payload_offset <= input.len());
                        let _ = Violations::of(&m, Role::Call);
                        let _ = Violations::of(&m, Role::Reply);
                    }
                    Err(e) => check_err(&e, input.len()),
                }
            }
            if let Err(e) = v1::ErrVers::decode(input) { check_err(&e, input.len()) }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Version Two

#[derive(Debug, Clone)]
enum V2Body {
    Msg(MsgType, Lists),
    NoMsg(MsgType, Lists),
    Error(V2ErrorNumbering, E2),
    /// An opttype no extension defines (>= 16), with raw optinfo.
    Raw(MsgType, u32, Vec<u8>),
    /// ROPT_REQXCH with values of unknown ids (opaque data).
    ReqXch(MsgType, Vec<(u32, Vec<u8>)>),
    /// ROPT_UPDXCH with an experimental id.
    UpdXch(MsgType, u32, Vec<u8>, bool),
}

fn dir() -> impl Strategy<Value = MsgType> {
    prop_oneof![Just(MsgType::CALL), Just(MsgType::REPLY)]
}

fn v2_error() -> impl Strategy<Value = (V2ErrorNumbering, E2)> {
    use V2ErrorNumbering as N;
    prop_oneof![
        (any::<u32>(), any::<u32>(), prop_oneof![Just(N::Draft01), Just(N::Draft02), Just(N::Draft04)])
            .prop_map(|(low, high, n)| (n, E2::Vers { low, high })),
        Just((N::Draft01, E2::BadHeader)),
        Just((N::Draft01, E2::InvalOption)),
        Just((N::Draft02, E2::BadXdr)),
        (any::<bool>(), any::<u32>(), any::<u32>()).prop_map(|(processed, segment_index, length_needed)| (
            N::Draft02,
            E2::CantReply { processed, segment_index, length_needed }
        )),
        Just((N::Draft02, E2::InvalProc)),
        Just((N::Draft02, E2::System)),
        Just((N::Draft04, E2::InvalProc)),
        any::<u32>().prop_map(|max_chunks| (N::Draft04, E2::ReadChunks { max_chunks })),
        any::<u32>().prop_map(|max_chunks| (N::Draft04, E2::WriteChunks { max_chunks })),
        any::<u32>().prop_map(|max_segments| (N::Draft04, E2::Segments { max_segments })),
        (any::<u32>(), any::<u32>())
            .prop_map(|(chunk_index, length_needed)| (N::Draft04, E2::WriteResource { chunk_index, length_needed })),
        any::<u32>().prop_map(|length_needed| (N::Draft04, E2::ReplyResource { length_needed })),
        Just((N::Draft04, E2::InvalOption)),
        Just((N::Draft04, E2::System)),
    ]
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..11)
}

fn v2_body() -> impl Strategy<Value = V2Body> {
    prop_oneof![
        (dir(), lists()).prop_map(|(d, l)| V2Body::Msg(d, l)),
        (dir(), lists()).prop_map(|(d, l)| V2Body::NoMsg(d, l)),
        v2_error().prop_map(|(n, e)| V2Body::Error(n, e)),
        (dir(), 16u32.., data()).prop_map(|(d, t, b)| V2Body::Raw(d, t, b)),
        // Ids 100..200 are no characteristic in either id table.
        (dir(), prop::collection::vec((100u32..200, data()), 0..4)).prop_map(|(d, v)| V2Body::ReqXch(d, v)),
        (dir(), 0xffff_ff00u32.., data(), any::<bool>()).prop_map(|(d, id, b, c)| V2Body::UpdXch(d, id, b, c)),
    ]
}

/// The independent layout (draft -01 4.2, xcharext-02 4): returns (bytes, profile).
fn v2_words(xid: u32, credit: u32, body: &V2Body) -> (Vec<u8>, Profile) {
    let mut p = Profile::default();
    let mut w = Words::default();
    w.u32(xid).u32(2).u32(credit);
    match body {
        V2Body::Msg(d, l) => w.u32(0).u32(d.0).lists(l),
        V2Body::NoMsg(d, l) => w.u32(1).u32(d.0).lists(l),
        V2Body::Error(n, e) => {
            p.v2_error_numbering = *n;
            w.u32(4).u32(e.code(*n).unwrap());
            match *e {
                E2::Vers { low, high } => w.u32(low).u32(high),
                E2::CantReply { processed, segment_index, length_needed } => {
                    w.u32(processed as u32).u32(segment_index).u32(length_needed)
                }
                E2::ReadChunks { max_chunks: x } | E2::WriteChunks { max_chunks: x } => w.u32(x),
                E2::Segments { max_segments } => w.u32(max_segments),
                E2::WriteResource { chunk_index, length_needed } => w.u32(chunk_index).u32(length_needed),
                E2::ReplyResource { length_needed } => w.u32(length_needed),
                _ => &mut w,
            }
        }
        V2Body::Raw(d, t, b) => w.u32(5).u32(d.0).u32(*t).opaque(b),
        V2Body::ReqXch(d, vals) => {
            let mut inner = Words::default();
            inner.u32(vals.len() as u32);
            for (id, b) in vals {
                inner.u32(*id).opaque(b);
            }
            w.u32(5).u32(d.0).u32(xcharext::ROPT_REQXCH).opaque(&inner.0)
        }
        V2Body::UpdXch(d, id, b, c) => {
            let mut inner = Words::default();
            inner.u32(*id).opaque(b).u32(*c as u32);
            w.u32(5).u32(d.0).u32(xcharext::ROPT_UPDXCH).opaque(&inner.0)
        }
    };
    (w.0, p)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn v2_round_trip(xid: u32, credit: u32, body in v2_body(), payload in prop::collection::vec(any::<u8>(), 0..12)) {
        let (header, p) = v2_words(xid, credit, &body);
        let mut msg = header.clone();
        msg.extend_from_slice(&payload);
        let m = v2::Message::decode(&msg, &p).unwrap();
        prop_assert_eq!((m.header.xid, m.header.vers, m.header.credit), (xid, 2, credit));
        prop_assert_eq!(m.payload_offset, header.len());
        prop_assert_eq!(m.payload, &payload[..]);
        let vals: Vec<XcharVal<'_>>;
        match (&body, &m.header.body) {
            (V2Body::Msg(d, l), v2::Body::Msg(c)) | (V2Body::NoMsg(d, l), v2::Body::NoMsg(c)) => {
                prop_assert_eq!(c.direction, Some(*d));
                prop_assert_eq!(&decoded_lists(&c.lists), l);
            }
            (V2Body::Error(n, e), v2::Body::Error(got)) => {
                prop_assert_eq!(got, &ErrorInfo::new(*e, *n).unwrap());
            }
            (V2Body::Raw(d, t, b), v2::Body::Optional(o)) => {
                prop_assert_eq!((o.dir, o.opttype), (Some(*d), *t));
                prop_assert_eq!(o.info, OptInfo::Raw(b));
            }
            (V2Body::ReqXch(d, want), v2::Body::Optional(o)) => {
                prop_assert_eq!(o.dir, Some(*d));
                let OptInfo::Xchar(xcharext::Op::ReqXch(r)) = o.info else { panic!("{:?}", o.info) };
                vals = want.iter().map(|(id, b)| XcharVal::new(*id, b)).collect();
                prop_assert_eq!(r.want, XcharSpec::new(&vals, p.property_ids));
            }
            (V2Body::UpdXch(d, id, b, c), v2::Body::Optional(o)) => {
                prop_assert_eq!(o.dir, Some(*d));
                let OptInfo::Xchar(xcharext::Op::UpdXch(u)) = o.info else { panic!("{:?}", o.info) };
                prop_assert_eq!(u.now, XcharVal::new(*id, b));
                prop_assert_eq!(u.pendclr, *c);
            }
            (want, got) => prop_assert!(false, "body {:?} decoded as {:?}", want, got),
        }
        let mut out = vec![0u8; header.len()];
        prop_assert_eq!(m.header.encode_into(&mut out), Ok(header.len()));
        prop_assert_eq!(&out, &header);
        let _ = v2::check(&m, Role::Call);
        truncations(&msg, header.len(), |b| v2::Message::decode(b, &p).map(|m| format!("{m:?}")));
    }

    #[test]
    fn v2_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256), prefix in v2_body()) {
        let (mut behind, _) = v2_words(1, 1, &prefix);
        behind.truncate(16 + bytes.len() % 8 * 4);
        behind.extend_from_slice(&bytes);
        for input in [&bytes, &behind] {
            for names in [&[][..], &["v2-00"], &["v2-errors-02"], &["v2-errors-04"], &["rtrext-literal", "props-v2-03", "subset-msb"]] {
                let mut p = Profile::default();
                for n in names { prop_assert!(p.apply(n)); }
                match v2::Message::decode(input, &p) {
                    Ok(m) => {
                        prop_assert!(m.payload_offset <= input.len());
                        let _ = v2::check(&m, Role::Call);
                        let _ = v2::check(&m, Role::Reply);
                    }
                    Err(e) => check_err(&e, input.len()),
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// ONC RPC

#[derive(Debug, Clone)]
enum Rpc {
    Call { xid: u32, rpcvers: u32, prog: u32, vers: u32, proc_: u32, cred: (u32, Vec<u8>), verf: (u32, Vec<u8>) },
    Accepted { xid: u32, verf: (u32, Vec<u8>), stat: AcceptStat },
    Denied { xid: u32, why: Rejected },
}

fn auth() -> impl Strategy<Value = (u32, Vec<u8>)> {
    (
        any::<u32>(),
        prop_oneof![4 => prop::collection::vec(any::<u8>(), 0..40), 1 => prop::collection::vec(any::<u8>(), 395..=400)],
    )
}

fn accept_stat() -> impl Strategy<Value = AcceptStat> {
    prop_oneof![
        Just(AcceptStat::Success),
        Just(AcceptStat::ProgUnavail),
        (any::<u32>(), any::<u32>()).prop_map(|(low, high)| AcceptStat::ProgMismatch { low, high }),
        Just(AcceptStat::ProcUnavail),
        Just(AcceptStat::GarbageArgs),
        Just(AcceptStat::SystemErr),
    ]
}

fn rpc() -> impl Strategy<Value = Rpc> {
    prop_oneof![
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), auth(), auth()).prop_map(
            |(xid, rpcvers, prog, vers, proc_, cred, verf)| Rpc::Call { xid, rpcvers, prog, vers, proc_, cred, verf }
        ),
        (any::<u32>(), auth(), accept_stat()).prop_map(|(xid, verf, stat)| Rpc::Accepted { xid, verf, stat }),
        (
            any::<u32>(),
            prop_oneof![
                (any::<u32>(), any::<u32>()).prop_map(|(low, high)| Rejected::RpcMismatch { low, high }),
                any::<u32>().prop_map(|stat| Rejected::AuthError { stat: rpcrdma_codec::rpc::AuthStat(stat) }),
            ]
        )
            .prop_map(|(xid, why)| Rpc::Denied { xid, why }),
    ]
}

/// RFC 5531 9 layout.
fn rpc_words(m: &Rpc) -> Vec<u8> {
    let mut w = Words::default();
    match m {
        Rpc::Call { xid, rpcvers, prog, vers, proc_, cred, verf } => {
            w.u32(*xid).u32(0).u32(*rpcvers).u32(*prog).u32(*vers).u32(*proc_);
            w.u32(cred.0).opaque(&cred.1).u32(verf.0).opaque(&verf.1);
        }
        Rpc::Accepted { xid, verf, stat } => {
            w.u32(*xid).u32(1).u32(0).u32(verf.0).opaque(&verf.1).u32(stat.code().0);
            if let AcceptStat::ProgMismatch { low, high } = stat {
                w.u32(*low).u32(*high);
            }
        }
        Rpc::Denied { xid, why } => {
            w.u32(*xid).u32(1).u32(1);
            match why {
                Rejected::RpcMismatch { low, high } => w.u32(0).u32(*low).u32(*high),
                Rejected::AuthError { stat } => w.u32(1).u32(stat.0),
            };
        }
    }
    w.0
}

fn rpc_header(m: &Rpc) -> RpcHeader<'_> {
    match m {
        Rpc::Call { xid, rpcvers, prog, vers, proc_, cred, verf } => RpcHeader::Call(CallHeader {
            xid: *xid,
            rpcvers: *rpcvers,
            prog: *prog,
            vers: *vers,
            proc_: *proc_,
            cred: OpaqueAuth { flavor: rpcrdma_codec::rpc::AuthFlavor(cred.0), body: &cred.1 },
            verf: OpaqueAuth { flavor: rpcrdma_codec::rpc::AuthFlavor(verf.0), body: &verf.1 },
        }),
        Rpc::Accepted { xid, verf, stat } => RpcHeader::Reply(ReplyHeader {
            xid: *xid,
            body: ReplyBody::Accepted {
                verf: OpaqueAuth { flavor: rpcrdma_codec::rpc::AuthFlavor(verf.0), body: &verf.1 },
                stat: *stat,
            },
        }),
        Rpc::Denied { xid, why } => RpcHeader::Reply(ReplyHeader::denied(*xid, *why)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn rpc_round_trip(m in rpc(), body in prop::collection::vec(any::<u8>(), 0..12)) {
        let want = rpc_words(&m);
        let h = rpc_header(&m);
        let mut out = vec![0u8; want.len()];
        let mut w = Writer::new(&mut out);
        h.encode(&mut w).unwrap();
        prop_assert_eq!(w.written(), &want[..]);
        let mut msg = want.clone();
        msg.extend_from_slice(&body);
        let d = RpcMessage::decode(&msg).unwrap();
        prop_assert_eq!(d.header, h);
        prop_assert_eq!(d.body_offset, want.len());
        prop_assert_eq!(d.body, &body[..]);
        truncations(&msg, want.len(), |b| RpcMessage::decode(b).map(|m| format!("{m:?}")));
    }

    #[test]
    fn rpc_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256), prefix in rpc()) {
        let mut behind = rpc_words(&prefix);
        behind.truncate(bytes.len() % 12 * 4);
        behind.extend_from_slice(&bytes);
        for input in [&bytes, &behind] {
            match RpcMessage::decode(input) {
                Ok(m) => {
                    prop_assert!(m.body_offset <= input.len());
                    if let RpcHeader::Call(c) = m.header {
                        if let Some(Err(e)) = c.cred.auth_sys() { check_err(&e, c.cred.body.len()) }
                    }
                }
                Err(e) => check_err(&e, input.len()),
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// RDMA-CM private data (RFC 8797 5.1: identifier, version, flags, send and receive size codes)

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn private_data_round_trip(reserved in any::<u8>(), r: bool, send: u8, recv: u8, lead in prop::collection::vec(any::<u8>(), 0..9), tail in prop::collection::vec(any::<u8>(), 0..9)) {
        let pd = PrivateData::from_codes(send, recv, r).with_reserved(reserved);
        let want = [0xf6, 0xab, 0x0e, 0x18, 1, (reserved & 0xfe) | r as u8, send, recv];
        prop_assert_eq!(pd.to_bytes(), want);
        let mut msg = want.to_vec();
        msg.extend_from_slice(&tail);
        let d = PrivateData::decode(&msg).unwrap();
        prop_assert_eq!(d, pd);
        prop_assert_eq!(d.send_size(), (send as u32 + 1) * 1024);
        prop_assert_eq!(d.receive_size(), (recv as u32 + 1) * 1024);
        truncations(&msg, 8, |b| PrivateData::decode(b).map(|m| format!("{m:?}")));
        // Behind leading bytes that do not contain the identifier, the search finds it.
        if !lead.windows(4).any(|w| w == [0xf6, 0xab, 0x0e, 0x18]) && !lead.ends_with(&[0xf6]) && !lead.ends_with(&[0xf6, 0xab]) && !lead.ends_with(&[0xf6, 0xab, 0x0e]) {
            let mut buf = lead.clone();
            buf.extend_from_slice(&msg);
            let eff = private_data::effective(&buf, &Profile::default());
            prop_assert_eq!(eff.found_at, Some(lead.len()));
            prop_assert_eq!(eff.params, pd);
        }
    }

    #[test]
    fn private_data_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64), at in 0usize..64) {
        let mut planted = bytes.clone();
        let at = at.min(planted.len());
        planted.splice(at..at, [0xf6, 0xab, 0x0e, 0x18]);
        for input in [&bytes, &planted] {
            for p in [Profile::default(), { let mut p = Profile::default(); p.apply("pd-offset-zero"); p }] {
                if let Err(e) = PrivateData::decode(input) { check_err(&e, input.len()) }
                if let Err(e) = private_data::find(input, &p) { check_err(&e, input.len()) }
                let _ = private_data::effective(input, &p);
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// CCP (RFC 5666 6)

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn ccp_round_trip(xid: u32, credit: u32, a: u32, b: u32, c: u32, refuse in prop_oneof![Just(None), Just(Some(Dispatch::ProgUnavail)), Just(Some(Dispatch::ProgMismatch)), Just(Some(Dispatch::ProcUnavail)), Just(Some(Dispatch::RpcMismatch))]) {
        // Call: RPC call header for 100417/1/1 with AUTH_NONE, then config_rdma_req.
        let mut w = Words::default();
        w.u32(xid).u32(0).u32(2).u32(100_417).u32(1).u32(1).u32(0).u32(0).u32(0).u32(0).u32(a).u32(b).u32(c);
        let want = w.0;
        let call = CcpCall::new(xid, ConfigRdmaReq { maxcall_sendsize: a, maxreply_sendsize: b, maxrdmaread: c });
        let mut out = vec![0u8; want.len()];
        let mut wr = Writer::new(&mut out);
        call.encode(&mut wr).unwrap();
        prop_assert_eq!(wr.written(), &want[..]);
        prop_assert_eq!(call.encoded_len(), want.len());
        prop_assert_eq!(CcpCall::decode(&want), Ok(call));
        truncations(&want, want.len(), |b| CcpCall::decode(b).map(|m| format!("{m:?}")));
        // The whole Send buffer: a chunk-less RDMA_MSG with rdma_xid = xid, then the call.
        let mut buf = vec![0u8; 28 + want.len()];
        prop_assert_eq!(ccp::encode_call_message(&mut buf, credit, &call), Ok(buf.len()));
        let mut hdr = Words::default();
        hdr.u32(xid).u32(1).u32(credit).u32(0).u32(0).u32(0).u32(0);
        prop_assert_eq!(&buf[..28], &hdr.0[..]);
        let (m, got) = ccp::decode_call_message(&buf, &Profile::default()).unwrap();
        prop_assert_eq!((m.payload_offset, got), (28, call));
        truncations(&buf, buf.len(), |b| ccp::decode_call_message(b, &Profile::default()).map(|m| format!("{m:?}")));

        // Reply: SUCCESS with config_rdma_reply, or a refusal with void results.
        let reply = match refuse {
            None => CcpReply::success(xid, ConfigRdmaReply { maxcall_sendsize: a, align: b, maxrdmaread: c }),
            Some(d) => CcpReply::refusal(xid, d),
        };
        let mut w = Words::default();
        w.u32(xid).u32(1);
        match refuse {
            None => { w.u32(0).u32(0).u32(0).u32(0).u32(a).u32(b).u32(c); }
            Some(Dispatch::ProgUnavail) => { w.u32(0).u32(0).u32(0).u32(1); }
            Some(Dispatch::ProgMismatch) => { w.u32(0).u32(0).u32(0).u32(2).u32(1).u32(1); }
            Some(Dispatch::ProcUnavail) => { w.u32(0).u32(0).u32(0).u32(3); }
            Some(Dispatch::RpcMismatch) => { w.u32(1).u32(0).u32(2).u32(2); }
            Some(other) => prop_assert!(false, "{:?}", other),
        }
        let want = w.0;
        let mut out = vec![0u8; want.len()];
        let mut wr = Writer::new(&mut out);
        reply.encode(&mut wr).unwrap();
        prop_assert_eq!(wr.written(), &want[..]);
        prop_assert_eq!(reply.encoded_len(), want.len());
        prop_assert_eq!(CcpReply::decode(&want), Ok(reply));
        truncations(&want, want.len(), |b| CcpReply::decode(b).map(|m| format!("{m:?}")));
        let mut buf = vec![0u8; 28 + want.len()];
        prop_assert_eq!(ccp::encode_reply_message(&mut buf, credit, &reply), Ok(buf.len()));
        prop_assert_eq!(ccp::decode_reply_message(&buf, &Profile::default()).unwrap().1, reply);
    }

    #[test]
    fn ccp_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..128), cut in 0usize..13) {
        // Random bytes behind a valid call prefix and a valid RDMA_MSG header.
        let mut w = Words::default();
        w.u32(1).u32(0).u32(2).u32(100_417).u32(1).u32(1).u32(0).u32(0).u32(0).u32(0);
        let mut behind = w.0;
        behind.truncate(cut * 4);
        behind.extend_from_slice(&bytes);
        let mut framed = vec![0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        framed.extend_from_slice(&behind);
        for input in [&bytes, &behind, &framed] {
            if let Err(e) = CcpCall::decode(input) { check_err(&e, input.len()) }
            if let Err(e) = CcpReply::decode(input) { check_err(&e, input.len()) }
            if let Err(e) = ccp::decode_call_message(input, &Profile::default()) { check_err(&e, input.len()) }
            if let Err(e) = ccp::decode_reply_message(input, &Profile::default()) { check_err(&e, input.len()) }
        }
    }
}

// ------------------------------------------------------------------------------------------
// XDR pad bytes: the one place where decode-then-encode is not the identity (fuzz/roundtrip).

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Found by the roundtrip fuzz target (a harness bug, kept as a case): a ROPT_INITXCH whose
/// third xcharval (id 0xf4, 1 byte of data) has the non-zero pad 00 00 04. Values inside a
/// counted array re-encode from their wire bytes, pads included: byte for byte.
#[test]
fn nonzero_pad_inside_an_xcharspec_round_trips_verbatim() {
    let b = unhex(concat!(
        "00000020000000020000000100000005", // xid, vers 2, credit, RDMA2_OPTIONAL
        "00000000000000010000003000000003", // CALL, ROPT_INITXCH, optinfo 48 bytes, 3 values
        "000000010000000400002000",         // RBSIZ 0x2000
        "000000020000000400000001",         // REQREMINV true
        "000000f40000000100000004",         // id 0xf4, 1 byte (00), pad 00 00 04
        "0000000100000000",                 // nochg: one empty word
        "0300000004000000020000000100000003",
    ));
    let m = v2::Message::decode(&b, &Profile::default()).unwrap();
    assert_eq!(m.payload_offset, 76);
    let mut out = [0u8; 76];
    assert_eq!(m.header.encode_into(&mut out), Ok(76));
    assert_eq!(&out[..], &b[..76]);
}

/// ROPT_UPDXCH's single xcharval and rdma_optinfo itself are re-encoded afresh: non-zero pad
/// bytes in the input (which the decoder accepts) come back as zeros, and nothing else changes.
#[test]
fn nonzero_pads_of_fresh_opaques_come_back_zero() {
    // optinfo: xchv_which, length 1, one data byte and 3 pad bytes, optupdxch_pendclr.
    let b = unhex(concat!(
        "00000001000000020000000100000005",
        "0000000000000004",                 // CALL, ROPT_UPDXCH
        "00000010",                         // optinfo: 16 bytes
        "ffffff0000000001aaeeeeee00000001", // experimental id, 1 byte aa, pad ee ee ee, pendclr
    ));
    let m = v2::Message::decode(&b, &Profile::default()).unwrap();
    let mut out = [0u8; 44];
    assert_eq!(m.header.encode_into(&mut out), Ok(44));
    let mut want = b.clone();
    want[37..40].fill(0);
    assert_eq!(&out[..], &want[..]);
    // A raw (unknown opttype) optinfo of 3 bytes with a non-zero pad byte.
    let b = unhex("0000000100000002000000010000000500000000000000630000000301020377");
    let m = v2::Message::decode(&b, &Profile::default()).unwrap();
    let mut out = [0u8; 32];
    assert_eq!(m.header.encode_into(&mut out), Ok(32));
    assert_eq!(&out[..31], &b[..31]);
    assert_eq!(out[31], 0);
}
