//! Passive client checks on how a requester reduces and frames its calls (RFC 8166 3.4, 3.5.3,
//! 4.2.2): only DDP-eligible items reduced (for NFSv3, RFC 8267 4: WRITE data and SYMLINK
//! pathnames in read chunks; write chunks for READ and READLINK results), a reduced WRITE's
//! data length word left inline and its pad removed, position-zero chunks padded, and
//! rdma_vers 1.

use rpcrdma_codec::xdr::Reader;
use rpcrdma_peers::proto::nfs3::{NFSPROC3_READ, NFSPROC3_WRITE};

use super::calls::{calls, nfs3_call};
use super::served::{ClientCheck, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// NFSPROC3_READLINK and NFSPROC3_SYMLINK (RFC 1813 3.3.5, 3.3.10).
const NFSPROC3_READLINK: u32 = 5;
const NFSPROC3_SYMLINK: u32 = 10;

/// The inline WRITE3args of each NFSv3 WRITE whose data is in a read chunk, with the frame.
fn reduced_writes<'a>(served: &'a [Served<'a>]) -> impl Iterator<Item = (&'a [u8], &'a crate::frame::Frame)> {
    calls(served).filter_map(|(_, f)| {
        let (NFSPROC3_WRITE, args) = nfs3_call(f)? else { return None };
        let c = f.v1()?.body.chunks()?;
        c.reads.iter().any(|r| r.position != 0).then_some((args, f))
    })
}

/// WRITE3args up to its data: (count, stable, the data length word if present, what follows).
fn write_head(args: &[u8]) -> Option<(u32, Option<u32>, usize)> {
    let mut r = Reader::new(args);
    r.opaque("file", 64).ok()?;
    r.u64("offset").ok()?;
    let count = r.u32("count").ok()?;
    r.u32("stable").ok()?;
    let len = r.u32("data").ok();
    Some((count, len, r.remaining()))
}

fn count_stays_inline(served: &[Served<'_>]) -> Judged {
    let want =
        "every reduced WRITE keeps its data length word inline, equal to the count, the data itself in the chunk";
    let mut n = 0;
    for (args, f) in reduced_writes(served) {
        let Some((count, len, _)) = write_head(args) else { continue };
        n += 1;
        if len != Some(count) {
            let got = match len {
                None => format!("a reduced WRITE of {count} bytes without the data length word inline: {f}"),
                Some(l) => format!("a reduced WRITE of {count} bytes whose inline data length word reads {l}: {f}"),
            };
            return Err(Verdict::fail(want, got));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no WRITE with its data in a read chunk was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} reduced WRITEs, each with its length word inline")))
}

fn no_roundup_left(served: &[Served<'_>]) -> Judged {
    let want = "every reduced WRITE's inline arguments end at the data length word (no pad or data left)";
    let mut n = 0;
    for (args, f) in reduced_writes(served) {
        let Some((count, Some(_), left)) = write_head(args) else { continue };
        n += 1;
        if left != 0 {
            let got = format!("{left} bytes left inline after a reduced {count}-byte WRITE's data length word: {f}");
            return Err(Verdict::fail(want, got));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no WRITE with its data in a read chunk was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} reduced WRITEs with nothing after the length word")))
}

fn long_call_padded(served: &[Served<'_>]) -> Judged {
    let want = "every position-zero read chunk a multiple of four bytes long (its XDR pads included)";
    let mut n = 0;
    for (_, f) in calls(served) {
        let Some(c) = f.v1().and_then(|h| h.body.chunks()) else { continue };
        let zero: Vec<_> = c.reads.iter().filter(|r| r.position == 0).collect();
        if zero.is_empty() {
            continue;
        }
        n += 1;
        let length: u64 = zero.iter().map(|r| r.target.length as u64).sum();
        if length % 4 != 0 {
            return Err(Verdict::fail(want, format!("a {length}-byte position-zero chunk: {f}")));
        }
    }
    // The precondition: a long call (RFC 8166 3.5.3), one too long for inline with no
    // DDP-eligible data; without one the workload gave no chance.
    if n == 0 {
        return Err(Verdict::inconclusive(
            want,
            "no call with a position-zero read chunk was observed: no call too long for inline without DDP-eligible data was sent",
        ));
    }
    Ok(Verdict::pass(want, format!("{n} position-zero chunks, each a multiple of four long")))
}

fn eligible_only(served: &[Served<'_>]) -> Judged {
    let want = "NFSv3 calls reduce only DDP-eligible items: read chunks past position zero in WRITE and SYMLINK, write chunks in READ and READLINK";
    let mut n = 0;
    for (_, f) in calls(served) {
        let (Some((proc_, _)), Some(c)) = (nfs3_call(f), f.v1().and_then(|h| h.body.chunks())) else { continue };
        n += 1;
        if c.reads.iter().any(|r| r.position != 0) && !matches!(proc_, NFSPROC3_WRITE | NFSPROC3_SYMLINK) {
            return Err(Verdict::fail(want, format!("NFSv3 procedure {proc_} with an argument in a read chunk: {f}")));
        }
        if !c.writes.is_empty() && !matches!(proc_, NFSPROC3_READ | NFSPROC3_READLINK) {
            return Err(Verdict::fail(want, format!("NFSv3 procedure {proc_} offering a write chunk: {f}")));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no NFSv3 call sent inline was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} NFSv3 calls, chunks only for DDP-eligible items")))
}

fn version_one(served: &[Served<'_>]) -> Judged {
    let want = "rdma_vers 1 in every call (2 only for Version Two)";
    let mut n = 0;
    for (_, f) in calls(served) {
        let Some(h) = f.fixed() else { continue };
        n += 1;
        if !matches!(h.vers, 1 | 2) {
            return Err(Verdict::fail(want, format!("rdma_vers {} in {f}", h.vers)));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no call was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} calls, each of version 1 (or 2)")))
}

pub static CHECKS: [ClientCheck; 5] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.4.1/requester-count-stays-inline",
            judges: &["rfc8166/3.4.4.1#1"],
            acceptable: "each WRITE with its data in a read chunk keeps the data's length word inline, equal to the count",
            rationale: "A responder rebuilds the arguments from the payload and the chunk: a length word moved into the chunk shifts every byte after it.",
            groups: &["client", "read-chunks"],
            broken_by: &[("count-in-chunk", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: count_stays_inline,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.4.4/requester-no-roundup-inline",
            judges: &["rfc8166/3.4.4.4#2"],
            acceptable: "each WRITE with its data in a read chunk ends its inline arguments at the data's length word",
            rationale: "A pad left behind misaligns the rest of the payload stream, and the position of the chunk with it.",
            groups: &["client", "read-chunks", "padding"],
            broken_by: &[("pad-left-inline", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: no_roundup_left,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.5.3/requester-long-call-padded",
            judges: &["rfc8166/3.5.3#5"],
            acceptable: "each position-zero read chunk a multiple of four bytes long",
            rationale: "An RPC message is a whole number of XDR words: a chunk without its last pad is cut short, and the responder's decoding fails.",
            groups: &["client", "read-chunks", "padding"],
            broken_by: &[("long-call-unpadded", Outcome::Fail)],
            precondition: Some("a call with a position-zero read chunk: a call too long for inline with no DDP-eligible data (a long call, RFC 8166 3.5.3)"),
        },
        scenario: None,
        judge: long_call_padded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.2/requester-reduces-eligible-only",
            judges: &["rfc8166/3.4.2#2", "rfc8166/6.1#1"],
            acceptable: "read chunks past position zero only in NFSv3 WRITE and SYMLINK, write chunks only in READ and READLINK (RFC 8267 4); other programs are not judged",
            rationale: "A responder only looks for reduced items where the Upper-Layer Binding allows them: any other reduction is an argument it cannot rebuild.",
            groups: &["client", "read-chunks", "write-chunks"],
            broken_by: &[("reduce-ineligible", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: eligible_only,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.2.2/requester-version-one",
            judges: &["rfc8166/4.2.2#1"],
            acceptable: "rdma_vers 1 in every call (2 where the requester speaks Version Two); any other value fails",
            rationale: "No other version is defined: a call with another rdma_vers is a Version One call with a wrong version field, answered ERR_VERS.",
            groups: &["client", "header"],
            broken_by: &[("bad-version-call", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: version_one,
    },
];
