//! What Wireshark cannot do with our captures, why (in the source of Wireshark 4.0.17, the
//! version these lists were written against: `epan/dissectors/packet-rpcrdma.c` unless another
//! file is named), and the proof that the dissector, not our frames, is at fault: the same
//! conversation with the one feature the dissector trips on taken out reassembles cleanly.

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::v1::{self, Body, HeaderBuilder};
use rpcrdma_codec::Profile;
use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::ctx::{TranscriptEntry, Wire};
use rpcrdma_conformance::engine::{run_check, RunOptions};

use crate::captures::{replies_matched, tshark_rows};
use crate::runs::reference;

/// Checks that send malformed headers on purpose: Wireshark must flag exactly these (and
/// [`WIRESHARK_CANNOT_REASSEMBLE`]).
pub const MALFORMED_ON_PURPOSE: &[&str] = &[
    "rfc8166/3.4.5/position-beyond-payload",
    "rfc8166/3.4.5/position-unaligned",
    "rfc8166/4.5.2/huge-segment-count",
    "rfc8166/4.5.2/not-bool-discriminator",
    // A read chunk whose length disagrees with the WRITE's encoded count: the reassembled
    // call is inconsistent on purpose.
    "rfc8166/4.5.2/read-chunk-length-mismatch",
    "v2-01/4.2.3/bad-header-truncated",
    // A reverse-direction reply cut after its msg_type, on purpose (RFC 8167 5.2).
    "rfc8167/5.2/hostile-reverse-replies",
];

/// Checks that send replies answering no call on purpose: Wireshark must leave exactly these
/// unmatched (besides [`WIRESHARK_CANNOT_MATCH`]).
pub const UNMATCHED_ON_PURPOSE: &[(&str, &str)] = &[(
    "rfc8167/5.2/hostile-reverse-replies",
    "the check answers the server's reverse-direction call with a reply whose XID matches no call \
     and with one whose rdma_xid and RPC XID differ, on purpose",
)];

/// Two segments of one chunk in one registered region (the same R_key, different offsets):
/// the dissector keeps one segment per R_key.
const SHARED_HANDLE: &str = "two segments of the chunk share an R_key (one region, two offsets): \
    Wireshark keeps its segments in a tree keyed by the handle alone (rdma_conv_info_t's \
    segment_list, filled by process_rdma_list(); wmem_tree_insert32() in \
    wsutil/wmem/wmem_tree.c replaces the value of an existing key), so the later segment replaces \
    the earlier one; find_segment_info() then finds no segment for the earlier one's RDMA Write \
    (its offset is outside the later segment), which add_ib_fragment() never adds, and the \
    reply sets the segment up afresh under a new message ID (process_rdma_list()) that no RDMA \
    Write used";

/// The RFC 8267 6.4 checks: NFSv4.1 COMPOUND replies whose READ results went into write chunks
/// (one or two, the second empty or unused in some): as for
/// `rfc8166/4.3.2.2/subsequent-item-next-chunk`, Wireshark places write chunk data only when
/// the upper layer reports as many DDP-eligible items as the reply has write chunks
/// (process_rdma_list()), and dissects the reduced COMPOUND reply as if whole (malformed at the first READ's
/// missing data); that its NFSv4 READ decoding reports none is inferred from the captures.
const NFS4_READ_IN_WRITE_CHUNK: &str = "an NFSv4.1 COMPOUND reply whose READ results went into \
    write chunks: Wireshark places write chunk data only when the upper layer reports as many \
    DDP-eligible items as the reply has write chunks (process_rdma_list()) and dissects the \
    reduced reply as if whole, malformed at the missing READ data (inferred from the captures, as for \
    rfc8166/4.3.2.2/subsequent-item-next-chunk)";

/// The RFC 8267 6.4.2 WRITE checks: their data Read chunk is many segments of one registered
/// region (one R_key, consecutive offsets).
const NFS4_WRITE_SEGMENTS_SHARE_HANDLE: &str = "an NFSv4.1 WRITE whose data Read chunk is 16 or \
    32 segments of one region (one R_key at consecutive offsets): no call is reassembled from \
    the RDMA Read responses and the COMPOUND reply matches no call; inferred from the captures \
    to be SHARED_HANDLE's segment tree keyed by the handle alone (each segment replacing the \
    one before), not traced in the dissector";

