//! Client checks over Version Two requesters (draft-cel-nfsv4-rpcrdma-version-two-01): the
//! version a requester establishes and the calls it sends in Version Two form. They judge the
//! connections on which the requester's first call had rdma_vers 2 ([`speaks_v2`]); a
//! requester that speaks only Version One gets unsupported, with the reason, from each.
//! One is active: in `v2-backward-call` the responder calls the requester (backward direction)
//! before its reply to the first NFSv3 READ sent inline, and the check judges the answer.

use rpcrdma_codec::profile::V2Envelope;
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v2::{MsgType, Proc, VERSION};
use rpcrdma_codec::xcharext;
use rpcrdma_peers::responder::Scenario;

use super::calls::{calls, plural};
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v2::Body;
use crate::frame::Frame;

/// The Version One default inline threshold.
const V1_INLINE: usize = 1024;
/// The Version Two default inline threshold (2.3).
const V2_INLINE: usize = 4096;

/// Whether the requester's first call on the connection had rdma_vers 2.
pub fn speaks_v2(s: &Served<'_>) -> bool {
    s.events.iter().find_map(|(_, e)| match e {
        Seen::Call(f) => Some(f.fixed().is_some_and(|h| h.vers == VERSION)),
        _ => None,
    }) == Some(true)
}

/// Whether `c` is one of these checks (they see only Version Two connections; the others
/// only Version One ones).
pub fn is_v2(c: &ClientCheck) -> bool {
    CHECKS.iter().any(|x| std::ptr::eq(x, c))
}

