//! The client catalogue: checks that judge a requester from what the responder saw while
//! serving it (`rpcrdma-harness serve`): its private data, the procedures it sends, its chunk
//! construction and its respect for the credit grant and the inline threshold. Every
//! observed message is decoded once, into a frame, before any check looks at it.
//!
//! Passive checks ([`CHECKS`], [`sizing::CHECKS`], [`reduction::CHECKS`]) judge every
//! connection as served; active ones ([`scenarios::CHECKS`], [`credits::CHECKS`],
//! [`cm::CHECKS`], [`inline::CHECKS`], [`ccp::CHECKS`], [`misuse::CHECKS`]) each judge the
//! connections of one `serve` scenario ([`Scenario`]): a reply the responder replaced on
//! purpose, its CM private data, or its CCP limits. [`all`] lists both.

mod calls;
pub mod ccp;
pub mod cm;
pub mod credits;
pub mod inline;
pub mod misuse;
pub mod nfs4;
pub mod reduction;
pub mod reverse;
pub mod scenarios;
mod served;
pub mod sizing;
pub mod undetermined;
pub mod v2;

pub use served::{transcript, ClientCheck, Seen, Served};

use calls::{calls, is_reverse_answer, nfs3_call, plural, read_count, reverse_xids};

use std::time::Duration;

use rpcrdma_codec::check::{rules, Rule};
use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::Profile;

use rpcrdma_peers::observe::ObservedConnection;
use rpcrdma_peers::proto::nfs3::{NFSPROC3_READ, NFSPROC3_READDIR, NFSPROC3_READDIRPLUS};
use rpcrdma_peers::responder::Scenario;

use crate::engine::{CheckInfo, CheckResult, Judged, Outcome, Verdict};
use crate::frame::v1::Body;