/// The RFC 8267 6.4.2 COMPOUND of a WRITE and a READ: its WRITE's data Read chunk is sixteen
/// segments of one region, its READ result goes into a write chunk.
const NFS4_WRITE_AND_READ_CHUNKS: &str = "an NFSv4.1 COMPOUND whose WRITE's data Read chunk is 16 \
    segments of one region (one R_key at consecutive offsets) and whose READ result went into a \
    write chunk of 16 segments of another: no call is reassembled from the RDMA Read responses \
    and the reply matches no call, as for the 6.4.2 WRITE checks (inferred from the captures to \
    be SHARED_HANDLE's segment tree keyed by the handle alone), and the reduced READ result is \
    not placed either (as for the 6.4.1 checks' READ results in write chunks)";

/// Well-formed conversations Wireshark cannot put back together, and why.
pub const WIRESHARK_CANNOT_REASSEMBLE: &[(&str, &str)] = &[
    (
        "rfc8166/3.5.3/position-zero-with-data-chunk",
        "a Position-Zero Read chunk together with a data read chunk: Wireshark bases each \
         segment's fragment numbers on the length of the earlier segments of its own chunk \
         (p_rdma_chunk->length is reset for every chunk and becomes the segment's msgno, both in \
         process_rdma_list()), so the first READ response of every read chunk is fragment 1 \
         (add_ib_fragment()); the data chunk's response overlaps the call's \
         (fragment_defragment_and_free() in epan/reassemble.c keeps the first) and the reassembled WRITE call lacks its data",
    ),
    ("rfc8166/3.4.6/write-segments-copied", SHARED_HANDLE),
    ("rfc8166/3.4.6/reply-chunk-segments", SHARED_HANDLE),
    (
        "rfc8166/4.3.2.2/several-write-chunks",
        "the reply returns an unused write chunk after the one it filled (as RFC 8166 4.3.2.2 \
         requires): Wireshark places write chunk data only when the upper layer reports as many \
         DDP-eligible items (dissect_nfsdata_reduced() in packet-nfs.c) as the reply has write \
         chunks (process_rdma_list()); with two chunks and one NFS READ data item it adds none \
         of the reply to the reassembly (process_rdma_list()) and dissects the reduced reply as \
         if whole (dissect_rpcrdma())",
    ),
    (
        "rfc8166/4.3.2.2/subsequent-item-next-chunk",
        "an NFSv4 COMPOUND reply with two READ results, each in a write chunk of its own: the \
         capture holds both RDMA Writes, but Wireshark shows them as plain RDMA Writes and \
         dissects the reduced COMPOUND reply as if whole (malformed at the first READ's missing \
         data). Write chunk data is placed only when the upper layer reports as many DDP-eligible \
         items as the reply has write chunks (process_rdma_list()); that its NFSv4 READ decoding reports \
         none is inferred from the capture, not traced in packet-nfs.c",
    ),
    ("rfc8267/6.4.1/first-read-first-chunk", NFS4_READ_IN_WRITE_CHUNK),
    ("rfc8267/6.4.1/empty-chunk-read-inline", NFS4_READ_IN_WRITE_CHUNK),
    ("rfc8267/6.4.1/failed-read-empty-chunk", NFS4_READ_IN_WRITE_CHUNK),
    ("rfc8267/6.4.1/surplus-reads-inline", NFS4_READ_IN_WRITE_CHUNK),
    ("rfc8267/6.4.2/sixteen-segment-write-chunk", NFS4_READ_IN_WRITE_CHUNK),
    ("rfc8267/6.4.2/sixteen-segment-read-chunks", NFS4_WRITE_SEGMENTS_SHARE_HANDLE),
    ("rfc8267/6.4.2/excess-chunk-lists-answered", NFS4_WRITE_SEGMENTS_SHARE_HANDLE),
    ("rfc8267/6.4.2/sixteen-segment-read-and-write-chunks", NFS4_WRITE_AND_READ_CHUNKS),
    (
        "v2-01/5.3/nomsg-call-same-version",
        "Wireshark 4.0's rpcordma dissector decodes Version One only (it gives up on any other \
         rdma_vers in dissect_rpcrdma()), so an RDMA2_NOMSG's position-zero chunk is never reassembled",
    ),
];

