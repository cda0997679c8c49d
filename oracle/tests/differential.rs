//! Differential test: rpcrdma-codec's Version One decoder against the oracle generated from
//! the RFC 8166 XDR, under the RFC 8166 default profile (no default arm in the error union).
//!
//! Agreement means: both accept with equal fields everywhere (fixed fields, body, every
//! segment of every list, and the header length), or both reject. Inputs come from every
//! golden vector (all families: non-v1 bytes must be rejected by both), from proptest-generated
//! valid messages encoded by the oracle's own xdr-codec encoder, and from mutations of those.

use proptest::prelude::*;
use rpcrdma_codec::chunk::ChunkLists;
use rpcrdma_codec::v1::{self, ErrorBody};
use rpcrdma_codec::Profile;
use rpcrdma_oracle::{self as oracle, Body, Header, Lists, ReadSegment, Segment};

/// Our decoding, in the oracle's terms (so the comparison is one `assert_eq!`).
fn ours(buf: &[u8]) -> Option<Header> {
    let m = v1::Message::decode(buf, &Profile::default()).ok()?;
    let lists = |c: &ChunkLists<'_>| Lists {
        reads: c
            .reads
            .segments()
            .map(|r| ReadSegment {
                position: r.position,
                target: Segment { handle: r.target.handle, length: r.target.length, offset: r.target.offset },
            })
            .collect(),
        writes: c
            .writes
            .chunks()
            .map(|w| w.segments().map(|s| Segment { handle: s.handle, length: s.length, offset: s.offset }).collect())
            .collect(),
        reply: c
            .reply
            .map(|w| w.segments().map(|s| Segment { handle: s.handle, length: s.length, offset: s.offset }).collect()),
    };
    let body = match &m.header.body {
        v1::Body::Msg(c) => Body::Msg(lists(c)),
        v1::Body::NoMsg(c) => Body::NoMsg(lists(c)),
        v1::Body::MsgP { align, thresh, chunks } => Body::MsgP { align: *align, thresh: *thresh, lists: lists(chunks) },
        v1::Body::Done => Body::Done,
        v1::Body::Error(ErrorBody::Vers { low, high }) => Body::ErrVers { low: *low, high: *high },
        v1::Body::Error(ErrorBody::Chunk) => Body::ErrChunk,
        v1::Body::Error(e @ ErrorBody::Other { .. }) => panic!("the default profile decoded {e:?}"),
    };
    Some(Header { xid: m.header.xid, vers: m.header.vers, credit: m.header.credit, body, len: m.payload_offset })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Asserts agreement on one input; returns whether it was accepted.
fn agree(buf: &[u8]) -> bool {
    assert!(buf.len() <= oracle::MAX_INPUT, "test input over the oracle's cap");
    let theirs = oracle::decode(buf);
    let ours = ours(buf);
    match (&theirs, &ours) {
        (Ok(t), Some(o)) => {
            assert_eq!(o, t, "field disagreement on {}", hex(buf));
            true
        }
        (Err(_), None) => false,
        _ => panic!("accept/reject disagreement on {}: oracle {theirs:?}, codec {ours:?}", hex(buf)),
    }
}

#[test]
fn every_golden_vector() {
    let (mut n, mut accepted, mut v1_headers) = (0, 0, 0);
    for name in rpcrdma_vectors::embedded_names() {
        let v = rpcrdma_vectors::embedded(name).unwrap();
        if name.starts_with("v1/") {
            v1_headers += 1;
        }
        if agree(&v.bytes) {
            accepted += 1;
        }
        n += 1;
    }
    // The counts are the vector set's (vectors/README.md); a vector set that shrank would
    // make this test prove less.
    assert!(v1_headers >= 90, "only {v1_headers} v1 vectors");
    assert!(accepted >= 60, "only {accepted} of {n} vectors decode");
    eprintln!("{n} vectors, {v1_headers} in v1/, {accepted} accepted by both");
}

// ------------------------------------------------------------------------------------------
// Generated messages

fn segment() -> impl Strategy<Value = Segment> {
    (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(handle, length, offset)| Segment { handle, length, offset })
}

fn lists() -> impl Strategy<Value = Lists> {
    (
        prop::collection::vec(
            (any::<u32>(), segment()).prop_map(|(position, target)| ReadSegment { position, target }),
            0..6,
        ),
        prop::collection::vec(prop::collection::vec(segment(), 0..5), 0..4),
        prop::option::of(prop::collection::vec(segment(), 0..5)),
    )
        .prop_map(|(reads, writes, reply)| Lists { reads, writes, reply })
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        4 => lists().prop_map(Body::Msg),
        3 => lists().prop_map(Body::NoMsg),
        1 => (any::<u32>(), any::<u32>(), lists()).prop_map(|(align, thresh, lists)| Body::MsgP { align, thresh, lists }),
        1 => Just(Body::Done),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(low, high)| Body::ErrVers { low, high }),
        1 => Just(Body::ErrChunk),
    ]
}

fn header() -> impl Strategy<Value = Header> {
    (any::<u32>(), any::<u32>(), body()).prop_map(|(xid, credit, body)| Header { xid, vers: 1, credit, body, len: 0 })
}