fn private_data_valid(served: &[Served<'_>]) -> Judged {
    let want = "RFC 8797 private data, version 1, reserved bits zero, on every connection";
    if served.is_empty() {
        return Err(Verdict::unsupported(want, "no connection was made"));
    }
    for (i, s) in served.iter().enumerate() {
        match private_data::find(&s.conn.private_data, &s.profile) {
            Ok(Lookup::Found { data, .. }) if data.reserved == 0 => {}
            Ok(Lookup::Found { data, .. }) => {
                return Err(Verdict::fail(want, format!("connection {i}: reserved bits {:#04x}", data.reserved)))
            }
            Ok(Lookup::Absent) => {
                return Err(Verdict::unsupported(want, format!("connection {i}: no RFC 8797 private data")))
            }
            Ok(Lookup::UnrecognisedVersion { version, .. }) => {
                return Err(Verdict::fail(want, format!("connection {i}: version {version}")))
            }
            Err(e) => return Err(Verdict::fail(want, format!("connection {i}: {e}"))),
        }
    }
    Ok(Verdict::pass(want, format!("{} {} with valid private data", served.len(), plural(served.len(), "connection"))))
}

/// Every call that breaks one of `broken` (RFC 8166 semantic rules for a requester).
fn call_rule(served: &[Served<'_>], broken: &[Rule], want: &str) -> Judged {
    let mut n = 0;
    for (_, f) in calls(served) {
        let Some(h) = f.v1() else { continue };
        n += 1;
        if let Some(v) = h.violations.iter().find(|v| broken.contains(v.rule)) {
            return Err(Verdict::fail(want, format!("{v} in {f}")));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no call was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} calls observed")))
}

fn no_retired_procs(served: &[Served<'_>]) -> Judged {
    call_rule(
        served,
        &[rules::DONE_SENT, rules::MSGP_SENT, rules::ERROR_FROM_REQUESTER],
        "no RDMA_DONE, RDMA_MSGP or RDMA_ERROR from the requester",
    )
}

fn xid_match(served: &[Served<'_>]) -> Judged {
    call_rule(served, &[rules::XID_MISMATCH], "rdma_xid equal to the RPC xid in every RDMA_MSG call")
}

fn positions_aligned(served: &[Served<'_>]) -> Judged {
    call_rule(
        served,
        &[rules::POSITION_ALIGNMENT, rules::READ_CHUNKS_OVERLAP, rules::POSITION_BEYOND_PAYLOAD],
        "read positions multiples of four, within the payload, without overlap",
    )
}

fn nomsg_carries_payload(served: &[Served<'_>]) -> Judged {
    let want = "every RDMA_NOMSG call carries its payload in a position-zero read chunk";
    let mut n = 0;
    for (_, f) in calls(served) {
        if let Some(Body::NoMsg { chunks }) = f.v1().map(|h| &h.body) {
            n += 1;
            if !chunks.reads.iter().any(|r| r.position == 0) {
                return Err(Verdict::fail(want, format!("no position-zero chunk in {f}")));
            }
        }
    }
    // The precondition: an RDMA_NOMSG call, which a requester sends for a call too long for
    // inline with nothing DDP-eligible in it (RFC 8166 3.5.3; xprtrdma's rpcrdma_marshal_req()
    // does). Without one the workload gave no chance, whatever the requester supports.
    if n == 0 {
        return Err(Verdict::inconclusive(
            want,
            "no RDMA_NOMSG call was observed: no call too long for inline without DDP-eligible data was sent",
        ));
    }
    Ok(Verdict::pass(want, format!("{n} long calls, each with a position-zero chunk")))
}

fn within_grant(served: &[Served<'_>]) -> Judged {
    let want = "never more calls outstanding than the credits granted";
    // The precondition (RFC 8166 3.3.1): a requester with calls outstanding up to the grant,
    // one more call away from breaking it. Below the grant it was never put to the test.
    // The most calls outstanding at once, and the grant in force then (a scenario's reply may
    // have raised it above the configured grant).
    let (mut worst, mut worst_grant, mut reached) = (0usize, 0u32, None);
    for s in served {
        // A scenario's reply may grant more than the responder's configured grant.
        let (mut outstanding, mut grant) = (0usize, s.conn.grant);
        // The reverse direction's calls and replies are accounted apart (RFC 8167 4.1).
        let reverse = reverse_xids(s);
        for (_, e) in &s.events {
            match e {
                Seen::Call(f) if is_reverse_answer(f, &reverse) => {}
                Seen::Reply(f) if f.is_rpc_call() => {}
                // Only messages that expect a reply count as requests.
                Seen::Call(f) if f.carries_rpc_message() => {
                    outstanding += 1;
                    if outstanding > worst {
                        (worst, worst_grant) = (outstanding, grant);
                    }
                    if outstanding > grant as usize {
                        let got = format!("{outstanding} calls outstanding with a grant of {grant}");
                        return Err(Verdict::fail(want, got));
                    }
                    if outstanding == grant as usize {
                        reached.get_or_insert(grant);
                    }
                }
                Seen::Reply(f) => {
                    grant = grant.max(f.fixed().map_or(0, |h| h.credit));
                    outstanding = outstanding.saturating_sub(1);
                }
                _ => {}
            }
        }
    }
    if worst == 0 {
        return Err(Verdict::unsupported(want, "no call was observed"));
    }
    let Some(grant) = reached else {
        let got = format!(
            "at most {worst} outstanding (under a grant of {worst_grant}), never as many as the grant on any connection: the requester never had to hold a call back"
        );
        return Err(Verdict::inconclusive(want, got));
    };
    Ok(Verdict::pass(want, format!("at most {worst} outstanding, the grant of {grant} reached and never exceeded")))
}

fn inline_within_threshold(served: &[Served<'_>]) -> Judged {
    let want = "no Send larger than our advertised receive size";
    for s in served {
        for (_, e) in &s.events {
            if let Seen::ReceiveFailed(st) = e {
                let size = s.conn.receive_size;
                let got = format!("a receive failed ({}): the requester overran our {size}-byte buffer", st.name());
                return Err(Verdict::fail(want, got));
            }
        }
    }
    match calls(served).count() {
        0 => Err(Verdict::unsupported(want, "no call was observed")),
        n => Ok(Verdict::pass(want, format!("{n} calls within the threshold"))),
    }
}

fn write_chunk_no_pad_space(served: &[Served<'_>]) -> Judged {
    let want = "write chunks for READ no longer than the count requested (no space for the XDR pad)";
    let mut n = 0;
    for (_, f) in calls(served) {
        let (Some((NFSPROC3_READ, args)), Some(c)) = (nfs3_call(f), f.v1().and_then(|h| h.body.chunks())) else {
            continue;
        };
        let Some(count) = read_count(args) else { continue };
        if let Some(w) = c.writes.first() {
            n += 1;
            let length = crate::frame::v1::Chunks::write_length(w);
            if length > count as u64 {
                let got = format!("a READ of {count} bytes offered a {length}-byte write chunk ({} segments)", w.len());
                return Ok(Verdict::lax(want, got));
            }
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no READ with a write chunk was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} READs with write chunks sized to their count")))
}

fn reply_chunk_when_needed(served: &[Served<'_>]) -> Judged {
    let want =
        "a reply chunk (or, for READ, a write chunk) on every call whose reply may exceed our reply inline threshold";
    let mut n = 0;
    for (s, f) in calls(served) {
        let (Some((proc_, args)), Some(lists)) = (nfs3_call(f), f.v1().and_then(|h| h.body.chunks())) else {
            continue;
        };
        // READDIR3args ends with count and READDIRPLUS3args with maxcount: the largest reply
        // (RFC 1813 3.3.16, 3.3.17).
        let params = private_data::effective(&s.conn.private_data, &s.profile).params;
        let threshold = params.receive_size().min(4096);
        let big = match proc_ {
            NFSPROC3_READDIR | NFSPROC3_READDIRPLUS => args
                .len()
                .checked_sub(4)
                .is_some_and(|at| u32::from_be_bytes([args[at], args[at + 1], args[at + 2], args[at + 3]]) > threshold),
            NFSPROC3_READ => read_count(args).is_some_and(|k| k > threshold) && lists.writes.is_empty(),
            _ => false,
        };
        if big {
            n += 1;
            if lists.reply.is_none() {
                return Err(Verdict::fail(want, format!("no reply chunk on {f}")));
            }
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no call with a possibly long reply was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} calls offered a reply chunk")))
}

pub static CHECKS: [ClientCheck; 9] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/4/requester-private-data",
            judges: &["~rfc8797/1#1", "~rfc8797/4#2"],
            acceptable: "RFC 8797 private data of version 1 with the reserved bits zero; none at all is unsupported",
            rationale: "A server sizes its replies from the client's advertised receive size.",
            groups: &["client", "private-data"],
            broken_by: &[("bad-private-data", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: private_data_valid,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.6/requester-no-retired-procs",
            judges: &["~rfc8166/4.2.4#3", "~rfc8166/4.6.1#1", "rfc8166/4.6.2#1"],
            acceptable: "only RDMA_MSG and RDMA_NOMSG from the requester",
            rationale: "Retired procedures are not interoperable; errors from requesters loop.",
            groups: &["client", "header"],
            broken_by: &[("send-rdma-done", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: no_retired_procs,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.2.1/requester-xid-match",
            judges: &["rfc8166/4.2.1#1"],
            acceptable: "rdma_xid equal to the RPC xid in every RDMA_MSG call",
            rationale: "A mismatch is an XDR error every responder must refuse.",
            groups: &["client", "header"],
            broken_by: &[("xid-mismatch", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: xid_match,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.5/requester-positions",
            judges: &["rfc8166/3.4.5#1", "rfc8166/3.4.5#2"],
            acceptable: "aligned positions within the payload, chunks not overlapping",
            rationale: "Responders refuse such calls with ERR_CHUNK.",
            groups: &["client", "read-chunks"],
            broken_by: &[("unaligned-position", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: positions_aligned,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.2.4/requester-nomsg-payload",
            judges: &["rfc8166/4.2.4#2"],
            acceptable: "a position-zero read chunk in every RDMA_NOMSG call",
            rationale: "Without it the responder has no call to process.",
            groups: &["client", "read-chunks"],
            broken_by: &[("nomsg-without-payload", Outcome::Fail)],
            precondition: Some("an RDMA_NOMSG call: a call too long for inline with no DDP-eligible data (a long call, RFC 8166 3.5.3)"),
        },
        scenario: None,
        judge: nomsg_carries_payload,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.3.1/requester-within-grant",
            judges: &["rfc8166/3.3.1#1"],
            acceptable: "never more outstanding calls than the grant (a requester that never reaches the grant is inconclusive)",
            rationale: "Exceeding the grant hits receiver-not-ready and kills the connection.",
            groups: &["client", "credits"],
            broken_by: &[("exceed-grant", Outcome::Fail)],
            precondition: Some("as many calls outstanding as the grant on some connection: the requester had more to send than the grant let it (`serve --grant` small enough for the workload)"),
        },
        scenario: None,
        judge: within_grant,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.5.3/requester-inline-threshold",
            judges: &["rfc8166/3.5.3#1", "rfc8797/3.1#1"],
            acceptable: "no receive failure at the responder",
            rationale: "An oversized Send fails the connection.",
            groups: &["client", "inline"],
            broken_by: &[("oversized-inline", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: inline_within_threshold,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.4.6.2/requester-write-chunk-size",
            judges: &["rfc8166/3.4.6.2#1"],
            acceptable: "write chunks no longer than the READ count (longer is pass-lax)",
            rationale: "Linux clients before 4.9 added a pad segment; responders must cope, requesters should not.",
            groups: &["client", "write-chunks", "padding"],
            broken_by: &[("write-chunk-pad-segment", Outcome::PassLax)],
            precondition: None,
        },
        scenario: None,
        judge: write_chunk_no_pad_space,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.3.3/requester-reply-chunk",
            judges: &["rfc8166/4.3.3#1"],
            acceptable: "a reply chunk on READDIR or READDIRPLUS with a count over the threshold, and on READ without a write chunk",
            rationale: "Otherwise the responder cannot send a long reply at all.",
            groups: &["client", "reply-chunk"],
            broken_by: &[("no-reply-chunk", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: reply_chunk_when_needed,
    },
];

/// Every client check: the passive ones, then the scenarios.
pub fn all() -> impl Iterator<Item = &'static ClientCheck> {
    CHECKS
        .iter()
        .chain(sizing::CHECKS.iter())
        .chain(scenarios::CHECKS.iter())
        .chain(credits::CHECKS.iter())
        .chain(cm::CHECKS.iter())
        .chain(inline::CHECKS.iter())
        .chain(reduction::CHECKS.iter())
        .chain(ccp::CHECKS.iter())
        .chain(misuse::CHECKS.iter())
        .chain(v2::CHECKS.iter())
        .chain(reverse::CHECKS.iter())
        .chain(nfs4::CHECKS.iter())
        .chain(undetermined::CHECKS.iter())
}

/// Whether a check judges what only an NFSv4.1 requester sends: the reverse direction
/// ([`reverse`]), the NFS version 4 binding ([`nfs4`]), and a message of undetermined
/// direction on a connection with a back channel ([`undetermined`]).
pub fn speaks_nfs41(c: &ClientCheck) -> bool {
    reverse::CHECKS.iter().chain(nfs4::CHECKS.iter()).chain(undetermined::CHECKS.iter()).any(|r| std::ptr::eq(r, c))
}

/// The scenarios `checks` need played, each once, in order.
pub fn scenarios_of<'a>(checks: impl IntoIterator<Item = &'a ClientCheck>) -> Vec<Scenario> {
    let mut out = Vec::new();
    for s in checks.into_iter().filter_map(|c| c.scenario) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Judges the observations with every client check (see [`judge`]).
pub fn judge_all(conns: &[ObservedConnection], profile: &Profile) -> Vec<CheckResult> {
    judge(&all().collect::<Vec<_>>(), conns, profile)
}

/// Judges the observations with `checks`: a passive check sees every connection, an active
/// one the connections its scenario was played on; the Version Two checks ([`v2`]) see only
/// the connections that began in Version Two, the others only the rest. The transcript of
/// each result is the conversation that check saw (from the responder's side). Every
/// message is decoded under the run's `profile`.
pub fn judge(checks: &[&'static ClientCheck], conns: &[ObservedConnection], profile: &Profile) -> Vec<CheckResult> {
    let served: Vec<Served<'_>> = conns.iter().map(|c| Served::of(c, profile)).collect();
    checks
        .iter()
        .map(|c| {
            let mine: Vec<Served<'_>> = match c.scenario {
                None => served.clone(),
                Some(s) => served.iter().filter(|x| x.conn.scenario == Some(s.name())).cloned().collect(),
            };
            let played = !mine.is_empty();
            let mine: Vec<Served<'_>> = mine.into_iter().filter(|x| v2::speaks_v2(x) == v2::is_v2(c)).collect();
            let v = match (c.scenario, played) {
                (Some(s), false) => {
                    Verdict::unsupported(c.info.acceptable, format!("scenario {} was not played", s.name()))
                }
                _ => (c.judge)(&mine).unwrap_or_else(|v| v),
            };
            let transcript = if v.outcome == Outcome::Pass { Vec::new() } else { transcript(&mine) };
            CheckResult {
                check: &c.info,
                outcome: v.outcome,
                expected: v.expected,
                actual: v.actual,
                connection_survived: None,
                transcript,
                duration: Duration::ZERO,
                peer: Default::default(),
            }
        })
        .collect()
}