/// Checks whose replies Wireshark cannot match to their calls, and why.
const NO_CCP_DISSECTOR: &str = "the call is to the Connection Configuration Protocol (program 100417, \
    RFC 5666 6), which Wireshark has no dissector for: it shows the call as RPC continuation data, so \
    the reply has no call to match";

/// Client checks (IDs or groups) whose conversations Wireshark shows malformed: left out of the serve capture
/// test (and of `.ci/run`'s `serve --self-test --pcap`), and proven malformed on their own.
pub const SERVE_MALFORMED: &[(&str, &str)] = &[
    ("rfc8166/4.5/requester-discards-longer-write-chunk", MISUSED_ON_PURPOSE),
    ("rfc8166/4.5/requester-discards-extra-write-chunk", MISUSED_ON_PURPOSE),
    ("rfc8166/4.5/requester-discards-unoffered-reply-chunk", MISUSED_ON_PURPOSE),
    ("v2", VERSION_TWO),
];
const MISUSED_ON_PURPOSE: &str = "the scenario's reply returns chunks the call did not offer, on purpose";
const VERSION_TWO: &str = "the group of Version Two checks: the reference requester speaks \
    Version Two there, and Wireshark 4.0's rpcordma dissector decodes Version One only";

pub const WIRESHARK_CANNOT_MATCH: &[(&str, &str)] = &[
    ("rfc5666/6.2/conf-rdma", NO_CCP_DISSECTOR),
    ("rfc5666/6.2/maxrdmaread-zero", NO_CCP_DISSECTOR),
    ("rfc8267/6.4.2/sixteen-segment-read-chunks", NFS4_WRITE_SEGMENTS_SHARE_HANDLE),
    ("rfc8267/6.4.2/excess-chunk-lists-answered", NFS4_WRITE_SEGMENTS_SHARE_HANDLE),
    ("rfc8267/6.4.2/sixteen-segment-read-and-write-chunks", NFS4_WRITE_AND_READ_CHUNKS),
];

/// Every RPC-over-RDMA Version One message of `t` with its chunk lists passed through
/// `f(reads, writes, reply)`, and every RDMA operation's R_key through `key(handle, offset)`.
fn rewrite(
    t: &[TranscriptEntry],
    f: impl Fn(&mut Vec<ReadSegment>, &mut Vec<Vec<Segment>>, &mut Option<Vec<Segment>>),
    key: impl Fn(u32, u64) -> u32,
) -> Vec<TranscriptEntry> {
    let mut out = t.to_vec();
    for e in &mut out {
        if let Wire::Rdma(o) = &mut e.wire {
            o.handle = key(o.handle, o.offset);
            continue;
        }
        let Ok(m) = v1::Message::decode(&e.bytes, &Profile::default()) else { continue };
        let (b, c) = match &m.header.body {
            Body::Msg(c) => (HeaderBuilder::msg(m.header.xid, m.header.credit), c),
            Body::NoMsg(c) => (HeaderBuilder::nomsg(m.header.xid, m.header.credit), c),
            _ => continue,
        };
        let mut reads: Vec<ReadSegment> = c.reads.segments().collect();
        let mut writes: Vec<Vec<Segment>> = c.writes.chunks().map(|w| w.segments().collect()).collect();
        let mut reply: Option<Vec<Segment>> = c.reply.map(|r| r.segments().collect());
        f(&mut reads, &mut writes, &mut reply);
        let lists: Vec<&[Segment]> = writes.iter().map(Vec::as_slice).collect();
        let mut b = b.read_list(&reads).write_list(&lists);
        if let Some(r) = &reply {
            b = b.reply_chunk(r);
        }
        let mut bytes = vec![0; b.encoded_len()];
        b.encode(&mut bytes).unwrap();
        bytes.extend_from_slice(m.payload);
        e.bytes = bytes;
    }
    out
}

/// A handle of its own for each segment: the R_key mixed with the segment's offset.
fn own_handle(handle: u32, offset: u64) -> u32 {
    handle ^ (offset as u32).rotate_left(16) ^ (offset >> 32) as u32
}

/// The conversation of `id` against the reference responder, over the emulated fabric.
fn transcript(id: &str) -> Vec<TranscriptEntry> {
    let check = catalogue::all().into_iter().find(|c| c.info.id == id).unwrap_or_else(|| panic!("{id}"));
    let r = run_check(check, &mut reference(), &RunOptions::default());
    assert!(!r.transcript.is_empty(), "{id} ran");
    r.transcript
}

