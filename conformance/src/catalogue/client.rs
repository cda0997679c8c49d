//! The client catalogue: checks that judge a requester from what the responder saw while
//! serving it (`rpcrdma-harness serve`): its private data, the procedures it sends, its chunk
//! construction and its respect for the credit grant and the inline threshold.

use rpcrdma_codec::check::{KeyWord, Role, Violations};
use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, FixedFields, Message};
use rpcrdma_codec::xdr::Reader;
use rpcrdma_codec::Profile;

use crate::engine::ctx::{summarize, Direction, TranscriptEntry};
use crate::engine::{CheckResult, Outcome, Verdict};
use crate::responder::observe::{Observed, ObservedConnection};

use super::nfs;

/// A check over observed requester behaviour.
#[derive(Debug, Clone, Copy)]
pub struct ClientCheck {
    pub id: &'static str,
    pub requirement: &'static str,
    pub key_word: KeyWord,
    pub acceptable: &'static str,
    pub rationale: &'static str,
    pub groups: &'static [&'static str],
    pub judge: fn(&[ObservedConnection]) -> Verdict,
}

/// Calls the requester sent, decoded, with their connection.
fn calls(conns: &[ObservedConnection]) -> impl Iterator<Item = (&ObservedConnection, &[u8])> {
    conns.iter().flat_map(|c| {
        c.events.iter().filter_map(move |(_, e)| match e {
            Observed::FromRequester(b) => Some((c, b.as_slice())),
            _ => None,
        })
    })
}

fn describe(b: &[u8]) -> String {
    summarize(b)
}

fn private_data_valid(conns: &[ObservedConnection]) -> Verdict {
    let want = "RFC 8797 private data, version 1, reserved bits zero, on every connection";
    if conns.is_empty() {
        return Verdict::unsupported(want, "no connection was made");
    }
    for (i, c) in conns.iter().enumerate() {
        match private_data::find(&c.private_data, &Profile::default()) {
            Ok(Lookup::Found { data, .. }) if data.reserved == 0 => {}
            Ok(Lookup::Found { data, .. }) => {
                return Verdict::fail(want, format!("connection {i}: reserved bits {:#04x}", data.reserved))
            }
            Ok(Lookup::Absent) => {
                return Verdict::unsupported(want, format!("connection {i}: no RFC 8797 private data"))
            }
            Ok(Lookup::UnrecognisedVersion { version, .. }) => {
                return Verdict::fail(want, format!("connection {i}: version {version}"))
            }
            Err(e) => return Verdict::fail(want, format!("connection {i}: {e}")),
        }
    }
    Verdict::pass(want, format!("{} connections with valid private data", conns.len()))
}

/// Every call that breaks one of `ids` (RFC 8166 semantic checks as a requester).
fn call_rule(conns: &[ObservedConnection], ids: &[&str], want: &str) -> Verdict {
    let mut n = 0;
    for (_, b) in calls(conns) {
        let Ok(m) = Message::decode(b, &Profile::default()) else { continue };
        n += 1;
        if let Some(v) = Violations::of(&m, Role::Call).iter().find(|v| ids.contains(&v.rule.id)) {
            return Verdict::fail(want, format!("{v} in {}", describe(b)));
        }
    }
    if n == 0 {
        return Verdict::unsupported(want, "no call was observed");
    }
    Verdict::pass(want, format!("{n} calls observed"))
}

fn no_retired_procs(conns: &[ObservedConnection]) -> Verdict {
    call_rule(
        conns,
        &["rfc8166/4.6.2/done-sent", "rfc8166/4.6.1/msgp-sent", "rfc8166/4.2.4/error-from-requester"],
        "no RDMA_DONE, RDMA_MSGP or RDMA_ERROR from the requester",
    )
}

fn xid_match(conns: &[ObservedConnection]) -> Verdict {
    call_rule(conns, &["rfc8166/4.5.2/xid-mismatch"], "rdma_xid equal to the RPC xid in every RDMA_MSG call")
}

