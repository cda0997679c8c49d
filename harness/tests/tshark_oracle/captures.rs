//! The captures `run --pcap` and `serve --pcap` write, read back with tshark: every reply
//! matched to its call, the CM private data, the one-sided operations with the lengths moved,
//! Send With Invalidate's R_key, and chunk data reassembled into its message.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::ctx::{Direction, TranscriptEntry, Wire};
use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_harness::report::pcap::{file_name, DEFAULT_MTU};
use rpcrdma_peers::transport::RemoteOp;

use crate::limits::{MALFORMED_ON_PURPOSE, UNMATCHED_ON_PURPOSE, WIRESHARK_CANNOT_MATCH, WIRESHARK_CANNOT_REASSEMBLE};
use crate::runs::{blind, rdma_ops, reference, run_all};
use crate::{hex, number};

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
    "rpcordma.xid",
    "rpc.msgtyp",
    "rpc.program",
    "rpc.procedure",
    "rpcordma.reassembled.length",
    "rpcordma.fragment.overlap.conflicts",
    "_ws.malformed",
];

/// One frame as Wireshark decoded it: each field's values.
pub type Row = BTreeMap<&'static str, Vec<String>>;

/// Runs tshark in two passes (as Wireshark's window does; chunk reassembly completes in the
/// second) over a capture file.
pub fn tshark_rows(path: &std::path::Path) -> Vec<Row> {
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
pub fn replies_matched(rows: &[Row]) -> (usize, Vec<String>) {
    replies_matched_but(rows, |_| false)
}

/// As [`replies_matched`], a reply `excused(row)` not counted as a problem.
pub fn replies_matched_but(rows: &[Row], excused: impl Fn(&Row) -> bool) -> (usize, Vec<String>) {
    let (mut replies, mut problems) = (0, Vec::new());
    for row in rows {
        let n_replies = row["rpc.msgtyp"].iter().filter(|t| *t == "1").count();
        let programs = row["rpc.program"].iter().filter(|p| number(p) != 0).count();
        let unmatched = n_replies > programs.min(row["rpc.msgtyp"].len()) || row["rpc.procedure"].len() < programs;
        if unmatched && !excused(row) {
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
        match WIRESHARK_CANNOT_MATCH.iter().chain(UNMATCHED_ON_PURPOSE).find(|(n, _)| *n == id) {
            Some((_, why)) if unmatched.is_empty() => {
                problem(format!("listed as unmatched ({why}) but every reply is matched: remove it"))
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
        // A listed limit must still show: nothing reassembled, or malformed frames.
        if cannot_reassemble && n > 0 && !malformed {
            problem("listed as a Wireshark reassembly limit but reassembled cleanly: unlist it".into());
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
    problems.extend(check_captures(&run_all(&mut blind(reference())), "reconstructed"));
    let listed =
        WIRESHARK_CANNOT_REASSEMBLE.iter().chain(WIRESHARK_CANNOT_MATCH).chain(UNMATCHED_ON_PURPOSE).map(|(n, _)| n);
    for name in MALFORMED_ON_PURPOSE.iter().chain(listed) {
        assert!(catalogue::all().iter().any(|c| c.info.id == *name), "{name} is listed but is no check");
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
#[ignore = "needs tshark; CI runs it"]
fn wireshark_reads_what_serve_observed() {
    let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-serve-{}", std::process::id()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpcrdma-harness"));
    cmd.args(["serve", "--self-test", "--pcap"]).arg(&dir);
    for (id, _) in crate::limits::SERVE_MALFORMED {
        cmd.args(["--exclude", id]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "serve --self-test: {}", String::from_utf8_lossy(&out.stdout));
    let rows = tshark_rows(&dir.join(rpcrdma_harness::report::pcap::OBSERVED_FILE));
    let _ = std::fs::remove_dir_all(&dir);
    // The reference requester's CONF_RDMA (RFC 5666 6.2) calls: Wireshark cannot dissect them
    // (limits::NO_CCP_DISSECTOR), so their replies match no call. A reply is excused only when
    // the frame that carried its XID before it was not dissected as an RPC message at all.
    let undissected: Vec<&str> = rows
        .iter()
        .filter(|r| r["rpc.msgtyp"].is_empty())
        .filter_map(|r| r["rpcordma.xid"].first().map(String::as_str))
        .collect();
    let ccp_reply = |r: &Row| r["rpcordma.xid"].first().is_some_and(|x| undissected.contains(&x.as_str()));
    let (replies, mut problems) = replies_matched_but(&rows, ccp_reply);
    let excused = rows.iter().filter(|r| ccp_reply(r) && r["rpc.msgtyp"].iter().any(|t| t == "1")).count();
    eprintln!("serve: {excused} replies to CONF_RDMA calls Wireshark cannot dissect");
    if excused == 0 {
        problems.push("no CONF_RDMA exchange seen: the excuse above is stale".into());
    }
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

#[test]
#[ignore = "needs tshark; CI runs it"]
fn the_serve_checks_left_out_are_malformed_to_wireshark() {
    for (id, why) in crate::limits::SERVE_MALFORMED {
        let dir = std::env::temp_dir().join(format!("rpcrdma-tshark-serve-left-{}", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_rpcrdma-harness"))
            .args(["serve", "--self-test", id, "--pcap"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "serve --self-test {id}: {}", String::from_utf8_lossy(&out.stdout));
        let rows = tshark_rows(&dir.join(rpcrdma_harness::report::pcap::OBSERVED_FILE));
        let _ = std::fs::remove_dir_all(&dir);
        let malformed = rows.iter().filter(|r| !r["_ws.malformed"].is_empty()).count();
        assert!(malformed > 0, "{id} is listed ({why}) but Wireshark reads its conversation whole");
    }
}
