//! Client checks of the NFS version 4 binding (RFC 8267 6.4, 6.7.2), judged from the NFSv4
//! calls a requester sends: its chunk lists within 6.4.2's prescriptions, its write list
//! paired with the COMPOUND's READs in order (6.4.1), and, in two `serve` scenarios that refuse
//! its first READ COMPOUND unprocessed (ERR_CHUNK, GARBAGE_ARGS), that it does not send the
//! refused call again (6.4.2, 6.7.2; RFC 8166 4.5: an RDMA_ERROR completes the transaction).

use rpcrdma_codec::xdr::Reader;
use rpcrdma_peers::observe::WireNote;
use rpcrdma_peers::proto::nfs3::NFS_PROGRAM;
use rpcrdma_peers::proto::nfs4::NFSPROC4_COMPOUND;
use rpcrdma_peers::proto::nfs41::Op;
use rpcrdma_peers::responder::Scenario;

use super::calls::{calls, plural};
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v1::{Body, Chunks};
use crate::frame::Frame;

/// RFC 8267 6.4.2: the most RDMA segments a chunk of an NFS version 4 call holds.
const MAX_SEGMENTS: usize = 16;

/// Whether a call is an NFS version 4 call: its RPC header inline, or (RDMA_NOMSG) at the
/// start of the position-zero read chunk we RDMA-Read (RFC 8166 3.5.3).
fn is_nfs4(s: &Served<'_>, f: &Frame) -> bool {
    if let Some(Ok(rpc)) = f.rpc.as_ref() {
        return matches!(rpc.kind, RpcKind::Call { prog: NFS_PROGRAM, vers: 4, .. });
    }
    let Some(Body::NoMsg { chunks }) = f.v1().map(|h| &h.body) else { return false };
    let Some(first) = chunks.reads.iter().find(|r| r.position == 0) else { return false };
    // xid, msg_type, rpcvers, prog, vers (RFC 5531 9).
    s.conn.wire.iter().any(|(_, n)| match n {
        WireNote::Read { handle, offset, data } if *handle == first.target.handle && *offset == first.target.offset => {
            let word = |at: usize| data.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            word(12) == Some(NFS_PROGRAM) && word(16) == Some(4)
        }
        _ => false,
    })
}

/// What in a call's chunk lists goes beyond RFC 8267 6.4.2's prescriptions, if anything.
fn beyond_prescriptions(c: &Chunks) -> Option<String> {
    // A read chunk is the read segments of one position (RFC 8166 4.3.1).
    let mut positions: Vec<(u32, usize)> = Vec::new();
    for r in &c.reads {
        match positions.iter_mut().find(|(p, _)| *p == r.position) {
            Some((_, n)) => *n += 1,
            None => positions.push((r.position, 1)),
        }
    }
    let nonzero: Vec<u32> = positions.iter().map(|(p, _)| *p).filter(|p| *p != 0).collect();
    if nonzero.len() > 1 {
        return Some(format!("{} read chunks at non-zero positions ({nonzero:?}): one at most", nonzero.len()));
    }
    if let Some((p, n)) = positions.iter().find(|(_, n)| *n > MAX_SEGMENTS) {
        return Some(format!("a read chunk (position {p}) of {n} segments"));
    }
    if c.writes.len() > 1 {
        return Some(format!("{} write chunks: one at most", c.writes.len()));
    }
    if let Some(w) = c.writes.iter().find(|w| w.len() > MAX_SEGMENTS) {
        return Some(format!("a write chunk of {} segments", w.len()));
    }
    match &c.reply {
        Some(r) if r.len() > MAX_SEGMENTS => Some(format!("a reply chunk of {} segments", r.len())),
        _ => None,
    }
}

