//! Client checks on what a requester provisions: write chunks that hold a READ's whole
//! result (RFC 8166 3.4.6), read chunks exactly as long as the data item they carry, with or
//! without its XDR pad (3.4.5.2), and one call at a time until the first reply brings the
//! real credit grant (3.3.3).

use rpcrdma_peers::proto::nfs3::{NFSPROC3_READ, NFSPROC3_WRITE};

use super::calls::{calls, nfs3_call, read_count};
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};
use crate::frame::v1::Chunks;

fn write_chunk_covers_read(served: &[Served<'_>]) -> Judged {
    let want = "every READ's write chunk at least as long as the count requested";
    let mut n = 0;
    for (_, f) in calls(served) {
        let (Some((NFSPROC3_READ, args)), Some(c)) = (nfs3_call(f), f.v1().and_then(|h| h.body.chunks())) else {
            continue;
        };
        let (Some(count), Some(w)) = (read_count(args), c.writes.first()) else { continue };
        n += 1;
        let length = Chunks::write_length(w);
        if length < count as u64 {
            return Err(Verdict::fail(
                want,
                format!("a READ of {count} bytes offered a {length}-byte write chunk: {f}"),
            ));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no READ with a write chunk was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} READs with write chunks that hold their count")))
}

fn read_chunk_length(served: &[Served<'_>]) -> Judged {
    let want = "each WRITE's data chunk as long as the data (pass), or the data and its XDR pad (pass-lax)";
    let (mut n, mut padded) = (0, None);
    for (_, f) in calls(served) {
        let (Some((NFSPROC3_WRITE, args)), Some(c)) = (nfs3_call(f), f.v1().and_then(|h| h.body.chunks())) else {
            continue;
        };
        // WRITE3args begins as READ3args does: file, offset, count.
        let Some(count) = read_count(args) else { continue };
        // The data item's chunk: the read segments at the one non-zero position.
        let Some(position) = c.reads.iter().map(|s| s.position).find(|p| *p != 0) else { continue };
        let length: u64 = c.reads.iter().filter(|s| s.position == position).map(|s| s.target.length as u64).sum();
        let count = count as u64;
        n += 1;
        if length == count.next_multiple_of(4) && length != count {
            padded = Some(format!("a {count}-byte WRITE's chunk holds {length} bytes, its XDR pad included"));
        } else if length != count {
            let got = format!(
                "a {count}-byte WRITE's chunk holds {length} bytes (neither the data nor the data and its pad): {f}"
            );
            return Err(Verdict::fail(want, got));
        }
    }
    match (n, padded) {
        (0, _) => Err(Verdict::unsupported(want, "no WRITE with its data in a read chunk was observed")),
        (_, Some(got)) => Ok(Verdict::lax(want, got)),
        (n, None) => Ok(Verdict::pass(want, format!("{n} WRITEs with read chunks as long as their data"))),
    }
}

fn one_call_at_start(served: &[Served<'_>]) -> Judged {
    let want = "on every connection, no second call before the first reply";
    let mut n = 0;
    for s in served {
        let mut first: Option<u32> = None;
        for (_, e) in &s.events {
            match e {
                Seen::Reply(_) => break,
                Seen::Call(f) => {
                    let Some(xid) = f.fixed().map(|h| h.xid) else { continue };
                    match first {
                        None => first = Some(xid),
                        // The same call sent again is still one call.
                        Some(x) if x == xid => {}
                        Some(x) => {
                            let got =
                                format!("call {xid:#010x} was sent before any reply to {x:#010x} on a new connection");
                            return Err(Verdict::fail(want, got));
                        }
                    }
                }
                _ => {}
            }
        }
        n += usize::from(first.is_some());
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no connection carried a call"));
    }
    Ok(Verdict::pass(want, format!("{n} connections began with one call and waited for its reply")))
}

pub static CHECKS: [ClientCheck; 3] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.6/requester-write-chunk-covers-read",
            judges: &["rfc8166/3.4.6#1", "rfc8166/4.3.2.2#2"],
            acceptable: "write chunks at least as long as each READ's count",
            rationale: "A responder cannot put a result into a chunk too small for it: the READ fails (ERR_CHUNK or a system error) where it would have succeeded.",
            groups: &["client", "write-chunks"],
            broken_by: &[("short-write-chunk", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: write_chunk_covers_read,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.5.2/requester-read-chunk-length",
            judges: &["rfc8166/3.4.4.4#1", "rfc8166/3.4.5.2#1", "rfc8166/3.4.5.2#2", "rfc8166/3.4.5.2#3"],
            acceptable: "read chunks as long as the WRITE's count; the count rounded up to four is pass-lax",
            rationale: "A responder rebuilds the argument from the chunk: a length that is neither makes the arguments inconsistent (GARBAGE_ARGS, RFC 8166 4.5.2).",
            groups: &["client", "read-chunks"],
            broken_by: &[("read-chunk-roundup", Outcome::PassLax), ("read-chunk-extra", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: read_chunk_length,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.3.3/requester-one-call-at-start",
            judges: &["rfc5666/6.1#2", "rfc8166/3.3.3#1"],
            acceptable: "one call on a new connection until its reply, then as many as the grant",
            rationale: "Until the first reply the requester does not know the grant; a responder that granted one credit has one receive posted, and a second Send meets none (receiver not ready).",
            groups: &["client", "credits"],
            broken_by: &[("burst-at-start", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: one_call_at_start,
    },
];
