//! The `serve` scenarios that return a READ's write chunk misused in its reply (RFC 8166 4.5:
//! errors in the header of a reply, which the requester MUST silently discard): a segment
//! longer than offered, the chunk twice, or its segments as a reply chunk never offered.

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::v1::{Body, HeaderBuilder, Message};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use super::Scenario;

/// How much longer than offered `reply-longer-write-chunk` returns the first segment.
pub const LONGER_BY: u32 = 4096;

/// `reply` (an RDMA_MSG returning one write chunk) with the write chunk misused as `scenario`
/// says; None when the reply returns no write chunk.
pub(super) fn rewrite(scenario: Scenario, reply: &[u8], profile: &Profile) -> Option<Vec<u8>> {
    let m = Message::decode(reply, profile).ok()?;
    let Body::Msg(chunks) = m.header.body else { return None };
    let first: Vec<Segment> = chunks.writes.chunks().next()?.segments().collect();
    let mut longer = first.clone();
    longer[0].length = longer[0].length.saturating_add(LONGER_BY);
    let (list, reply_chunk): (Vec<&[Segment]>, Option<&[Segment]>) = match scenario {
        Scenario::ReplyLongerWriteChunk => (vec![&longer], None),
        Scenario::ReplyExtraWriteChunk => (vec![&first, &first], None),
        Scenario::ReplyUnofferedReplyChunk => (vec![&first], Some(&first)),
        _ => return None,
    };
    let mut b = HeaderBuilder::msg(m.header.xid, m.header.credit).write_list(&list);
    if let Some(r) = reply_chunk {
        b = b.reply_chunk(r);
    }
    let mut out = b.encode_to_vec();
    out.extend_from_slice(m.payload);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_misuse_changes_only_the_chunk_lists() {
        let seg = Segment::new(7, 5, 0x1000);
        let list: [&[Segment]; 1] = [&[seg]];
        let mut reply = HeaderBuilder::msg(9, 8).write_list(&list).encode_to_vec();
        reply.extend_from_slice(&[1, 2, 3, 4]);
        for s in [Scenario::ReplyLongerWriteChunk, Scenario::ReplyExtraWriteChunk, Scenario::ReplyUnofferedReplyChunk] {
            let b = rewrite(s, &reply, &Profile::default()).unwrap();
            let m = Message::decode(&b, &Profile::default()).unwrap();
            let Body::Msg(c) = m.header.body else { panic!("{}", s.name()) };
            let first: Vec<Segment> = c.writes.chunks().next().unwrap().segments().collect();
            assert_eq!((m.header.xid, m.payload), (9, &[1, 2, 3, 4][..]), "{}", s.name());
            match s {
                Scenario::ReplyLongerWriteChunk => assert_eq!(first[0].length, 5 + LONGER_BY),
                Scenario::ReplyExtraWriteChunk => assert_eq!(c.writes.len(), 2),
                _ => assert_eq!(c.reply.map(|r| r.segments().collect::<Vec<_>>()), Some(vec![seg])),
            }
        }
        let none = HeaderBuilder::msg(9, 8).encode_to_vec();
        assert_eq!(rewrite(Scenario::ReplyExtraWriteChunk, &none, &Profile::default()), None);
    }
}
