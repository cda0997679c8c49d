//! Differential oracle 2: Wireshark's RPC-over-RDMA dissector against our decoder.
//!
//! Every Version One golden vector (and every Version Two header vector) is written as a
//! RoCEv2 frame (Ethernet / IPv4 / UDP 4791 / InfiniBand BTH SEND_ONLY / payload / ICRC, by
//! `rpcrdma_harness::report::pcap::capture`) into one pcap, followed by a few thousand
//! generated messages; `tshark -T fields` exports what Wireshark decoded, and each frame is
//! compared with our decoding, field by field: xid, version, credit, message type, read
//! segment, write chunk and reply chunk counts, every segment's position, handle, length and
//! offset, MSGP align and threshold, errcode, vers_low, vers_high, and whether Wireshark marked
//! the frame malformed.
//!
//! Wireshark "accepts" a frame when it dissected it as RPC-over-RDMA (an rpcordma.xid is
//! present) and did not mark it malformed; we accept when our decoder returns Ok. Where
//! Wireshark cannot decode a form, the vector is listed in [`WIRESHARK_CANNOT`] with the
//! reason, and the test checks that the listed vector really does disagree (so the list cannot
//! go stale). Version Two frames are not decoded by Wireshark at all (its heuristic requires
//! rdma_vers = 1); the test checks that it shows nothing for each of them.
//!
//! The captures of whole runs are checked too (`wireshark_reads_whole_runs`): every check of
//! the catalogue against the reference responder, over the emulated fabric and over a
//! transport that, like verbs, cannot see the peer's one-sided operations (the capture then
//! shows reconstructed RDMA Reads and Writes), and the conversation `serve --self-test`
//! observed. tshark must match every reply to its call, show the RDMA-CM private data, the
//! RDMA Read and Write frames with the lengths moved, the R_key of each Send With Invalidate,
//! and chunk data reassembled into its message; only the checks that are malformed on purpose
//! (and the listed Wireshark limitations) may show malformed frames.
//!
//! Needs tshark (Wireshark 4.0 was used to write the exception lists):
//! `cargo test -p rpcrdma-harness --test tshark_oracle -- --ignored`.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::v1::{self, Body, ErrorBody, HeaderBuilder};
use rpcrdma_codec::Profile;
use rpcrdma_conformance::engine::ctx::{Direction, TranscriptEntry};
use rpcrdma_harness::report::pcap::capture_with_mtu;

/// v1 vectors where Wireshark and the RFC 8166 decoder disagree, and why.
const WIRESHARK_CANNOT: &[(&str, &str)] = &[
    ("v1/msg-call-no-payload", "RDMA_MSG with no RPC payload: Wireshark's heuristic needs an RPC xid after the header to claim the frame"),
    ("v1/trunc-96-header-only", "RDMA_MSG with no RPC payload (the msg-call-all-lists header alone): Wireshark's heuristic needs an RPC xid after the header to claim the frame"),
    ("v1/msg-call-xid-mismatch", "rdma_xid differs from the RPC xid: Wireshark's heuristic requires them equal and does not claim the frame"),
    ("v1/msg-call-read-position-beyond-payload", "Wireshark splices read chunks into the payload at their positions and marks the frame malformed when a position lies beyond the payload; the header itself is valid XDR (the position rule is a semantic check)"),
    ("v1/rfc8166-unknown-code-0", "Wireshark shows any rdma_err value; RFC 8166's error union has no default arm, so rdma_err 0 is an XDR error"),
    ("v1/rfc8166-unknown-code-3", "Wireshark shows any rdma_err value; RFC 8166's error union has no default arm, so rdma_err 3 is an XDR error"),
    ("v1/rfc5666-unknown-code-no-extra", "Wireshark reads no rdma_extra[8] after an unknown rdma_err; under RFC 5666 the 32 bytes are required"),
    ("v1/rfc5666-unknown-code-short", "Wireshark reads no rdma_extra[8] after an unknown rdma_err; under RFC 5666 the 32 bytes are required"),
];

const FIELDS: &[&str] = &[
    "frame.number",
    "rpcordma.xid",
    "rpcordma.version",
    "rpcordma.flow_control",
    "rpcordma.msg_type",
    "rpcordma.reads_count",
    "rpcordma.writes_count",
    "rpcordma.reply_count",
    "rpcordma.segment_count",
    "rpcordma.position",
    "rpcordma.rdma_handle",
    "rpcordma.rdma_length",
    "rpcordma.rdma_offset",
    "rpcordma.rdma_align",
    "rpcordma.rdma_thresh",
    "rpcordma.errcode",
    "rpcordma.vers_low",
    "rpcordma.vers_high",
    "_ws.malformed",
];

/// What one side says about a frame: accepted with these fields, or rejected.
type Fields = BTreeMap<&'static str, Vec<u64>>;