fn positions_aligned(conns: &[ObservedConnection]) -> Verdict {
    call_rule(
        conns,
        &[
            "rfc8166/3.4.5/position-alignment",
            "rfc8166/3.4.5/read-chunks-overlap",
            "rfc8166/3.4.5/position-beyond-payload",
        ],
        "read positions multiples of four, within the payload, without overlap",
    )
}

fn nomsg_carries_payload(conns: &[ObservedConnection]) -> Verdict {
    let want = "every RDMA_NOMSG call carries its payload in a position-zero read chunk";
    let mut n = 0;
    for (_, b) in calls(conns) {
        let Ok(m) = Message::decode(b, &Profile::default()) else { continue };
        if let Body::NoMsg(c) = m.header.body {
            n += 1;
            if c.reads.position_zero().is_none() {
                return Verdict::fail(want, format!("no position-zero chunk in {}", describe(b)));
            }
        }
    }
    if n == 0 {
        return Verdict::unsupported(want, "no RDMA_NOMSG call was observed");
    }
    Verdict::pass(want, format!("{n} long calls, each with a position-zero chunk"))
}

fn within_grant(conns: &[ObservedConnection]) -> Verdict {
    let want = "never more calls outstanding than the credits granted";
    let mut worst = 0usize;
    for c in conns {
        let mut outstanding = 0usize;
        for (_, e) in &c.events {
            match e {
                // Only messages that expect a reply count as requests.
                Observed::FromRequester(b) if FixedFields::decode(b).is_ok_and(|f| f.proc_ <= 1) => {
                    outstanding += 1;
                    worst = worst.max(outstanding);
                    if outstanding > c.grant as usize {
                        return Verdict::fail(
                            want,
                            format!("{outstanding} calls outstanding with a grant of {}", c.grant),
                        );
                    }
                }
                Observed::ToRequester(_) => outstanding = outstanding.saturating_sub(1),
                _ => {}
            }
        }
    }
    if worst == 0 {
        return Verdict::unsupported(want, "no call was observed");
    }
    Verdict::pass(want, format!("at most {worst} outstanding"))
}

fn inline_within_threshold(conns: &[ObservedConnection]) -> Verdict {
    let want = "no Send larger than our advertised receive size";
    for c in conns {
        for (_, e) in &c.events {
            if let Observed::ReceiveFailed(s) = e {
                return Verdict::fail(
                    want,
                    format!(
                        "a receive failed ({}): the requester overran our {}-byte buffer",
                        s.name(),
                        c.receive_size
                    ),
                );
            }
        }
    }
    match calls(conns).count() {
        0 => Verdict::unsupported(want, "no call was observed"),
        n => Verdict::pass(want, format!("{n} calls within the threshold")),
    }
}

/// The READ3args count of an NFSv3 READ call payload.
fn read_count(rpc: &RpcMessage<'_>) -> Option<u32> {
    let mut r = Reader::new(rpc.body);
    r.opaque("file", 64).ok()?;
    r.u64("offset").ok()?;
    r.u32("count").ok()
}

fn is_nfs3(rpc: &RpcMessage<'_>, proc_: u32) -> bool {
    matches!(rpc.header, RpcHeader::Call(c) if c.prog == crate::engine::ctx::NFS_PROGRAM && c.vers == 3 && c.proc_ == proc_)
}

fn write_chunk_no_pad_space(conns: &[ObservedConnection]) -> Verdict {
    let want = "write chunks for READ no longer than the count requested (no space for the XDR pad)";
    let mut n = 0;
    for (_, b) in calls(conns) {
        let Ok(m) = Message::decode(b, &Profile::default()) else { continue };
        let Ok(rpc) = RpcMessage::decode(m.payload) else { continue };
        if !is_nfs3(&rpc, nfs::PROC_READ) {
            continue;
        }
        let (Some(count), Some(c)) = (read_count(&rpc), m.header.body.chunks()) else { continue };
        if let Some(w) = c.writes.chunks().next() {
            n += 1;
            if w.length() > count as u64 {
                return Verdict::lax(
                    want,
                    format!(
                        "a READ of {count} bytes offered a {}-byte write chunk ({} segments)",
                        w.length(),
                        w.segment_count()
                    ),
                );
            }
        }
    }
    if n == 0 {
        return Verdict::unsupported(want, "no READ with a write chunk was observed");
    }
    Verdict::pass(want, format!("{n} READs with write chunks sized to their count"))
}