/// The chunks (each a list of segments) the messages of a transcript carry.
fn chunks(t: &[TranscriptEntry]) -> Vec<Vec<Segment>> {
    let mut out = Vec::new();
    for e in t {
        let Ok(m) = v1::Message::decode(&e.bytes, &Profile::default()) else { continue };
        if let Some(c) = m.header.body.chunks() {
            out.extend(c.writes.chunks().map(|w| w.segments().collect::<Vec<_>>()));
            out.extend(c.reply.map(|r| r.segments().collect::<Vec<_>>()));
        }
    }
    out
}

/// Problems with Wireshark's reading of a transcript that should reassemble cleanly.
fn reassembles(label: &str, t: &[TranscriptEntry]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.pcap", label.replace('/', "_")));
    std::fs::write(&path, rpcrdma_harness::report::pcap::capture(t, 1_700_000_000)).unwrap();
    let rows = tshark_rows(&path);
    let _ = std::fs::remove_dir_all(&dir);
    let mut problems: Vec<String> = replies_matched(&rows).1;
    if rows.iter().any(|r| !r["_ws.malformed"].is_empty()) {
        problems.push("malformed frames".into());
    }
    if !rows.iter().any(|r| !r["rpcordma.reassembled.length"].is_empty()) {
        problems.push("no message reassembled".into());
    }
    problems.into_iter().map(|p| format!("{label}: {p}")).collect()
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn the_listed_limits_are_the_dissectors() {
    let mut problems = Vec::new();

    // Shared R_keys: the very same conversations, each segment given a handle of its own
    // (in the call, the reply and the RDMA Writes alike), reassemble.
    for id in ["rfc8166/3.4.6/write-segments-copied", "rfc8166/3.4.6/reply-chunk-segments"] {
        let t = transcript(id);
        let shared =
            chunks(&t).iter().any(|c| c.iter().enumerate().any(|(i, s)| c[..i].iter().any(|p| p.handle == s.handle)));
        assert!(shared, "{id}: no chunk has two segments with one R_key, so the listed cause does not apply");
        let starts: Vec<(u32, u64)> = chunks(&t).iter().flatten().map(|s| (s.handle, s.offset)).collect();
        for e in &t {
            if let Wire::Rdma(o) = &e.wire {
                assert!(starts.contains(&(o.handle, o.offset)), "{id}: an RDMA Write not at a segment's start");
            }
        }
        let own = |s: &mut Segment| s.handle = own_handle(s.handle, s.offset);
        let distinct = rewrite(
            &t,
            |reads, writes, reply| {
                reads.iter_mut().for_each(|r| own(&mut r.target));
                writes.iter_mut().flatten().chain(reply.iter_mut().flatten()).for_each(own);
            },
            own_handle,
        );
        problems.extend(reassembles(&format!("{id} with a handle per segment"), &distinct));
    }

    // The unused write chunk: the same reply without it reassembles.
    let id = "rfc8166/4.3.2.2/several-write-chunks";
    let t = transcript(id);
    let unused = |c: &Vec<Segment>| !c.is_empty() && c.iter().all(|s| s.length == 0);
    assert!(chunks(&t).iter().any(unused), "{id}: no unused write chunk returned, so the listed cause does not apply");
    let trimmed = rewrite(&t, |_, writes, _| writes.retain(|c| !unused(c)), |h, _| h);
    problems.extend(reassembles(&format!("{id} without the unused chunk"), &trimmed));

    // Position zero with a data chunk: the data chunk's READ response overlaps the call's.
    let id = "rfc8166/3.5.3/position-zero-with-data-chunk";
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-pzrc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pzrc.pcap");
    std::fs::write(&path, rpcrdma_harness::report::pcap::capture(&transcript(id), 1_700_000_000)).unwrap();
    let rows = tshark_rows(&path);
    let _ = std::fs::remove_dir_all(&dir);
    if !rows.iter().any(|r| !r["rpcordma.fragment.overlap.conflicts"].is_empty()) {
        problems.push(format!("{id}: no conflicting overlap of RPCoRDMA fragments, the listed cause"));
    }

    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