fn number(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("hex {s}")),
        None => s.parse().unwrap_or_else(|_| panic!("number {s}")),
    }
}

/// Runs tshark over `pcap`; one row per frame: Some(fields) when Wireshark accepted it.
fn tshark(pcap: &[u8], frames: usize) -> Vec<Option<Fields>> {
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("oracle.pcap");
    std::fs::write(&path, pcap).unwrap();
    if let Ok(keep) = std::env::var("TSHARK_ORACLE_KEEP") {
        std::fs::write(keep, pcap).unwrap();
    }
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&path).args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=/t"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs (install it: apt-get install -y tshark)");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Option<Fields>> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), FIELDS.len(), "row {i}: {line}");
            assert_eq!(number(cols[0]), i as u64 + 1, "frames out of order");
            if cols[1].is_empty() || !cols[FIELDS.len() - 1].is_empty() {
                return None;
            }
            let mut f = Fields::new();
            for (name, col) in FIELDS.iter().zip(&cols).skip(1).take(FIELDS.len() - 2) {
                f.insert(name, if col.is_empty() { vec![] } else { col.split(',').map(number).collect() });
            }
            Some(f)
        })
        .collect();
    assert_eq!(rows.len(), frames, "tshark printed {} rows for {frames} frames", rows.len());
    rows
}

/// Our decoding in Wireshark's terms; None when we reject the message.
fn ours(bytes: &[u8], profile: &Profile) -> Option<Fields> {
    let m = v1::Message::decode(bytes, profile).ok()?;
    let h = &m.header;
    let mut f = Fields::new();
    let mut put = |k: &'static str, v: Vec<u64>| {
        f.insert(k, v);
    };
    put("rpcordma.xid", vec![h.xid as u64]);
    put("rpcordma.version", vec![h.vers as u64]);
    put("rpcordma.flow_control", vec![h.credit as u64]);
    put("rpcordma.msg_type", vec![h.body.proc_().0 as u64]);
    let (mut counts, mut positions, mut handles, mut lengths, mut offsets) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut reads, mut writes, mut reply) = (vec![], vec![], vec![]);
    if let Some(c) = h.body.chunks() {
        reads.push(c.reads.len() as u64);
        writes.push(c.writes.len() as u64);
        reply.push(c.reply.is_some() as u64);
        let mut seg = |s: Segment| {
            handles.push(s.handle as u64);
            lengths.push(s.length as u64);
            offsets.push(s.offset);
        };
        for r in c.reads.segments() {
            positions.push(r.position as u64);
            seg(r.target);
        }
        for w in c.writes.chunks() {
            counts.push(w.segment_count() as u64);
            w.segments().for_each(&mut seg);
        }
        if let Some(r) = c.reply {
            counts.push(r.segment_count() as u64);
            r.segments().for_each(&mut seg);
        }
    }
    put("rpcordma.reads_count", reads);
    put("rpcordma.writes_count", writes);
    put("rpcordma.reply_count", reply);
    put("rpcordma.segment_count", counts);
    put("rpcordma.position", positions);
    put("rpcordma.rdma_handle", handles);
    put("rpcordma.rdma_length", lengths);
    put("rpcordma.rdma_offset", offsets);
    let (align, thresh) = match h.body {
        Body::MsgP { align, thresh, .. } => (vec![align as u64], vec![thresh as u64]),
        _ => (vec![], vec![]),
    };
    put("rpcordma.rdma_align", align);
    put("rpcordma.rdma_thresh", thresh);
    let (code, low, high) = match h.body {
        Body::Error(ErrorBody::Vers { low, high }) => (vec![1], vec![low as u64], vec![high as u64]),
        Body::Error(e) => (vec![e.code().0 as u64], vec![], vec![]),
        _ => (vec![], vec![], vec![]),
    };
    put("rpcordma.errcode", code);
    put("rpcordma.vers_low", low);
    put("rpcordma.vers_high", high);
    Some(f)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

// ------------------------------------------------------------------------------------------
// Generated messages

/// xorshift64*: deterministic, so a failure names a reproducible frame.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn seg(&mut self) -> Segment {
        Segment::new(self.u32(), self.u32(), self.next())
    }
}