fn reply_chunk_when_needed(conns: &[ObservedConnection]) -> Verdict {
    let want =
        "a reply chunk (or, for READ, a write chunk) on every call whose reply may exceed our reply inline threshold";
    let mut n = 0;
    for (c, b) in calls(conns) {
        let Ok(m) = Message::decode(b, &Profile::default()) else { continue };
        let Ok(rpc) = RpcMessage::decode(m.payload) else { continue };
        let Some(lists) = m.header.body.chunks() else { continue };
        // READDIR3args ends with count and READDIRPLUS3args with maxcount: the largest reply
        // (RFC 1813 3.3.16, 3.3.17).
        let threshold = private_data::effective(&c.private_data, &Profile::default()).params.receive_size().min(4096);
        let big = if is_nfs3(&rpc, nfs::PROC_READDIR) || is_nfs3(&rpc, nfs::PROC_READDIRPLUS) {
            rpc.body.len() >= 4 && u32::from_be_bytes(rpc.body[rpc.body.len() - 4..].try_into().unwrap()) > threshold
        } else if is_nfs3(&rpc, nfs::PROC_READ) {
            read_count(&rpc).is_some_and(|k| k > threshold) && lists.writes.is_empty()
        } else {
            false
        };
        if big {
            n += 1;
            if lists.reply.is_none() {
                return Verdict::fail(want, format!("no reply chunk on {}", describe(b)));
            }
        }
    }
    if n == 0 {
        return Verdict::unsupported(want, "no call with a possibly long reply was observed");
    }
    Verdict::pass(want, format!("{n} calls offered a reply chunk"))
}

