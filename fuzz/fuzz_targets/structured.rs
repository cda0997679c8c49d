//! Structured fuzzing: an arbitrary description of a Version One header (any body, arbitrary
//! read list, write list and reply chunk, a payload) is built with the codec's HeaderBuilder
//! (which writes the lists with ChunkWriter), decoded, and every field of the decoding must
//! equal the description; the decoded header must re-encode to the built bytes.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::v1::{Body, ErrorBody, HeaderBuilder, Message, Proc};
use rpcrdma_codec::Profile;

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Seg {
    handle: u32,
    length: u32,
    offset: u64,
}

impl Seg {
    fn seg(self) -> Segment {
        Segment::new(self.handle, self.length, self.offset)
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Kind {
    Msg,
    NoMsg,
    MsgP { align: u32, thresh: u32 },
    Done,
    ErrVers { low: u32, high: u32 },
    ErrChunk,
}

#[derive(Arbitrary, Debug)]
struct Desc {
    xid: u32,
    credit: u32,
    kind: Kind,
    reads: Vec<(u32, Seg)>,
    writes: Vec<Vec<Seg>>,
    reply: Option<Vec<Seg>>,
    payload: Vec<u8>,
}

fuzz_target!(|d: Desc| {
    let reads: Vec<ReadSegment> =
        d.reads.iter().map(|(pos, s)| ReadSegment::new(*pos, s.handle, s.length, s.offset)).collect();
    let write_segs: Vec<Vec<Segment>> = d.writes.iter().map(|c| c.iter().map(|s| s.seg()).collect()).collect();
    let writes: Vec<&[Segment]> = write_segs.iter().map(|c| c.as_slice()).collect();
    let reply: Option<Vec<Segment>> = d.reply.as_ref().map(|c| c.iter().map(|s| s.seg()).collect());

    let mut b = match d.kind {
        Kind::Msg => HeaderBuilder::msg(d.xid, d.credit),
        Kind::NoMsg => HeaderBuilder::nomsg(d.xid, d.credit),
        Kind::MsgP { align, thresh } => HeaderBuilder::msgp(d.xid, d.credit, align, thresh),
        Kind::Done => HeaderBuilder::done(d.xid, d.credit),
        Kind::ErrVers { low, high } => HeaderBuilder::err_vers(d.xid, 1, d.credit, low, high),
        Kind::ErrChunk => HeaderBuilder::err_chunk(d.xid, d.credit),
    };
    b = b.read_list(&reads).write_list(&writes);
    if let Some(r) = &reply {
        b = b.reply_chunk(r);
    }
    // Independent size: 16 fixed bytes, then per body (RFC 8166 4.7's word counts).
    let lists_len = 4
        + 24 * reads.len()
        + 4
        + writes.iter().map(|c| 8 + 16 * c.len()).sum::<usize>()
        + 4
        + reply.as_ref().map_or(0, |r| 4 + 16 * r.len());
    let want_len = 16
        + match d.kind {
            Kind::Msg | Kind::NoMsg => lists_len,
            Kind::MsgP { .. } => 8 + lists_len,
            Kind::Done => 0,
            Kind::ErrVers { .. } => 12,
            Kind::ErrChunk => 4,
        };
    assert_eq!(b.encoded_len(), want_len);
    let mut buf = vec![0u8; want_len + d.payload.len()];
    let n = b.encode(&mut buf).expect("sized exactly");
    assert_eq!(n, want_len);
    buf[n..].copy_from_slice(&d.payload);

    let m = Message::decode(&buf, &Profile::default()).expect("a built header decodes");
    assert_eq!(m.header.xid, d.xid);
    assert_eq!(m.header.vers, 1);
    assert_eq!(m.header.credit, d.credit);
    assert_eq!(m.payload_offset, n);
    assert_eq!(m.payload, &d.payload[..]);
    assert_eq!(m.header.encoded_len(), n);
    let want_proc = match d.kind {
        Kind::Msg => Proc::RDMA_MSG,
        Kind::NoMsg => Proc::RDMA_NOMSG,
        Kind::MsgP { .. } => Proc::RDMA_MSGP,
        Kind::Done => Proc::RDMA_DONE,
        Kind::ErrVers { .. } | Kind::ErrChunk => Proc::RDMA_ERROR,
    };
    assert_eq!(m.header.body.proc_(), want_proc);
    match (d.kind, &m.header.body) {
        (Kind::MsgP { align, thresh }, Body::MsgP { align: a, thresh: t, .. }) => {
            assert_eq!((align, thresh), (*a, *t));
        }
        (Kind::ErrVers { low, high }, Body::Error(e)) => assert_eq!(*e, ErrorBody::Vers { low, high }),
        (Kind::ErrChunk, Body::Error(e)) => assert_eq!(*e, ErrorBody::Chunk),
        _ => {}
    }
    if let Some(c) = m.header.body.chunks() {
        assert_eq!(c.reads.segments().collect::<Vec<_>>(), reads);
        let got_writes: Vec<Vec<Segment>> = c.writes.chunks().map(|w| w.segments().collect()).collect();
        assert_eq!(got_writes, write_segs);
        let got_reply: Option<Vec<Segment>> = c.reply.map(|r| r.segments().collect());
        assert_eq!(got_reply, reply);
    } else {
        assert!(matches!(d.kind, Kind::Done | Kind::ErrVers { .. } | Kind::ErrChunk));
    }
    let mut again = vec![0u8; n];
    assert_eq!(m.header.encode_into(&mut again), Ok(n));
    assert_eq!(&again[..], &buf[..n]);
});