/// A valid Version One message that Wireshark's heuristic can claim: RDMA_MSG and RDMA_MSGP
/// carry an RPC call or reply whose xid equals rdma_xid; read positions stay inside the
/// payload (see WIRESHARK_CANNOT). Returns the message and the transport header's length.
fn generated(rng: &mut Rng) -> (Vec<u8>, usize) {
    let xid = rng.u32();
    let credit = rng.u32();
    let kind = rng.below(10);
    // An RPC NULL call or an accepted SUCCESS reply, AUTH_NONE, then some argument words.
    let mut payload: Vec<u8> = if rng.below(2) == 0 {
        [xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0].iter().flat_map(|w| w.to_be_bytes()).collect()
    } else {
        [xid, 1, 0, 0, 0, 0].iter().flat_map(|w| w.to_be_bytes()).collect()
    };
    for _ in 0..rng.below(8) {
        payload.extend_from_slice(&rng.u32().to_be_bytes());
    }
    let has_payload = matches!(kind, 0..=3 | 7);
    // Read chunk positions. Wireshark splices RDMA_MSG read chunks into the RPC message at
    // their positions and dissects the result, throwing (a malformed frame) when the spliced
    // call does not parse; the generated payloads are not built around interior positions, so
    // in RDMA_MSG and RDMA_MSGP every read chunk sits at the end of the payload (an opaque
    // argument's data moved to a read chunk, as in the golden vectors). RDMA_NOMSG positions
    // are arbitrary.
    let reads: Vec<ReadSegment> = (0..rng.below(4))
        .map(|_| {
            let position = if has_payload { payload.len() as u32 } else { rng.u32() };
            ReadSegment { position, target: rng.seg() }
        })
        .collect();
    let write_segs: Vec<Vec<Segment>> =
        (0..rng.below(4)).map(|_| (0..rng.below(4)).map(|_| rng.seg()).collect()).collect();
    let writes: Vec<&[Segment]> = write_segs.iter().map(|w| w.as_slice()).collect();
    let reply: Option<Vec<Segment>> = (rng.below(2) == 0).then(|| (0..rng.below(4)).map(|_| rng.seg()).collect());
    let b = match kind {
        0..=3 => HeaderBuilder::msg(xid, credit),
        4..=6 => HeaderBuilder::nomsg(xid, credit),
        7 => HeaderBuilder::msgp(xid, credit, rng.u32(), rng.u32()),
        8 => HeaderBuilder::err_vers(xid, 1, credit, rng.u32(), rng.u32()),
        _ => HeaderBuilder::err_chunk(xid, credit),
    };
    let mut b = b.read_list(&reads).write_list(&writes);
    if let Some(r) = &reply {
        b = b.reply_chunk(r);
    }
    let mut buf = vec![0u8; 4096];
    let n = b.encode(&mut buf).unwrap();
    buf.truncate(n);
    if has_payload {
        buf.extend_from_slice(&payload);
    }
    (buf, n)
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn wireshark_agrees_with_the_codec() {
    // (label, bytes, profile, is a golden v1 vector)
    let mut frames: Vec<(String, Vec<u8>, Profile, bool)> = Vec::new();
    for name in rpcrdma_vectors::embedded_names() {
        let v = rpcrdma_vectors::embedded(name).unwrap();
        let mut p = Profile::default();
        for n in &v.profile {
            assert!(p.apply(n));
        }
        let v1_vector = name.starts_with("v1/");
        let v2_header = name.starts_with("v2/") && v.kind == "header";
        if v1_vector || v2_header {
            frames.push((name.to_string(), v.bytes, p, v1_vector));
        }
    }
    let vectors = frames.len();
    let mut rng = Rng(0x5eed_0f20_2600);
    for i in 0..3000 {
        let (msg, header_len) = generated(&mut rng);
        // Every third one also truncated inside its header, at a word boundary: both must
        // reject it. (RoCE pads a Send payload to a multiple of 4 bytes with zeros, and
        // Wireshark reads the pad as data, so a cut inside a word would be zero-filled for
        // Wireshark but not for us.)
        if i % 3 == 0 {
            let cut = rng.below(header_len as u64 / 4) as usize * 4;
            frames.push((format!("generated #{i} cut at {cut}"), msg[..cut].to_vec(), Profile::default(), false));
        }
        frames.push((format!("generated #{i}"), msg, Profile::default(), false));
    }
    let transcript: Vec<TranscriptEntry> = frames
        .iter()
        .enumerate()
        .map(|(i, (_, b, _, _))| TranscriptEntry {
            direction: Direction::Sent,
            at: Duration::from_millis(i as u64),
            summary: String::new(),
            bytes: b.clone(),
            wire: Default::default(),
        })
        .collect();
    // One frame per message: no path MTU splits them (the whole-run test below covers that).
    let rows = tshark(&capture_with_mtu(&transcript, 1_700_000_000, 1 << 16), frames.len());

    let mut problems = Vec::new();
    let (mut both_accept, mut both_reject, mut listed, mut v2_frames) = (0, 0, 0, 0);
    for ((label, bytes, profile, _), theirs) in frames.iter().zip(&rows) {
        let ours = ours(bytes, profile);
        let exception = WIRESHARK_CANNOT.iter().find(|(n, _)| n == label);
        let is_v2 = label.starts_with("v2/");
        match (&ours, theirs, exception) {
            _ if is_v2 => {
                // Wireshark 4.0 knows only rdma_vers 1: nothing may be dissected.
                v2_frames += 1;
                if theirs.is_some() {
                    problems.push(format!("{label}: Wireshark dissected a Version Two frame: {theirs:?}"));
                }
            }
            (Some(o), Some(t), None) => {
                if o != t {
                    problems.push(format!(
                        "{label}: fields differ\n  ours      {o:?}\n  wireshark {t:?}\n  bytes {}",
                        hex(bytes)
                    ));
                }
                both_accept += 1;
            }
            (None, None, None) => both_reject += 1,
            (o, t, None) => problems.push(format!(
                "{label}: {} but Wireshark {}: {}",
                if o.is_some() { "we accept" } else { "we reject" },
                if t.is_some() { "accepts" } else { "rejects" },
                hex(bytes)
            )),
            (o, t, Some((_, why))) => {
                listed += 1;
                if o.is_some() == t.is_some() {
                    problems.push(format!(
                        "{label} is listed as a Wireshark limitation ({why}) but both sides agree: remove it"
                    ));
                }
            }
        }
    }
    for (name, _) in WIRESHARK_CANNOT {
        assert!(frames.iter().any(|(l, ..)| l == name), "{name} is listed but is no vector");
    }
    eprintln!(
        "{} frames ({vectors} vectors, {} generated): {both_accept} decoded alike, {both_reject} rejected by both, \
         {listed} listed Wireshark limitations, {v2_frames} Version Two frames Wireshark does not dissect",
        frames.len(),
        frames.len() - vectors
    );
    assert!(problems.is_empty(), "{} disagreements:\n{}", problems.len(), problems.join("\n"));
    assert!(both_accept > 2500, "only {both_accept} frames decoded by both");
}

// ------------------------------------------------------------------------------------------
// Whole runs: every check's conversation, as `run --pcap` writes it

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::ctx::{RdmaOp, Wire};
use rpcrdma_conformance::engine::{run_check, CheckResult, RunOptions};
use rpcrdma_harness::report::pcap::{file_name, DEFAULT_MTU};
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::{
    Access, Connection, Connector, Event, Region, RemoteAccess, RemoteOp, Result as TResult, TransportError,
};

/// Checks that send malformed headers on purpose: Wireshark must flag exactly these (and
/// [`WIRESHARK_CANNOT_REASSEMBLE`]).
const MALFORMED_ON_PURPOSE: &[&str] = &[
    "rfc8166/3.4.5/position-beyond-payload",
    "rfc8166/3.4.5/position-unaligned",
    "rfc8166/4.5.2/huge-segment-count",
    "rfc8166/4.5.2/not-bool-discriminator",
    // A read chunk whose length disagrees with the WRITE's encoded count: the reassembled
    // call is inconsistent on purpose.
    "rfc8166/4.5.2/read-chunk-length-mismatch",
    "v2-01/4.2.3/bad-header-truncated",
];

/// Well-formed conversations Wireshark cannot put back together, and why.
const WIRESHARK_CANNOT_REASSEMBLE: &[(&str, &str)] = &[
    (
        "rfc8166/3.5.3/position-zero-with-data-chunk",
        "a Position-Zero Read chunk together with a data read chunk: Wireshark numbers the first \
         segment of every read chunk as the same fragment, so the data chunk overlaps the call and \
         the reassembled WRITE call is cut short",
    ),
    // Open question: every chunk of several segments fails to reassemble in Wireshark 4.0
    // (each segment's RDMA Write is present with its RETH), while every single-segment chunk
    // does. Whether the dissector or our synthesized frames are at fault is not established.
    ("rfc8166/3.4.6/write-segments-copied", "a write chunk of three segments (see the note above)"),
    ("rfc8166/4.3.2.2/several-write-chunks", "write chunks of several segments (see the note above)"),
    ("rfc8166/3.4.6/reply-chunk-segments", "a reply chunk of three segments (see the note above)"),
    (
        "v2-01/5.3/nomsg-call-same-version",
        "Wireshark 4.0's rpcordma dissector decodes Version One only, so an RDMA2_NOMSG's \
         position-zero chunk is never reassembled",
    ),
];

/// Checks whose replies Wireshark cannot match to their calls, and why.
const WIRESHARK_CANNOT_MATCH: &[(&str, &str)] = &[(
    "rfc5666/6.2/conf-rdma",
    "the call is to the Connection Configuration Protocol (program 100417, RFC 5666 6), which \
     Wireshark has no dissector for: it shows the call as RPC continuation data, so the reply \
     has no call to match",
)];

/// A connector whose connections, like verbs, cannot show the peer's one-sided operations on
/// our memory: the transcript must reconstruct them.
struct Blind<C>(C);

struct BlindConnection(Box<dyn Connection>);

impl<C: Connector> Connector for Blind<C> {
    fn connect(&mut self, private_data: &[u8], deadline: std::time::Instant) -> TResult<Box<dyn Connection>> {
        Ok(Box::new(BlindConnection(self.0.connect(private_data, deadline)?)))
    }
    fn describe(&self) -> String {
        format!("{} (blind to remote accesses)", self.0.describe())
    }
}

impl Connection for BlindConnection {
    fn peer_private_data(&self) -> &[u8] {
        self.0.peer_private_data()
    }
    fn post_recv(&mut self, size: usize, count: usize) -> TResult<()> {
        self.0.post_recv(size, count)
    }
    fn send(&mut self, msg: &[u8]) -> TResult<()> {
        self.0.send(msg)
    }
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> TResult<()> {
        self.0.send_with_invalidate(msg, handle)
    }
    fn register(&mut self, length: u32, access: Access) -> TResult<Region> {
        self.0.register(length, access)
    }
    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> TResult<()> {
        self.0.write_local(region, at, data)
    }
    fn read_local(&self, region: &Region) -> TResult<Vec<u8>> {
        self.0.read_local(region)
    }
    fn accesses(&self, _: &Region) -> TResult<Vec<RemoteAccess>> {
        Err(TransportError::Environment("a target does not see one-sided operations".into()))
    }
    fn is_valid(&self, region: &Region) -> bool {
        self.0.is_valid(region)
    }
    fn deregister(&mut self, region: &Region) -> TResult<()> {
        self.0.deregister(region)
    }
    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: std::time::Instant) -> TResult<Vec<u8>> {
        self.0.rdma_read(handle, offset, length, deadline)
    }
    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: std::time::Instant) -> TResult<()> {
        self.0.rdma_write(handle, offset, data, deadline)
    }
    fn poll(&mut self, deadline: std::time::Instant) -> TResult<Event> {
        self.0.poll(deadline)
    }
    fn disconnect(&mut self) {
        self.0.disconnect()
    }
    fn is_connected(&self) -> bool {
        self.0.is_connected()
    }
}