fn chunk_complexity(served: &[Served<'_>]) -> Judged {
    let want = "every NFS version 4 call's chunk lists within RFC 8267 6.4.2: a position-zero read chunk and one other at most, one write chunk at most, sixteen segments a chunk at most";
    let mut n = 0;
    for (s, f) in calls(served) {
        let Some(c) = f.v1().and_then(|h| h.body.chunks()) else { continue };
        if c.reads.is_empty() && c.writes.is_empty() && c.reply.is_none() || !is_nfs4(s, f) {
            continue;
        }
        n += 1;
        if let Some(what) = beyond_prescriptions(c) {
            return Ok(Verdict::lax(want, format!("{what} in {f}")));
        }
    }
    if n == 0 {
        return Err(Verdict::inconclusive(want, "no NFS version 4 call carried chunks"));
    }
    Ok(Verdict::pass(
        want,
        format!("{n} NFS version 4 {} with chunks, each within the prescriptions", plural(n, "call")),
    ))
}

/// The operations of an NFS version 4 COMPOUND call carried inline, when every one decodes.
fn compound_ops(f: &Frame) -> Option<Vec<Op>> {
    let rpc = f.rpc.as_ref()?.as_ref().ok()?;
    if !matches!(rpc.kind, RpcKind::Call { prog: NFS_PROGRAM, vers: 4, proc_: NFSPROC4_COMPOUND }) {
        return None;
    }
    let mut r = Reader::new(f.slice(rpc.body.clone()));
    r.opaque("tag", u32::MAX).ok()?;
    r.u32("minorversion").ok()?;
    let n = r.u32("argarray").ok()?;
    (0..n)
        .map(|_| match Op::decode(&mut r) {
            Ok(Op::Other(_)) | Err(_) => None,
            Ok(op) => Some(op),
        })
        .collect()
}

fn first_chunk_first_read(served: &[Served<'_>]) -> Judged {
    let want = "each write chunk of an NFS version 4 COMPOUND provisioned for the READ of its rank (RFC 8267 6.4.1): the first for the first READ's count, and so on";
    let mut n = 0;
    for (_, f) in calls(served) {
        let Some(c) = f.v1().and_then(|h| h.body.chunks()) else { continue };
        let Some(ops) = compound_ops(f) else { continue };
        let counts: Vec<u32> =
            ops.iter().filter_map(|op| if let Op::Read { count, .. } = op { Some(*count) } else { None }).collect();
        if c.writes.is_empty() || counts.is_empty() {
            continue;
        }
        n += 1;
        for (i, (w, count)) in c.writes.iter().zip(&counts).enumerate() {
            let length = Chunks::write_length(w);
            // An empty chunk asks for that READ's data inline (6.4.1).
            if !w.is_empty() && length < u64::from(*count) {
                let got = format!(
                    "write chunk {} holds {length} bytes, too few for READ {} of {count} bytes (the COMPOUND's READ counts {counts:?}): provisioned for another READ in {f}",
                    i + 1,
                    i + 1
                );
                return Err(Verdict::fail(want, got));
            }
        }
    }
    if n == 0 {
        return Err(Verdict::inconclusive(want, "no NFS version 4 COMPOUND with a READ offered a write chunk"));
    }
    Ok(Verdict::pass(
        want,
        format!("{n} {} with READs and write chunks, each chunk fitting the READ of its rank", plural(n, "COMPOUND")),
    ))
}

/// Whether the call the scenario refused was sent again (the same XID) afterwards. `lax`:
/// sending it again is a SHOULD NOT's deviation (pass-lax), else a failure.
fn refused_call_not_sent_again(served: &[Served<'_>], refusal: &str, lax: bool) -> Judged {
    let want = format!("the call refused with {refusal} not sent again (its XID never seen again), the requester going on with other calls");
    let found = served.iter().enumerate().find_map(|(c, s)| {
        s.events.iter().enumerate().find_map(|(e, (at, seen))| match seen {
            Seen::Injected { xid, .. } => Some((c, e, *at, *xid)),
            _ => None,
        })
    });
    let Some((c, e, at, xid)) = found else {
        return Err(Verdict::inconclusive(
            want,
            "the scenario's call (an NFS version 4 COMPOUND with a READ, sent inline) never came",
        ));
    };
    let after = served[c].events[e + 1..].iter().chain(served[c + 1..].iter().flat_map(|s| s.events.iter()));
    let (mut others, mut closed) = (0usize, false);
    for (t, seen) in after {
        match seen {
            Seen::Call(f) if f.fixed().is_some_and(|h| h.xid == xid) => {
                let ms = t.saturating_sub(at).as_millis();
                let got = format!("the call {xid:#010x} was sent again {ms} ms after our {refusal}");
                return if lax { Ok(Verdict::lax(want, got)) } else { Err(Verdict::fail(want, got)) };
            }
            Seen::Call(f) if f.carries_rpc_message() => others += 1,
            Seen::Closed => closed = true,
            _ => {}
        }
    }
    // Still connected, or nothing sent since: the call may yet come again.
    if !closed || others == 0 {
        let got = format!(
            "the call {xid:#010x} was not sent again before the observation ended, {others} other {} followed and the connection {}",
            plural(others, "call"),
            if closed { "closed" } else { "was still open" }
        );
        return Err(Verdict::inconclusive(want, got));
    }
    Ok(Verdict::pass(
        want,
        format!(
            "the call {xid:#010x} was never sent again: {others} other {} followed, then the connection closed",
            plural(others, "call")
        ),
    ))
}

fn err_chunk_completes(served: &[Served<'_>]) -> Judged {
    refused_call_not_sent_again(served, "RDMA_ERROR ERR_CHUNK", false)
}

fn garbage_args_not_resent(served: &[Served<'_>]) -> Judged {
    refused_call_not_sent_again(served, "GARBAGE_ARGS", true)
}

/// What gives a requester the chance to send a refused call again, or to show it will not.
const REFUSED_PRECONDITION: &str = "an NFS version 4 COMPOUND with a READ sent inline (the one refused), then other calls and the connection closed: a requester still connected, or that sent nothing more, has shown neither";

pub static CHECKS: [ClientCheck; 4] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.4.2/requester-chunk-complexity",
            judges: &["rfc8267/6.4.2#1"],
            acceptable: "each NFS version 4 call with at most a position-zero read chunk and one other, at most one write chunk, at most sixteen segments a chunk (more is pass-lax)",
            rationale: "Servers often cannot process more complex chunk lists (RFC 8267 6.4.2): absent knowledge of the server's limits, such a call may be refused.",
            groups: &["client", "nfs4", "chunks"],
            broken_by: &[("seventeen-segment-chunk", Outcome::PassLax)],
            precondition: Some("an NFS version 4 call carrying chunks"),
        },
        scenario: None,
        judge: chunk_complexity,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.4.1/requester-first-chunk-first-read",
            judges: &["rfc8267/6.4.1#1"],
            acceptable: "in every NFS version 4 COMPOUND with READs and write chunks, each non-empty write chunk at least as long as the count of the READ of its rank",
            rationale: "The server writes the first READ's data into the first write chunk (RFC 8267 6.4.1); a client that provisioned it for another READ has its data land short or misread.",
            groups: &["client", "nfs4", "write-chunks"],
            broken_by: &[("write-chunk-for-second-read", Outcome::Fail)],
            precondition: Some("an NFS version 4 COMPOUND with a READ offering a write chunk"),
        },
        scenario: None,
        judge: first_chunk_first_read,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.7.2/requester-err-chunk-completes",
            judges: &["rfc8267/6.7.2#2", "rfc8267/6.4.2#4"],
            acceptable: "an NFS version 4 READ COMPOUND answered RDMA_ERROR ERR_CHUNK is not sent again: the error completes it",
            rationale: "An RDMA_ERROR is a permanent error that completes the RPC transaction (RFC 8166 4.5, RFC 8267 6.7.2); a client that sends the call again gets the same error, and loops.",
            groups: &["client", "scenario", "nfs4", "errors"],
            broken_by: &[("resend-refused-call", Outcome::Fail)],
            precondition: Some(REFUSED_PRECONDITION),
        },
        scenario: Some(Scenario::Nfs4ErrChunk),
        judge: err_chunk_completes,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.4.2/requester-garbage-args-not-resent",
            judges: &["rfc8267/6.4.2#4"],
            acceptable: "an NFS version 4 READ COMPOUND answered GARBAGE_ARGS is not sent again (sent again is pass-lax)",
            rationale: "A server that cannot decode a call's arguments will not decode them the next time either (RFC 8267 6.4.2).",
            groups: &["client", "scenario", "nfs4", "errors"],
            broken_by: &[("resend-refused-call", Outcome::PassLax)],
            precondition: Some(REFUSED_PRECONDITION),
        },
        scenario: Some(Scenario::Nfs4GarbageArgs),
        judge: garbage_args_not_resent,
    },
];
