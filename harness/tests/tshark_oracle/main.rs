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
//! The captures of whole runs are checked too (`captures`): every check of the catalogue
//! against the reference responder, over the emulated fabric and over a transport that, like
//! verbs, cannot see the peer's one-sided operations (`runs`: the capture then shows
//! reconstructed RDMA Reads and Writes), and the conversation `serve --self-test` observed.
//! tshark must match every reply to its call, show the RDMA-CM private data, the RDMA Read and
//! Write frames with the lengths moved, the R_key of each Send With Invalidate, and chunk data
//! reassembled into its message; only the checks that are malformed on purpose (and the listed
//! Wireshark limitations) may show malformed frames. `limits` lists what Wireshark cannot
//! reassemble or match, citing the dissector's source for each, and shows for each reassembly
//! limit that the same conversation without the feature the dissector trips on reassembles.
//!
//! Needs tshark (Wireshark 4.0.17 was used to write the exception lists):
//! `cargo test -p rpcrdma-harness --test tshark_oracle -- --ignored`.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::v1::{self, Body, ErrorBody, HeaderBuilder};
use rpcrdma_codec::Profile;
use rpcrdma_conformance::engine::ctx::{Direction, TranscriptEntry};
use rpcrdma_harness::report::pcap::capture_with_mtu;

mod captures;
mod limits;
mod runs;

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
    rpcrdma_codec::hex::Hex(b).to_string()
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