/// Ends a check unsupported when no connection spoke Version Two.
fn any_v2(served: &[Served<'_>], want: &str) -> Result<(), Verdict> {
    if served.is_empty() {
        let why = "no connection began with a Version Two call: the requester speaks Version One only";
        return Err(Verdict::unsupported(want, why));
    }
    Ok(())
}

/// The requester's Version Two messages.
fn v2_calls<'a>(served: &'a [Served<'a>]) -> impl Iterator<Item = (&'a Served<'a>, &'a Frame)> {
    calls(served).filter(|(_, f)| f.fixed().is_some_and(|h| h.vers == VERSION))
}

/// Whether the call was a Version Two header decoded with `proc_`.
fn is_proc(f: &Frame, proc_: Proc) -> bool {
    f.fixed().is_some_and(|h| h.proc_ == proc_.0)
}

fn one_message_at_start(served: &[Served<'_>]) -> Judged {
    let want = "on every Version Two connection, one message until a non-error reply";
    any_v2(served, want)?;
    for (i, s) in served.iter().enumerate() {
        let mut first: Option<u32> = None;
        for (_, e) in &s.events {
            match e {
                Seen::Reply(f) if f.fixed().is_some_and(|h| h.proc_ != Proc::RDMA2_ERROR.0) => break,
                Seen::Call(f) => {
                    let Some(h) = f.fixed() else { continue };
                    match first {
                        None => first = Some(h.xid),
                        // The same call sent again is still one message.
                        Some(x) if x == h.xid => {}
                        Some(x) => {
                            let got = format!(
                                "connection {i}: {:#010x} was sent before any non-error reply to {x:#010x}",
                                h.xid
                            );
                            return Err(Verdict::fail(want, got));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let n = served.len();
    Ok(Verdict::pass(want, format!("{n} Version Two {} began with one message", plural(n, "connection"))))
}

fn msg_carries_payload(served: &[Served<'_>]) -> Judged {
    let want = "a payload after the transport header of every RDMA2_MSG";
    any_v2(served, want)?;
    let mut n = 0;
    for (_, f) in v2_calls(served).filter(|(_, f)| is_proc(f, Proc::RDMA2_MSG)) {
        n += 1;
        if f.v2().is_some_and(|h| h.payload.is_empty()) {
            return Err(Verdict::fail(want, format!("no payload in {f}")));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no RDMA2_MSG was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} RDMA2_MSG calls, each with a payload")))
}

/// The length of an RDMA2_ERROR's transport header: the fixed fields, rdma_err, and the
/// version range of RDMA2_ERR_VERS (4.2).
fn error_header_len(f: &Frame) -> usize {
    let err = f.bytes().get(16..20).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if err == Some(1) {
        28
    } else {
        20
    }
}

fn error_without_payload(served: &[Served<'_>]) -> Judged {
    let want = "no RDMA2_ERROR from the requester followed by a payload";
    any_v2(served, want)?;
    let mut n = 0;
    for (_, f) in v2_calls(served) {
        n += 1;
        if is_proc(f, Proc::RDMA2_ERROR) && f.bytes().len() > error_header_len(f) {
            let extra = f.bytes().len() - error_header_len(f);
            return Err(Verdict::fail(want, format!("{extra} bytes after the header of {f}")));
        }
    }
    Ok(Verdict::pass(want, format!("{n} Version Two {} observed", plural(n, "message"))))
}

/// Ends a check of rdma_direction or rdma_optdir unsupported under the -00 envelope, which
/// has neither field.
fn direction_fields(served: &[Served<'_>], want: &str) -> Result<(), Verdict> {
    if served.iter().any(|s| s.profile.v2_envelope == V2Envelope::Draft00) {
        return Err(Verdict::unsupported(want, "the -00 envelope (v2-00) has no rdma_direction or rdma_optdir"));
    }
    Ok(())
}

fn direction_is_msg_type(served: &[Served<'_>]) -> Judged {
    let want = "rdma_direction of every RDMA2_MSG equal to the msg_type of the RPC message it carries";
    any_v2(served, want)?;
    direction_fields(served, want)?;
    let mut n = 0;
    for (_, f) in v2_calls(served) {
        let (Some(h), Some(Ok(rpc))) = (f.v2(), f.rpc.as_ref()) else { continue };
        let Body::Msg { direction, .. } = &h.body else { continue };
        let msg_type = if matches!(rpc.kind, RpcKind::Call { .. }) { MsgType::CALL } else { MsgType::REPLY };
        n += 1;
        if *direction != Some(msg_type) {
            let got = format!("rdma_direction {direction:?} on an RPC message of msg_type {}: {f}", msg_type.0);
            return Err(Verdict::fail(want, got));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no RDMA2_MSG carrying an RPC message was observed"));
    }
    Ok(Verdict::pass(want, format!("{n} RDMA2_MSG {} with matching directions", plural(n, "call"))))
}

fn optional_without_payload_is_call(served: &[Served<'_>]) -> Judged {
    let want = "rdma_optdir CALL on every RDMA2_OPTIONAL without payload from the requester";
    any_v2(served, want)?;
    direction_fields(served, want)?;
    let mut n = 0;
    for (_, f) in v2_calls(served) {
        let Some(h) = f.v2() else { continue };
        let Body::Optional { dir, op, .. } = &h.body else { continue };
        if !h.payload.is_empty() {
            continue;
        }
        n += 1;
        if *dir != Some(MsgType::CALL) {
            let name = op.name().unwrap_or("an unknown opttype");
            return Err(Verdict::fail(want, format!("{name} with rdma_optdir {dir:?}: {f}")));
        }
    }
    if n == 0 {
        let mut why = "the requester sent no RDMA2_OPTIONAL without payload".to_string();
        if served.iter().any(|s| !xcharext::is_opttype(xcharext::ROPT_INITXCH, &s.profile)) {
            why.push_str(" (under rtrext-literal, the rtrext-03 XDR's opttypes 1..4, xcharext-02 has no opttypes)");
        }
        return Err(Verdict::unsupported(want, why));
    }
    Ok(Verdict::pass(want, format!("{n} RDMA2_OPTIONAL {} with rdma_optdir CALL", plural(n, "message"))))
}

fn optional_payload_direction(served: &[Served<'_>]) -> Judged {
    let want = "rdma_optdir of every RDMA2_OPTIONAL carrying an RPC message equal to its msg_type";
    any_v2(served, want)?;
    direction_fields(served, want)?;
    let mut n = 0;
    for (_, f) in v2_calls(served) {
        let Some(h) = f.v2() else { continue };
        let Body::Optional { dir, op, .. } = &h.body else { continue };
        // A continuation's partial payload does not say its msg_type: the group's first
        // transmission, which begins the RPC message, is judged.
        let Ok(m) = RpcMessage::decode(f.slice(h.payload.clone())) else { continue };
        let msg_type = if matches!(m.header, RpcHeader::Call(_)) { MsgType::CALL } else { MsgType::REPLY };
        n += 1;
        if *dir != Some(msg_type) {
            let name = op.name().unwrap_or("an unknown opttype");
            let got =
                format!("{name} with rdma_optdir {dir:?} carrying an RPC message of msg_type {}: {f}", msg_type.0);
            return Err(Verdict::fail(want, got));
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "the requester sent no RDMA2_OPTIONAL carrying an RPC message"));
    }
    Ok(Verdict::pass(want, format!("{n} RDMA2_OPTIONAL {} with matching rdma_optdir", plural(n, "message"))))
}

/// Whether the requester answered the backward call of `v2-backward-call`: an RDMA2_MSG with
/// rdma_direction REPLY carrying an RPC reply to it, on the same connection.
fn backward_call_answered(served: &[Served<'_>]) -> Judged {
    let want = "the backward-direction call answered with an RDMA2_MSG, rdma_direction REPLY, carrying its RPC reply";
    any_v2(served, want)?;
    let xid = Scenario::BACKWARD_XID;
    let found = served.iter().find_map(|s| {
        let at = s.events.iter().position(|(_, e)| matches!(e, Seen::Injected { .. }))?;
        Some((s, at))
    });
    let Some((s, at)) = found else {
        return Err(Verdict::unsupported(
            want,
            "the scenario's call (an NFSv3 READ sent inline in Version Two) never came",
        ));
    };
    let mut others = 0;
    for (_, e) in &s.events[at + 1..] {
        let Seen::Call(f) = e else { continue };
        let answers = matches!(f.rpc.as_ref(), Some(Ok(r)) if r.xid == xid && !matches!(r.kind, RpcKind::Call { .. }));
        if !answers {
            others += 1;
            continue;
        }
        return match f.v2().map(|h| &h.body) {
            // None: the -00 envelope, which has no rdma_direction (its RPC message is a reply).
            Some(Body::Msg { direction: Some(MsgType::REPLY) | None, .. }) => {
                Ok(Verdict::pass(want, format!("answered after {others} other {}: {f}", plural(others, "call"))))
            }
            _ => Err(Verdict::fail(want, format!("the answer is not a backward REPLY: {f}"))),
        };
    }
    let got = format!("the call {xid:#010x} was not answered ({others} other {} followed)", plural(others, "call"));
    if others == 0 {
        return Err(Verdict::unsupported(want, got));
    }
    Err(Verdict::fail(want, got))
}

fn inline_within_4096(served: &[Served<'_>]) -> Judged {
    let want = "no Send larger than 4096 bytes (or our advertised receive size, if larger)";
    any_v2(served, want)?;
    let mut n = 0;
    for s in served {
        let limit = V2_INLINE.max(s.conn.receive_size as usize);
        for (_, e) in &s.events {
            match e {
                Seen::Call(f) if f.bytes().len() > limit => {
                    return Err(Verdict::fail(want, format!("a {}-byte Send: {f}", f.bytes().len())));
                }
                Seen::Call(_) => n += 1,
                Seen::ReceiveFailed(st) => {
                    let got = format!(
                        "a receive failed ({}): the requester overran our {}-byte buffer",
                        st.name(),
                        s.conn.receive_size
                    );
                    return Err(Verdict::fail(want, got));
                }
                _ => {}
            }
        }
    }
    Ok(Verdict::pass(want, format!("{n} {} within 4096 bytes", plural(n, "message"))))
}

/// Whether the requester took each inline reply larger than the Version One threshold (and
/// within 4096 bytes): it sent another call on the same connection afterwards. A connection
/// that carried nothing after such a reply, while the requester went on on a new one, lost
/// it (the requester's receive was too small and the queue pair failed).
fn receives_4096(served: &[Served<'_>]) -> Judged {
    let want = "every inline reply of 1025 to 4096 bytes received: the requester went on on the same connection";
    any_v2(served, want)?;
    let mut n = 0;
    for (i, s) in served.iter().enumerate() {
        for (at, (_, e)) in s.events.iter().enumerate() {
            let Seen::Reply(f) = e else { continue };
            let len = f.bytes().len();
            if !(V1_INLINE + 1..=V2_INLINE).contains(&len) || f.fixed().is_none_or(|h| h.vers != VERSION) {
                continue;
            }
            n += 1;
            let went_on = s.events[at + 1..].iter().any(|(_, e)| matches!(e, Seen::Call(_)));
            if !went_on && i + 1 < served.len() {
                let got = format!(
                    "after our {len}-byte reply the requester sent nothing more on connection {i} \
                     and went on on a new one: {f}"
                );
                return Err(Verdict::fail(want, got));
            }
        }
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no inline reply of 1025 to 4096 bytes was sent"));
    }
    Ok(Verdict::pass(want, format!("{n} inline {} of 1025 to 4096 bytes taken", plural(n, "reply"))))
}

/// Whether the requester kept the connection on which the version was agreed: a connection
/// that carried no call after the first one, answered without error, while the requester
/// went on on a later connection, was dropped at the threshold change (5.2). (A requester
/// that disconnects is not always seen closing: the responder may find the connection gone
/// when it polls.)
fn connection_kept(served: &[Served<'_>]) -> Judged {
    let want = "the connection kept after the first non-error reply agrees Version Two";
    any_v2(served, want)?;
    let mut kept = 0;
    for (i, s) in served.iter().enumerate() {
        let agreed = s.events.iter().position(
            |(_, e)| matches!(e, Seen::Reply(f) if f.fixed().is_some_and(|h| h.vers == VERSION) && f.carries_rpc_message()),
        );
        let Some(at) = agreed else { continue };
        // Messages that expect a reply (ROPT_INITXCH is one-way).
        let more = s.events[at + 1..].iter().any(|(_, e)| matches!(e, Seen::Call(f) if f.carries_rpc_message()));
        if more {
            kept += 1;
        } else if i + 1 < served.len() {
            let got = format!(
                "connection {i} carried no call after the reply that agreed Version Two; \
                 the requester went on on a new one"
            );
            return Err(Verdict::fail(want, got));
        }
    }
    if kept == 0 {
        return Err(Verdict::unsupported(want, "no call followed the agreement of Version Two on any connection"));
    }
    Ok(Verdict::pass(want, format!("{kept} {} went on after the version was agreed", plural(kept, "connection"))))
}

pub static CHECKS: [ClientCheck; 10] = [
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/5/requester-one-at-start",
            judges: &["v2-01/5#1"],
            acceptable: "one message (the same one sent again counts once) until a non-error reply",
            rationale: "Until the version is agreed the requester knows neither the grant nor the threshold; a second Send may meet no receive.",
            groups: &["client", "v2", "credits"],
            broken_by: &[("burst-at-start", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: one_message_at_start,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/5.2/requester-keeps-connection",
            judges: &["v2-01/5.2#1"],
            acceptable: "further calls on the connection whose first reply agreed Version Two",
            rationale: "A requester that reconnects at the threshold change negotiates again on every connection.",
            groups: &["client", "v2", "inline"],
            broken_by: &[("v2-reconnect-after-negotiation", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: connection_kept,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/2.3/requester-receives-4096",
            judges: &["v2-01/2.3#1"],
            acceptable: "the requester goes on on the same connection after each inline reply of 1025 to 4096 bytes",
            rationale: "A responder sends replies up to 4096 bytes inline once Version Two is agreed; a requester with smaller receives loses the connection.",
            groups: &["client", "v2", "inline"],
            broken_by: &[("v2-receive-1024", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: receives_4096,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/2.3/requester-inline-4096",
            judges: &["v2-01/2.3#2"],
            acceptable: "no Send over 4096 bytes (or over our RFC 8797 receive size, if larger), no receive failure",
            rationale: "A larger Send overruns the responder's receive and fails the connection.",
            groups: &["client", "v2", "inline"],
            broken_by: &[("oversized-inline", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: inline_within_4096,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.1/requester-msg-payload",
            judges: &["v2-01/4.2.1#1"],
            acceptable: "a payload after every RDMA2_MSG header",
            rationale: "An RDMA2_MSG without payload carries no call; RDMA2_NOMSG is for calls in a read chunk.",
            groups: &["client", "v2", "header"],
            broken_by: &[("v2-msg-without-payload", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: msg_carries_payload,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.1/requester-error-no-payload",
            judges: &["v2-01/4.2.1#2"],
            acceptable: "no RDMA2_ERROR followed by a payload (the reference requester sends none at all)",
            rationale: "A requester sends no RDMA2_ERROR (RFC 8166 4.2.4 via 4.2.3); one that carries a payload is malformed too.",
            groups: &["client", "v2", "header"],
            broken_by: &[("v2-error-with-payload", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: error_without_payload,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.2/requester-direction",
            judges: &["v2-01/4.2.2#2"],
            acceptable: "rdma_direction CALL on every RDMA2_MSG carrying an RPC call (RDMA2_NOMSG calls, whose RPC message is in a read chunk, are not judged)",
            rationale: "A responder tells forward calls from backward replies by rdma_direction; a wrong one is a header error.",
            groups: &["client", "v2", "header"],
            broken_by: &[("v2-call-direction-reply", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: direction_is_msg_type,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.2/requester-optdir-call",
            judges: &["v2-01/4.2.2#4"],
            acceptable: "rdma_optdir CALL on every RDMA2_OPTIONAL without payload (the reference requester's ROPT_INITXCH)",
            rationale: "rdma_optdir is the only direction an RDMA2_OPTIONAL without payload has (3.2).",
            groups: &["client", "v2", "header"],
            broken_by: &[("v2-initxch-optdir-reply", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: optional_without_payload_is_call,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.2/requester-optdir-payload",
            judges: &["v2-01/4.2.2#3"],
            acceptable: "rdma_optdir CALL on every RDMA2_OPTIONAL that begins an RPC call (the reference requester's ROPT_XMTREQ); continuations are not judged",
            rationale: "A receiver tells a forward call from a backward reply by rdma_optdir before it reassembles the payload.",
            groups: &["client", "v2", "header"],
            broken_by: &[("v2-xmtreq-optdir-reply", Outcome::Fail)],
            precondition: None,
        },
        scenario: None,
        judge: optional_payload_direction,
    },
    ClientCheck {
        info: CheckInfo {
            id: "v2-01/4.2.2/requester-backward-direction",
            judges: &["v2-01/4.2.2#1"],
            acceptable: "a CB_NULL backward call (RDMA2_MSG, rdma_direction CALL) answered on the same connection with an RDMA2_MSG, rdma_direction REPLY, carrying an RPC reply (PROG_UNAVAIL will do)",
            rationale: "Callbacks (NFSv4.1 and later) need the backward direction; a requester that drops backward calls leaves the responder's caller waiting.",
            groups: &["client", "v2", "scenario", "backward"],
            broken_by: &[("v2-ignore-backward-calls", Outcome::Fail)],
            precondition: None,
        },
        scenario: Some(Scenario::BackwardCall),
        judge: backward_call_answered,
    },
];