fn reference() -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config::default()))
}

/// Every check of the catalogue against the reference responder.
fn run_all(connector: &mut dyn Connector) -> Vec<CheckResult> {
    catalogue::all().into_iter().map(|c| run_check(c, connector, &RunOptions::default())).collect()
}

fn rdma_ops(r: &CheckResult) -> Vec<&RdmaOp> {
    r.transcript
        .iter()
        .filter_map(|e| match &e.wire {
            Wire::Rdma(o) => Some(o),
            _ => None,
        })
        .collect()
}

/// Checks whose peer operations a blind transport cannot reconstruct, and why.
const RECONSTRUCTION_CANNOT_SEE: &[(&str, &str)] = &[
    (
        "rfc8166/6.1/ddp-ineligible-argument",
        "the peer RDMA-Reads the read chunk and then refuses the call: a refusal says nothing of \
         what was read before it",
    ),
    (
        "v2-01/5.3/nomsg-call-same-version",
        "reconstruction reads Version One call headers; this position-zero read chunk travels \
         in an RDMA2_NOMSG",
    ),
];

#[test]
fn reconstructed_one_sided_operations_match_the_fabric() {
    let seen = run_all(&mut reference());
    let rebuilt = run_all(&mut Blind(reference()));
    let mut problems = Vec::new();
    let mut compared = 0;
    for (s, b) in seen.iter().zip(&rebuilt) {
        let id = s.check.id;
        if RECONSTRUCTION_CANNOT_SEE.iter().any(|(c, _)| *c == id) {
            // Listed limitations must stay true: the fabric saw operations the blind run lacks.
            assert_ne!(rdma_ops(s).len(), rdma_ops(b).len(), "{id} is listed but now reconstructs: unlist it");
            continue;
        }
        // XIDs differ from run to run: the reconstructed data is compared with the run's XIDs
        // (the first word of each call, in order) mapped to the fabric's.
        let xids = |r: &CheckResult| -> Vec<[u8; 4]> {
            r.transcript
                .iter()
                .filter(|e| e.direction == Direction::Sent && e.bytes.len() >= 4)
                .map(|e| e.bytes[..4].try_into().unwrap())
                .collect()
        };
        let map: BTreeMap<[u8; 4], [u8; 4]> = xids(b).into_iter().zip(xids(s)).collect();
        let key = |o: &&RdmaOp| (o.op == RemoteOp::Write, o.handle, o.offset, o.data.clone());
        let (mut so, mut bo) = (rdma_ops(s), rdma_ops(b));
        let renamed: Vec<RdmaOp> = bo
            .iter()
            .map(|o| {
                let mut o = (*o).clone();
                for w in o.data.chunks_exact_mut(4) {
                    if let Some(x) = map.get(&<[u8; 4]>::try_from(&*w).unwrap()) {
                        w.copy_from_slice(x);
                    }
                }
                o
            })
            .collect();
        bo = renamed.iter().collect();
        assert!(
            so.iter().all(|o| !o.reconstructed && !o.by_us),
            "{id}: the fabric's operations are observed, by the peer"
        );
        assert!(bo.iter().all(|o| o.reconstructed && !o.by_us), "{id}: blind operations are reconstructions");
        so.sort_by_key(key);
        bo.sort_by_key(key);
        if so.iter().map(key).eq(bo.iter().map(key)) {
            compared += so.len();
        } else {
            problems.push(format!(
                "{id}: the fabric saw {:?}\n  reconstructed {:?}",
                so.iter().map(|o| (o.op, o.handle, o.offset, o.data.len())).collect::<Vec<_>>(),
                bo.iter().map(|o| (o.op, o.handle, o.offset, o.data.len())).collect::<Vec<_>>()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared > 10, "only {compared} one-sided operations compared");
}

/// The fields read from each frame of a whole run's captures.
const RUN_FIELDS: &[&str] = &[
    "frame.number",
    "frame.len",
    "infiniband.bth.opcode",
    "infiniband.reth.r_key",
    "infiniband.reth.va",
    "infiniband.reth.dmalen",
    "infiniband.ieth",
    "infiniband.cm.req.ip_cm.private",
    "infiniband.cm.rep.private",
    "rpc.msgtyp",
    "rpc.program",
    "rpc.procedure",
    "rpcordma.reassembled.length",
    "_ws.malformed",
];

/// One frame as Wireshark decoded it: each field's values.
type Row = BTreeMap<&'static str, Vec<String>>;

/// Runs tshark in two passes (as Wireshark's window does; chunk reassembly completes in the
/// second) over a capture file.
fn tshark_rows(path: &std::path::Path) -> Vec<Row> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-2").arg("-r").arg(path);
    cmd.args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=/t"]);
    for f in RUN_FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs (install it: apt-get install -y tshark)");
    assert!(out.status.success(), "tshark failed on {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), RUN_FIELDS.len(), "{}: {line}", path.display());
            RUN_FIELDS
                .iter()
                .zip(cols)
                .map(|(f, c)| (*f, if c.is_empty() { vec![] } else { c.split(',').map(str::to_string).collect() }))
                .collect()
        })
        .collect()
}

fn first(row: &Row, field: &str) -> Option<u64> {
    row[field].first().map(|v| number(v))
}

/// The one-sided operations a capture shows: (op, R_key, address, DMA length, packets
/// carrying data, payload bytes including the pad of the last packet).
fn captured_ops(rows: &[Row]) -> Vec<(RemoteOp, u64, u64, u64, usize, u64)> {
    let mut ops: Vec<(RemoteOp, u64, u64, u64, usize, u64)> = Vec::new();
    for r in rows {
        let Some(opcode) = first(r, "infiniband.bth.opcode") else { continue };
        let len = first(r, "frame.len").unwrap();
        // Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; then the extension headers.
        let payload = |ext: u64| len - 58 - ext;
        let reth = || {
            let f = |n| first(r, n).unwrap_or_else(|| panic!("a RETH in {r:?}"));
            (f("infiniband.reth.r_key"), f("infiniband.reth.va"), f("infiniband.reth.dmalen"))
        };
        match opcode {
            0x0c => {
                let (k, va, n) = reth();
                ops.push((RemoteOp::Read, k, va, n, 0, 0));
            }
            0x06 | 0x0a => {
                let (k, va, n) = reth();
                ops.push((RemoteOp::Write, k, va, n, 1, payload(16)));
            }
            0x07 | 0x08 => {
                let last = ops.last_mut().expect("a WRITE FIRST before");
                last.4 += 1;
                last.5 += payload(0);
            }
            0x0d..=0x10 => {
                let last = ops.last_mut().expect("a READ REQUEST before");
                last.4 += 1;
                last.5 += payload(if opcode == 0x0e { 0 } else { 4 });
            }
            _ => {}
        }
    }
    ops
}

/// How many RPC replies the frames carry, and a problem for each one Wireshark did not match
/// to its call (it then shows "[Program: Unknown (0)]").
fn replies_matched(rows: &[Row]) -> (usize, Vec<String>) {
    let (mut replies, mut problems) = (0, Vec::new());
    for row in rows {
        let n_replies = row["rpc.msgtyp"].iter().filter(|t| *t == "1").count();
        let programs = row["rpc.program"].iter().filter(|p| number(p) != 0).count();
        if n_replies > programs.min(row["rpc.msgtyp"].len()) || row["rpc.procedure"].len() < programs {
            problems.push(format!("frame {}: a reply not matched to its call: {row:?}", row["frame.number"][0]));
        }
        replies += n_replies;
    }
    (replies, problems)
}

/// Everything a whole run's captures must show, for the results of one run.
fn check_captures(results: &[CheckResult], label: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-run-{}-{label}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut problems = Vec::new();
    let (mut replies, mut invalidations, mut connects, mut ops_seen, mut reassembled) = (0, 0, 0, 0, 0);
    for r in results.iter().filter(|r| !r.transcript.is_empty()) {
        let id = r.check.id;
        let path = dir.join(file_name(id));
        std::fs::write(&path, rpcrdma_harness::report::pcap::capture(&r.transcript, 1_700_000_000)).unwrap();
        let rows = tshark_rows(&path);
        let mut problem = |p: String| problems.push(format!("{label} {id}: {p}"));
        if rows.is_empty() {
            problem("Wireshark read no frame".into());
            continue;
        }

        // Only the malformed-on-purpose checks (and the listed reassembly limits) show
        // malformed frames.
        let malformed = rows.iter().any(|row| !row["_ws.malformed"].is_empty());
        // A conversation Wireshark cannot reassemble may show malformed frames, or none.
        let cannot_reassemble = WIRESHARK_CANNOT_REASSEMBLE.iter().any(|(n, _)| *n == id);
        if MALFORMED_ON_PURPOSE.contains(&id) && !malformed {
            problem("Wireshark shows no malformed frames".into());
        } else if !MALFORMED_ON_PURPOSE.contains(&id) && !cannot_reassemble && malformed {
            problem("Wireshark shows malformed frames".into());
        }

        // Every reply is matched to its call: the program is known, not "Unknown (0)".
        let (n, unmatched) = replies_matched(&rows);
        match WIRESHARK_CANNOT_MATCH.iter().find(|(n, _)| *n == id) {
            Some((_, why)) if unmatched.is_empty() => {
                problem(format!("listed as a Wireshark limitation ({why}) but every reply is matched: remove it"))
            }
            Some(_) => {}
            None => unmatched.into_iter().for_each(&mut problem),
        }
        replies += n;

        // The CM exchange carries both private datas.
        let wanted: Vec<&rpcrdma_conformance::engine::ctx::CmExchange> = r
            .transcript
            .iter()
            .filter_map(|e| match &e.wire {
                Wire::Connect(cm) => Some(cm),
                _ => None,
            })
            .collect();
        let reqs: Vec<&Row> = rows.iter().filter(|row| !row["infiniband.cm.req.ip_cm.private"].is_empty()).collect();
        let reps: Vec<&Row> = rows.iter().filter(|row| !row["infiniband.cm.rep.private"].is_empty()).collect();
        if reqs.len() != wanted.len() || reps.len() != wanted.iter().filter(|c| c.rep.is_some()).count() {
            problem(format!("{} CM REQs and {} REPs for {} connections", reqs.len(), reps.len(), wanted.len()));
        }
        let padded = |b: &[u8], n: usize| {
            let mut v = b.to_vec();
            v.resize(n.max(v.len()), 0);
            hex(&v[..n])
        };
        for (cm, req) in wanted.iter().zip(&reqs) {
            if req["infiniband.cm.req.ip_cm.private"][0] != padded(&cm.req, 56) {
                problem(format!(
                    "CM REQ private data {:?}, sent {}",
                    req["infiniband.cm.req.ip_cm.private"],
                    hex(&cm.req)
                ));
            }
        }
        for (pd, rep) in wanted.iter().filter_map(|c| c.rep.as_ref()).zip(&reps) {
            if rep["infiniband.cm.rep.private"][0] != padded(pd, 196) {
                problem(format!("CM REP private data {:?}, received {}", rep["infiniband.cm.rep.private"], hex(pd)));
            }
        }
        connects += wanted.len();

        // RDMA Read and Write frames, split at the path MTU, with the lengths moved.
        let want: Vec<(RemoteOp, u64, u64, u64, usize, u64)> = rdma_ops(r)
            .iter()
            .map(|o| {
                let n = o.data.len() as u64;
                (o.op, o.handle as u64, o.offset, n, (o.data.len().div_ceil(DEFAULT_MTU)).max(1), n.div_ceil(4) * 4)
            })
            .collect();
        let got = captured_ops(&rows);
        if got != want {
            problem(format!("one-sided operations\n  captured {got:?}\n  performed {want:?}"));
        }
        ops_seen += got.len();

        // Send With Invalidate carries the IETH with the R_key.
        let sent_inv: Vec<String> = r
            .transcript
            .iter()
            .filter_map(|e| match e.wire {
                Wire::SendWithInvalidate(k) => Some(format!("{k:08x}")),
                _ => None,
            })
            .collect();
        let got_inv: Vec<String> = rows
            .iter()
            .filter(|row| matches!(first(row, "infiniband.bth.opcode"), Some(0x16 | 0x17)))
            .map(|row| row["infiniband.ieth"].first().cloned().unwrap_or_default())
            .collect();
        if got_inv != sent_inv {
            problem(format!("Send With Invalidate R_keys: captured {got_inv:?}, received {sent_inv:?}"));
        }
        invalidations += got_inv.len();

        // Chunk data is put back into the RPC message it belongs to.
        let n = rows.iter().filter(|row| !row["rpcordma.reassembled.length"].is_empty()).count();
        if !want.is_empty() && n == 0 && !cannot_reassemble {
            problem("one-sided operations, but no message reassembled from them".into());
        }
        reassembled += n;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{label}: {replies} replies matched, {connects} CM exchanges, {ops_seen} one-sided operations, \
         {invalidations} Sends With Invalidate, {reassembled} messages reassembled from chunks"
    );
    if replies < 50 || connects < 40 || ops_seen < 10 || invalidations < 3 || reassembled < 5 {
        problems.push(format!("{label}: too little was checked"));
    }
    problems
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn wireshark_reads_whole_runs() {
    let mut problems = check_captures(&run_all(&mut reference()), "emulated");
    problems.extend(check_captures(&run_all(&mut Blind(reference())), "reconstructed"));
    let listed = WIRESHARK_CANNOT_REASSEMBLE.iter().chain(WIRESHARK_CANNOT_MATCH).map(|(n, _)| n);
    for name in MALFORMED_ON_PURPOSE.iter().chain(listed) {
        assert!(catalogue::all().iter().any(|c| c.info.id == *name), "{name} is listed but is no check");
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn wireshark_reads_what_serve_observed() {
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-serve-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_rpcrdma-harness"))
        .args(["serve", "--self-test", "--pcap"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "serve --self-test: {}", String::from_utf8_lossy(&out.stdout));
    let rows = tshark_rows(&dir.join(rpcrdma_harness::report::pcap::OBSERVED_FILE));
    let _ = std::fs::remove_dir_all(&dir);
    let (replies, mut problems) = replies_matched(&rows);
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let opcode = |r: &Row| first(r, "infiniband.bth.opcode");
    if count(&|r| !r["_ws.malformed"].is_empty()) > 0 {
        problems.push("malformed frames".into());
    }
    // The reference requester and responder both advertise RFC 8797 private data.
    let format_id = |f: &'static str| count(&|r| r[f].first().is_some_and(|v| v.starts_with("f6ab0e18")));
    if format_id("infiniband.cm.req.ip_cm.private") == 0 || format_id("infiniband.cm.rep.private") == 0 {
        problems.push("no RFC 8797 private data in the CM REQ and REP".into());
    }
    let reads = count(&|r| opcode(r) == Some(0x0c));
    let writes = count(&|r| matches!(opcode(r), Some(0x06 | 0x0a)));
    let invalidations = count(&|r| matches!(opcode(r), Some(0x16 | 0x17)) && !r["infiniband.ieth"].is_empty());
    let reassembled = count(&|r| !r["rpcordma.reassembled.length"].is_empty());
    eprintln!("serve: {replies} replies matched, {reads} RDMA Reads, {writes} RDMA Writes, {invalidations} Sends With Invalidate, {reassembled} reassembled");
    if replies < 20 || reads == 0 || writes == 0 || invalidations == 0 || reassembled == 0 {
        problems.push("too little was seen".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn wireshark_reads_a_rejected_connection() {
    let cm = rpcrdma_conformance::engine::ctx::CmExchange {
        we_are_active: true,
        req: vec![0xf6, 0xab, 0x0e, 0x18, 9],
        rep: None,
    };
    let t = [TranscriptEntry {
        direction: Direction::Event,
        at: Duration::ZERO,
        summary: String::new(),
        bytes: vec![],
        wire: Wire::Connect(cm),
    }];
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-rej-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rej.pcap");
    std::fs::write(&path, rpcrdma_harness::report::pcap::capture(&t, 1_700_000_000)).unwrap();
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "infiniband.mad.attributeid",
            "-e",
            "infiniband.cm.req.ip_cm.private",
            "-e",
            "_ws.malformed",
        ])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(rows[0][0], "0x0010", "a CM REQ: {text}");
    assert!(rows[0][1].starts_with("f6ab0e1809000000"), "{text}");
    assert_eq!(rows[1][0], "0x0012", "a CM REJ: {text}");
    assert!(rows.iter().all(|r| r[2].is_empty()), "{text}");
}