/// One mutation of a message, applied at a position chosen proportionally to its length.
#[derive(Debug, Clone)]
enum Mutation {
    /// Overwrite the aligned word at this fraction of the message with a value.
    SetWord(prop::sample::Index, u32),
    /// XOR one byte.
    FlipByte(prop::sample::Index, u8),
    /// Cut the message.
    Truncate(prop::sample::Index),
    /// Insert a word (shifts everything after it).
    InsertWord(prop::sample::Index, u32),
    /// Delete an aligned word.
    DeleteWord(prop::sample::Index),
    /// Append bytes (a payload: both must still agree on where the header ends).
    Append(Vec<u8>),
}

fn interesting_word() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(3),
        Just(4),
        Just(5),
        Just(0x1000_0000),
        Just(0x1000_0001),
        Just(u32::MAX),
        any::<u32>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), interesting_word()).prop_map(|(i, w)| Mutation::SetWord(i, w)),
        2 => (any::<prop::sample::Index>(), 1u8..).prop_map(|(i, x)| Mutation::FlipByte(i, x)),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        1 => (any::<prop::sample::Index>(), interesting_word()).prop_map(|(i, w)| Mutation::InsertWord(i, w)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::DeleteWord),
        1 => prop::collection::vec(any::<u8>(), 1..12).prop_map(Mutation::Append),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let words = b.len() / 4;
    match m {
        Mutation::SetWord(i, w) if words > 0 => {
            let at = i.index(words) * 4;
            b[at..at + 4].copy_from_slice(&w.to_be_bytes());
        }
        Mutation::FlipByte(i, x) if !b.is_empty() => {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        Mutation::Truncate(i) => b.truncate(i.index(b.len() + 1)),
        Mutation::InsertWord(i, w) => {
            let at = i.index(words + 1) * 4;
            b.splice(at..at, w.to_be_bytes());
        }
        Mutation::DeleteWord(i) if words > 0 => {
            let at = i.index(words) * 4;
            b.drain(at..at + 4);
        }
        Mutation::Append(extra) => b.extend_from_slice(extra),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// A valid message, written by the oracle's encoder: both decode it to the generated value.
    #[test]
    fn generated_valid_messages(h in header(), payload in prop::collection::vec(any::<u8>(), 0..16)) {
        let mut b = oracle::encode(&h);
        let len = b.len();
        b.extend_from_slice(&payload);
        prop_assert!(agree(&b), "a valid message was rejected: {}", hex(&b));
        let mut want = h.clone();
        want.len = len;
        prop_assert_eq!(ours(&b).unwrap(), want);
    }
}

/// Mutations of valid messages: both accept with the same fields, or both reject. Run with
/// an explicit runner so the test can also check that both outcomes occur often.
#[test]
fn mutated_messages() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;
    let (accepted, total) = (Cell::new(0usize), Cell::new(0usize));
    let mut runner = TestRunner::new(Config { cases: 6000, failure_persistence: None, ..Config::default() });
    runner
        .run(&(header(), prop::collection::vec(mutation(), 1..4)), |(h, muts)| {
            let mut b = oracle::encode(&h);
            for m in &muts {
                apply(&mut b, m);
            }
            accepted.set(accepted.get() + agree(&b) as usize);
            total.set(total.get() + 1);
            Ok(())
        })
        .unwrap();
    let (a, n) = (accepted.get(), total.get());
    eprintln!("{n} mutated messages: {a} accepted by both, {} rejected by both", n - a);
    assert!(a > n / 10 && n - a > n / 10, "{a} of {n} accepted: the mutations are too mild or too harsh");
}

/// Every single-word substitution of a few values at every position of a message with all
/// three lists: exhaustive where proptest samples.
#[test]
fn every_word_of_a_full_message() {
    let seg = |i: u32| Segment { handle: 0x100 + i, length: 4096 * i, offset: 0x1_0000_0000 * i as u64 };
    let h = Header {
        xid: 0x30,
        vers: 1,
        credit: 32,
        body: Body::Msg(Lists {
            reads: vec![ReadSegment { position: 44, target: seg(1) }, ReadSegment { position: 44, target: seg(2) }],
            writes: vec![vec![seg(3), seg(4)], vec![]],
            reply: Some(vec![seg(5)]),
        }),
        len: 0,
    };
    let base = oracle::encode(&h);
    let (mut n, mut accepted) = (0, 0);
    for at in (0..base.len()).step_by(4) {
        for w in [0u32, 1, 2, 3, 4, 5, 6, 0x7fff_ffff, 0x8000_0000, u32::MAX] {
            let mut b = base.clone();
            b[at..at + 4].copy_from_slice(&w.to_be_bytes());
            accepted += agree(&b) as usize;
            n += 1;
        }
    }
    // Segment fields take any value, so most substitutions there still decode: the comparison
    // covers accepted inputs, not only rejections.
    assert!(accepted > n / 2, "only {accepted} of {n} substitutions decode");
    for cut in 0..base.len() {
        assert!(!agree(&base[..cut]), "a truncated message was accepted");
        n += 1;
    }
    assert!(n > 300);
}