pub static CHECKS: [ClientCheck; 9] = [
    ClientCheck {
        id: "rfc8797/4/requester-private-data",
        requirement: "Format Identifier: ... the value of this field is always 0xf6ab0e18 ... Reserved: This 7-bit field is unused. Senders MUST set these bits to zero, and receivers MUST ignore their value.",
        key_word: KeyWord::Must,
        acceptable: "RFC 8797 private data of version 1 with the reserved bits zero; none at all is unsupported",
        rationale: "A server sizes its replies from the client's advertised receive size.",
        groups: &["client", "private-data"],
        judge: private_data_valid,
    },
    ClientCheck {
        id: "rfc8166/4.6/requester-no-retired-procs",
        requirement: "Senders MUST NOT send RDMA_MSGP procedures. ... Senders MUST NOT send RDMA_DONE messages. ... A Requester MUST NOT send an RPC-over-RDMA header with the RDMA_ERROR procedure.",
        key_word: KeyWord::MustNot,
        acceptable: "only RDMA_MSG and RDMA_NOMSG from the requester",
        rationale: "Retired procedures are not interoperable; errors from requesters loop.",
        groups: &["client", "header"],
        judge: no_retired_procs,
    },
    ClientCheck {
        id: "rfc8166/4.5.2/requester-xid-match",
        requirement: "... or the value of the rdma_xid field does not match the value of the XID field in the accompanying RPC message. If the rdma_vers field contains a recognized value, but an XDR parsing error occurs, the Responder MUST reply with an RDMA_ERROR procedure and set the rdma_err value to ERR_CHUNK.",
        key_word: KeyWord::Must,
        acceptable: "rdma_xid equal to the RPC xid in every RDMA_MSG call",
        rationale: "A mismatch is an XDR error every responder must refuse.",
        groups: &["client", "header"],
        judge: xid_match,
    },
    ClientCheck {
        id: "rfc8166/3.4.5/requester-positions",
        requirement: "The Position field in a read segment indicates where the containing Read chunk starts in the Payload stream. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "aligned positions within the payload, chunks not overlapping",
        rationale: "Responders refuse such calls with ERR_CHUNK.",
        groups: &["client", "read-chunks"],
        judge: positions_aligned,
    },
    ClientCheck {
        id: "rfc8166/4.2.4/requester-nomsg-payload",
        requirement: "Though any of these MAY be marked as not present, one MUST be present and MUST hold the Payload stream for this RPC-over-RDMA message.",
        key_word: KeyWord::Must,
        acceptable: "a position-zero read chunk in every RDMA_NOMSG call",
        rationale: "Without it the responder has no call to process.",
        groups: &["client", "read-chunks"],
        judge: nomsg_carries_payload,
    },
    ClientCheck {
        id: "rfc8166/3.3.1/requester-within-grant",
        requirement: "A Requester MUST NOT send unacknowledged requests in excess of the Responder's granted credit limit.",
        key_word: KeyWord::MustNot,
        acceptable: "never more outstanding calls than the grant",
        rationale: "Exceeding the grant hits receiver-not-ready and kills the connection.",
        groups: &["client", "credits"],
        judge: within_grant,
    },
    ClientCheck {
        id: "rfc8797/3.1/requester-inline-threshold",
        requirement: "To convey an RPC message larger than the receiver's inline threshold without risking receive failure, a sender must use explicit RDMA data transfer operations.",
        key_word: KeyWord::Must,
        acceptable: "no receive failure at the responder",
        rationale: "An oversized Send fails the connection.",
        groups: &["client", "inline"],
        judge: inline_within_threshold,
    },
    ClientCheck {
        id: "rfc8166/3.4.6.2/requester-write-chunk-size",
        requirement: "When provisioning a Write chunk for a variable-length result data item, the Requester SHOULD NOT include additional space for XDR roundup padding.",
        key_word: KeyWord::ShouldNot,
        acceptable: "write chunks no longer than the READ count (longer is pass-lax)",
        rationale: "Linux clients before 4.9 added a pad segment; responders must cope, requesters should not.",
        groups: &["client", "write-chunks", "padding"],
        judge: write_chunk_no_pad_space,
    },
    ClientCheck {
        id: "rfc8166/4.3.3/requester-reply-chunk",
        requirement: "A Requester MUST provide a Reply chunk whenever the maximum possible size of the RPC Reply message's Transport and Payload streams is larger than the inline threshold for messages from Responder to Requester.",
        key_word: KeyWord::Must,
        acceptable: "a reply chunk on READDIR or READDIRPLUS with a count over the threshold, and on READ without a write chunk",
        rationale: "Otherwise the responder cannot send a long reply at all.",
        groups: &["client", "reply-chunk"],
        judge: reply_chunk_when_needed,
    },
];

/// Judges the observations with every client check; the transcript of each result is the
/// whole observed conversation (from the responder's side).
pub fn judge_all(conns: &[ObservedConnection]) -> Vec<CheckResult> {
    let transcript: Vec<TranscriptEntry> = conns
        .iter()
        .flat_map(|c| c.events.iter())
        .map(|(at, e)| match e {
            Observed::FromRequester(b) => {
                TranscriptEntry { direction: Direction::Received, at: *at, summary: summarize(b), bytes: b.clone() }
            }
            Observed::ToRequester(b) => {
                TranscriptEntry { direction: Direction::Sent, at: *at, summary: summarize(b), bytes: b.clone() }
            }
            Observed::ReceiveFailed(s) => TranscriptEntry {
                direction: Direction::Event,
                at: *at,
                summary: format!("receive failed: {}", s.name()),
                bytes: Vec::new(),
            },
            Observed::Closed => TranscriptEntry {
                direction: Direction::Event,
                at: *at,
                summary: "connection closed".into(),
                bytes: Vec::new(),
            },
        })
        .collect();
    CHECKS
        .iter()
        .map(|c| {
            let v = (c.judge)(conns);
            CheckResult {
                id: c.id,
                key_word: c.key_word,
                requirement: c.requirement,
                outcome: v.outcome,
                expected: v.expected,
                actual: v.actual,
                connection_survived: None,
                transcript: if v.outcome == Outcome::Pass { Vec::new() } else { transcript.clone() },
                duration: std::time::Duration::ZERO,
            }
        })
        .collect()
}
