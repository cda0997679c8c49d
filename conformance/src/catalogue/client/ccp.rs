//! Active client checks on the Connection Configuration Protocol (RFC 5666 6.2): in the
//! `ccp-limits` scenario the responder answers CONF_RDMA with maxcall_sendsize 1024 and
//! maxrdmaread 0, and the requester's later calls on that connection must keep to both. RFC
//! 8166 A.1 retired CCP (no known client sends CONF_RDMA, Linux's included): a requester that
//! never asks is unsupported, not failed.

use rpcrdma_codec::ccp::{ConfigRdmaReply, CONF_RDMA, PROGRAM, VERSION};
use rpcrdma_codec::xdr::Reader;
use rpcrdma_peers::responder::Scenario;

use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v1::Body;
use crate::frame::Frame;

/// The length of an RDMA_MSG's inline RPC message.
fn inline_rpc_len(f: &Frame) -> Option<usize> {
    match &f.v1()?.body {
        Body::Msg { payload, .. } => Some(payload.len()),
        _ => None,
    }
}

/// Each connection where CONF_RDMA was answered: the limits returned, and the requester's
/// calls after the answer.
fn after_conf_rdma<'a>(served: &'a [Served<'a>]) -> Vec<(ConfigRdmaReply, Vec<&'a Frame>)> {
    let mut out = Vec::new();
    for s in served {
        let mut conf: Option<u32> = None;
        let mut found: Option<(ConfigRdmaReply, Vec<&Frame>)> = None;
        for (_, e) in &s.events {
            match e {
                Seen::Call(f) if found.is_some() => found.as_mut().expect("some").1.push(f),
                Seen::Call(f) => {
                    let rpc = f.rpc.as_ref().and_then(|r| r.as_ref().ok());
                    if let Some(r) =
                        rpc.filter(|r| r.kind == RpcKind::Call { prog: PROGRAM, vers: VERSION, proc_: CONF_RDMA })
                    {
                        conf = Some(r.xid);
                    }
                }
                Seen::Reply(f) if conf.is_some() && f.xid() == conf => {
                    let body = f.rpc.as_ref().and_then(|r| r.as_ref().ok()).map(|r| f.slice(r.body.clone()));
                    if let Some(limits) = body.and_then(|b| ConfigRdmaReply::decode(&mut Reader::new(b)).ok()) {
                        found = Some((limits, Vec::new()));
                    }
                    conf = None;
                }
                _ => {}
            }
        }
        out.extend(found);
    }
    out
}

const NO_CCP: &str = "the requester did not send CONF_RDMA (RFC 8166 A.1 retired CCP)";

fn within_maxcall(served: &[Served<'_>]) -> Judged {
    let want = "after CONF_RDMA returns maxcall_sendsize, no inline RPC call larger than it";
    let conns = after_conf_rdma(served);
    if conns.is_empty() {
        return Err(Verdict::unsupported(want, NO_CCP));
    }
    let (mut n, mut largest, mut limit) = (0usize, 0usize, 0u32);
    for (limits, calls) in &conns {
        limit = limits.maxcall_sendsize;
        for f in calls {
            let Some(len) = inline_rpc_len(f) else { continue };
            n += 1;
            largest = largest.max(len);
            if len > limits.maxcall_sendsize as usize {
                let got = format!("a {len}-byte inline call after CONF_RDMA returned maxcall_sendsize {limit}: {f}");
                return Err(Verdict::fail(want, got));
            }
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no inline call followed CONF_RDMA"));
    }
    Ok(Verdict::pass(want, format!("{n} inline calls after maxcall_sendsize {limit}, the largest {largest} bytes")))
}

fn no_reads_at_zero(served: &[Served<'_>]) -> Judged {
    let want = "after CONF_RDMA returns maxrdmaread 0, no call with a read chunk (none needing RDMA Read)";
    let conns: Vec<_> = after_conf_rdma(served).into_iter().filter(|(l, _)| l.maxrdmaread == 0).collect();
    if conns.is_empty() {
        return Err(Verdict::unsupported(want, NO_CCP));
    }
    let mut n = 0usize;
    for f in conns.iter().flat_map(|(_, calls)| calls) {
        let Some(c) = f.v1().and_then(|h| h.body.chunks()) else { continue };
        n += 1;
        if !c.reads.is_empty() {
            return Err(Verdict::fail(want, format!("a call with a read chunk after maxrdmaread 0: {f}")));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no call followed CONF_RDMA"));
    }
    Ok(Verdict::pass(want, format!("{n} calls after maxrdmaread 0, none with a read chunk")))
}

pub static CHECKS: [ClientCheck; 2] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc5666/6.2/requester-within-maxcall",
            judges: &["rfc5666/6.2#3"],
            acceptable: "after CONF_RDMA returns maxcall_sendsize 1024, no inline RPC call over 1024 bytes on that connection; no CONF_RDMA is unsupported",
            rationale: "A server that returned a smaller maxcall_sendsize posted receives that small: a larger inline call fails.",
            groups: &["client", "scenario", "ccp", "inline"],
            broken_by: &[("ignore-ccp-limits", Outcome::Fail)],
            precondition: None,
        },
        scenario: Some(Scenario::CcpLimits),
        judge: within_maxcall,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc5666/6.2/requester-no-reads-at-zero",
            // In part: it judges the other reading of maxrdmaread (expectations::READINGS).
            judges: &["~rfc5666/6.2#5"],
            acceptable: "after CONF_RDMA returns maxrdmaread 0, no call with a read chunk on that connection; no CONF_RDMA is unsupported",
            rationale: "A server that allows no RDMA Read cannot fetch a read chunk: such a call cannot be served. This judges the other reading of RFC 5666 6.2's maxrdmaread (ORD: a responder's 0 counts the RDMA Reads it can issue, and \"the peer MUST NOT issue requests that require RDMA Read\" binds the requester); under the catalogue's reading (IRD: docs/architecture.md, statements read two ways) a responder's 0 bounds RDMA Reads a Version One requester never issues, so this check is unsupported unless the peer's profile chooses the ORD reading (\"readings\": {\"rfc5666/6.2/maxrdmaread\": \"ord\"}).",
            groups: &["client", "scenario", "ccp", "read-chunks"],
            broken_by: &[("ignore-ccp-limits", Outcome::Fail)],
            precondition: None,
        },
        scenario: Some(Scenario::CcpLimits),
        judge: no_reads_at_zero,
    },
];
