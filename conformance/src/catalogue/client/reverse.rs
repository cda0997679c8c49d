//! Client checks of the reverse direction (RFC 8167; RFC 8267 6.5.2): `serve`, the NFSv4.1
//! server, calls the requester back over the requester's own connection (CB_NULL once a back
//! channel is offered, CB_RECALL when a delegation must go), and the requester answers as the
//! reverse-direction responder. From the tap: our reverse-direction calls are the messages we
//! sent whose RPC message is a CALL; the requester's answers are the messages it sent back
//! carrying an RPC reply, or with the XID of one of our calls.
//!
//! Passive checks judge every reverse-direction exchange; three are active: `reverse-burst`
//! sends as many CB_NULLs at once as the requester's first reverse-direction reply granted
//! (4.1, 4.3.1), `reverse-burst-reconnect` the same on a new connection after we closed the
//! first (4.3.1's fresh connection), and `reverse-chunks` one CB_NULL with a write list (5.3).
//! A requester that never got a reverse-direction call (NFSv3, NFSv4.0, or no back channel
//! offered) is inconclusive.

use rpcrdma_codec::private_data;
use rpcrdma_codec::v1::ErrorCode;
use rpcrdma_codec::xdr::Reader;
use rpcrdma_peers::proto::nfs41::{
    compound_res, ChannelAttrs, Delegation, Op, Res, Stateid, CDFC4_BACK, CDFC4_BACK_OR_BOTH, CDFC4_FORE_OR_BOTH,
    CREATE_SESSION4_FLAG_CONN_BACK_CHAN, OP_OPEN,
};
use rpcrdma_peers::responder::Scenario;
use rpcrdma_peers::transport::WcStatus;

use super::calls::{calls, plural};
pub use super::calls::{is_reverse_answer, reverse_xids};
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v1::Body;
use crate::frame::Frame;

/// The precondition of every check here.
const A_REVERSE_CALL: &str =
    "a reverse-direction call of ours on the requester's connection (it offered a back channel: NFSv4.1 or later)";

/// One reverse-direction call of ours and what became of it.
struct Exchange<'a> {
    /// The connection's index.
    conn: usize,
    call: &'a Frame,
    xid: u32,
    /// Our Send of it met no receive posted at the requester (or failed otherwise).
    send_failed: Option<WcStatus>,
    /// The requester's answer: the first message after it with its XID in either header.
    answer: Option<&'a Frame>,
    /// It was sent by a scenario (after the `Injected` note).
    scenario: bool,
}

/// Every reverse-direction call of ours on `served`, in order, with its answer.
fn exchanges<'a>(served: &'a [Served<'a>]) -> Vec<Exchange<'a>> {
    let mut out: Vec<Exchange<'a>> = Vec::new();
    for (i, s) in served.iter().enumerate() {
        let first = out.len();
        let (mut injected, mut last_sent) = (false, None);
        for (_, e) in &s.events {
            match e {
                Seen::Injected { .. } => injected = true,
                Seen::Reply(f) if f.is_rpc_call() => {
                    let xid = f.rpc.as_ref().and_then(|r| r.as_ref().ok()).map_or(0, |r| r.xid);
                    last_sent = Some(out.len());
                    let scenario = injected && Scenario::is_reverse_xid(xid);
                    out.push(Exchange { conn: i, call: f, xid, send_failed: None, answer: None, scenario });
                }
                Seen::Reply(_) => last_sent = None,
                Seen::SendFailed(st) => {
                    if let Some(x) = last_sent.take() {
                        out[x].send_failed = Some(*st);
                    }
                }
                Seen::Call(f) => {
                    let rpc_xid = f.rpc.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.xid);
                    let rdma_xid = f.fixed().map(|h| h.xid);
                    let x = out[first..].iter_mut().find(|x| {
                        x.answer.is_none()
                            && x.send_failed.is_none()
                            && !f.is_rpc_call()
                            && (rdma_xid == Some(x.xid) || rpc_xid == Some(x.xid))
                    });
                    if let Some(x) = x {
                        x.answer = Some(f);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The first Send of ours that met no receive at the requester on a connection once a
/// reverse-direction call had been sent on it: a reply or a call of ours that found the
/// requester's receives taken (by reverse-direction calls it posted none for, RFC 8167 4.3.1).
fn starved(served: &[Served<'_>]) -> Option<String> {
    starved_from(served, 0)
}

/// [`starved`] on the connections from index `from` on.
fn starved_from(served: &[Served<'_>], from: usize) -> Option<String> {
    for (i, s) in served.iter().enumerate().skip(from) {
        let mut last = None;
        for (_, e) in &s.events {
            match e {
                Seen::Reply(f) if last.is_some() || f.is_rpc_call() => last = Some(f),
                Seen::SendFailed(st) if last.is_some() => {
                    let f = last.expect("a message sent");
                    let what = if f.is_rpc_call() { "our reverse-direction call" } else { "our reply" };
                    return Some(format!(
                        "connection {i}: {what} met no receive at the requester ({}): {f}",
                        st.name()
                    ));
                }
                _ => {}
            }
        }
    }
    None
}

fn replies(n: usize) -> &'static str {
    if n == 1 {
        "reply"
    } else {
        "replies"
    }
}

/// Whether our call carried a chunk list (the `reverse-chunks` scenario's): judged by 5.3.
fn chunked(x: &Exchange<'_>) -> bool {
    x.call
        .v1()
        .and_then(|h| h.body.chunks())
        .is_some_and(|c| !c.reads.is_empty() || !c.writes.is_empty() || c.reply.is_some())
}

/// Ends a check inconclusive when no reverse-direction call was sent at all.
fn any_call(all: &[Exchange<'_>], want: &str) -> Result<(), Verdict> {
    if all.is_empty() {
        let why = "no reverse-direction call was sent: the requester offered no back channel on any connection";
        return Err(Verdict::inconclusive(want, why));
    }
    Ok(())
}

fn word(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
}

/// 5.2: the call's rdma_vers; rdma_xid the call's XID; the RPC reply starting with it, with
/// msg_type REPLY. RDMA_ERROR answers (5.3) are judged for rdma_vers and rdma_xid only.
fn replies_framed(served: &[Served<'_>]) -> Judged {
    let want = "every reverse-direction reply with the call's rdma_vers and XID in both headers, msg_type REPLY";
    let all = exchanges(served);
    any_call(&all, want)?;
    let mut n = 0;
    for x in &all {
        let (Some(a), Some(call)) = (x.answer, x.call.fixed()) else { continue };
        let Some(h) = a.fixed() else {
            return Err(Verdict::fail(want, format!("an undecodable answer to {:#010x}: {a}", x.xid)));
        };
        n += 1;
        let at = format!("connection {}: {a}", x.conn);
        if h.vers != call.vers {
            return Err(Verdict::fail(
                want,
                format!("rdma_vers {} answering a call of rdma_vers {}: {at}", h.vers, call.vers),
            ));
        }
        if h.xid != x.xid {
            return Err(Verdict::fail(
                want,
                format!("rdma_xid {:#010x} answering our call {:#010x}: {at}", h.xid, x.xid),
            ));
        }
        if matches!(a.v1().map(|v| &v.body), Some(Body::Error { .. })) {
            continue;
        }
        // The RPC message: its XID, then msg_type (RFC 5531 9: REPLY is 1).
        let payload = a.v1().and_then(|v| match &v.body {
            Body::Msg { payload, .. } => Some(a.slice(payload.clone())),
            _ => None,
        });
        let Some(p) = payload else {
            return Err(Verdict::fail(want, format!("no RPC reply inline in the answer: {at}")));
        };
        if word(p, 0) != Some(h.xid) {
            let got = format!(
                "the RPC reply starts with {:#010x}, the transport header says {:#010x}: {at}",
                word(p, 0).unwrap_or(0),
                h.xid
            );
            return Err(Verdict::fail(want, got));
        }
        if word(p, 4) != Some(1) {
            return Err(Verdict::fail(
                want,
                format!("RPC msg_type {} in a reverse-direction reply: {at}", word(p, 4).unwrap_or(0)),
            ));
        }
    }
    if n == 0 {
        return Err(Verdict::inconclusive(
            want,
            format!("{} reverse-direction {} sent, none answered", all.len(), plural(all.len(), "call")),
        ));
    }
    Ok(Verdict::pass(want, format!("{n} reverse-direction {} framed as RFC 8167 5.2 says", replies(n))))
}

/// RFC 8267 6.5.2 (RFC 8167 applies): every reverse-direction call answered while the
/// connection lasted. Calls carrying chunks are `rfc8167/5.3/requester-reverse-err-chunk`'s.
fn calls_answered(served: &[Served<'_>]) -> Judged {
    let want = "every reverse-direction call without chunks answered on its connection";
    let all: Vec<Exchange<'_>> = exchanges(served).into_iter().filter(|x| !chunked(x)).collect();
    any_call(&all, want)?;
    if let Some(got) = starved(served) {
        return Err(Verdict::fail(want, got));
    }
    let unanswered: Vec<&Exchange<'_>> = all.iter().filter(|x| x.answer.is_none()).collect();
    if let Some(x) = unanswered.first() {
        // A call whose connection carried nothing more from the requester had no chance.
        let s = &served[x.conn];
        let at = s.events.iter().position(|(_, e)| matches!(e, Seen::Reply(f) if std::ptr::eq(f, x.call)));
        let more = at.is_some_and(|at| s.events[at + 1..].iter().any(|(_, e)| matches!(e, Seen::Call(_))));
        if more {
            let got = format!(
                "connection {}: our call {:#010x} got no answer though the requester went on ({} unanswered in all): {}",
                x.conn,
                x.xid,
                unanswered.len(),
                x.call
            );
            return Err(Verdict::fail(want, got));
        }
        if unanswered.len() == all.len() {
            return Err(Verdict::inconclusive(
                want,
                "the requester sent nothing after any of our reverse-direction calls",
            ));
        }
    }
    let n = all.len() - unanswered.len();
    Ok(Verdict::pass(want, format!("{n} reverse-direction {} answered", plural(n, "call"))))
}

/// RFC 8167 4.3.1: receives for as many reverse-direction calls as the credits granted, above
/// those for the forward calls. `reverse-burst` sends that many at once.
fn burst_survived(served: &[Served<'_>]) -> Judged {
    let want =
        "as many concurrent reverse-direction calls as the requester granted, each met by a receive and answered";
    let all = exchanges(served);
    any_call(&all, want)?;
    if let Some(got) = starved(served) {
        return Err(Verdict::fail(want, got));
    }
    let burst: Vec<&Exchange<'_>> = all.iter().filter(|x| x.scenario).collect();
    if burst.is_empty() {
        return Err(Verdict::inconclusive(
            want,
            "the burst was never sent: no reverse-direction call of ours was answered",
        ));
    }
    let granted = burst[0].call.fixed().map_or(0, |h| h.credit);
    if let Some(x) = burst.iter().find(|x| x.answer.is_none()) {
        let got = format!("{} calls at once (the grant of {granted}): {:#010x} got no answer", burst.len(), x.xid);
        return Err(Verdict::fail(want, got));
    }
    Ok(Verdict::pass(want, format!("{} calls at once (the grant of {granted}), all answered", burst.len())))
}

/// Whether a call of the requester's offers a back channel on its connection: BIND_CONN_TO_SESSION
/// for the back channel or both (RFC 8881 18.34.3: CDFC4_FORE_OR_BOTH binds both when the server
/// agrees), or CREATE_SESSION with CREATE_SESSION4_FLAG_CONN_BACK_CHAN (18.36.3).
fn offers_back_channel(f: &Frame) -> bool {
    compound_ops(f).iter().any(|op| match op {
        Op::BindConnToSession { dir, .. } => matches!(*dir, CDFC4_BACK | CDFC4_FORE_OR_BOTH | CDFC4_BACK_OR_BOTH),
        Op::CreateSession { flags, .. } => flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN != 0,
        _ => false,
    })
}

/// RFC 8167 4.3.1, after a reconnect: "When a fresh transport connection is established, a
/// client endpoint ... posts enough Receive buffers to handle reverse-direction Calls."
/// `reverse-burst-reconnect` closes the connection the requester's first reverse-direction
/// reply came on; once the requester connected again and offered its back channel on the new
/// connection, as many CB_NULLs at once as it granted there. The precondition is the
/// reconnect and the back channel offered again; the first connection's burst is
/// [`burst_survived`]'s.
fn burst_after_reconnect(served: &[Served<'_>]) -> Judged {
    let want = "on the connection after the one we closed, its back channel offered again: as many concurrent reverse-direction calls as the requester granted, each met by a receive and answered";
    let all = exchanges(served);
    any_call(&all, want)?;
    let dropped = served.iter().position(|s| s.events.iter().any(|(_, e)| matches!(e, Seen::Injected { .. })));
    let Some(dropped) = dropped else {
        return Err(Verdict::inconclusive(
            want,
            "no connection was closed: no reverse-direction call of ours was answered on any",
        ));
    };
    let later = dropped + 1;
    if later >= served.len() {
        let why = format!("we closed connection {dropped} after the requester's first reverse-direction reply; it never connected again");
        return Err(Verdict::inconclusive(want, why));
    }
    let rebound = (later..served.len()).find(|&i| calls(&served[i..=i]).any(|(_, f)| offers_back_channel(f)));
    let Some(at) = rebound else {
        let n = served.len() - later;
        let why = format!(
            "we closed connection {dropped}; the requester connected again ({n} {}) but offered no back channel there (no BIND_CONN_TO_SESSION for it, no CREATE_SESSION with CONN_BACK_CHAN)",
            plural(n, "connection")
        );
        return Err(Verdict::inconclusive(want, why));
    };
    if let Some(got) = starved_from(served, later) {
        return Err(Verdict::fail(want, format!("after we closed connection {dropped}: {got}")));
    }
    let burst: Vec<&Exchange<'_>> = all.iter().filter(|x| x.scenario && x.conn >= at).collect();
    if burst.is_empty() {
        let why = format!("connection {at} offered the back channel again, but the burst was never sent: no reverse-direction call of ours was answered there");
        return Err(Verdict::inconclusive(want, why));
    }
    let (conn, granted) = (burst[0].conn, burst[0].call.fixed().map_or(0, |h| h.credit));
    if let Some(x) = burst.iter().find(|x| x.answer.is_none()) {
        let got = format!(
            "connection {conn} (after we closed connection {dropped}): {} calls at once (the grant of {granted}): {:#010x} got no answer",
            burst.len(),
            x.xid
        );
        return Err(Verdict::fail(want, got));
    }
    Ok(Verdict::pass(
        want,
        format!(
            "connection {conn} (after we closed connection {dropped}, back channel offered again on connection {at}): {} calls at once (the grant of {granted}), all answered",
            burst.len()
        ),
    ))
}

/// RFC 8167 5.3: a reverse-direction call with a chunk list the requester does not support
/// gets ERR_CHUNK; one that supports chunks answers with the write list returned (RFC 8166
/// 4.2: the reply's write list). An answer ignoring the chunks, or none, fails.
fn chunks_refused(served: &[Served<'_>]) -> Judged {
    let want = "ERR_CHUNK for a reverse-direction call carrying a write list (or a reply returning the write list)";
    let all = exchanges(served);
    any_call(&all, want)?;
    let with_chunks = all.iter().find(|x| chunked(x));
    let Some(x) = with_chunks else {
        return Err(Verdict::inconclusive(
            want,
            "the call with a write list was never sent: no reverse-direction call of ours was answered",
        ));
    };
    if let Some(st) = x.send_failed {
        return Err(Verdict::fail(want, format!("our call met no receive at the requester ({})", st.name())));
    }
    let Some(a) = x.answer else {
        return Err(Verdict::fail(want, format!("no answer to our call with a write list: {}", x.call)));
    };
    match a.v1().map(|h| &h.body) {
        Some(Body::Error { code: ErrorCode::ERR_CHUNK, .. }) => Ok(Verdict::pass(want, format!("ERR_CHUNK: {a}"))),
        Some(Body::Msg { chunks, .. }) if !chunks.writes.is_empty() => Ok(Verdict::pass(
            want,
            format!("a reply returning the write list (the requester takes chunks, 5.3#1): {a}"),
        )),
        _ => Err(Verdict::fail(want, format!("neither ERR_CHUNK nor the write list returned: {a}"))),
    }
}

/// RFC 8167 4.1: the rdma_credit of a reverse-direction reply is the reverse-direction credits
/// granted, and credits work as in the forward direction, where a grant of 0 deadlocks (RFC
/// 8166 3.3.1). Every answer (RDMA_MSG or RDMA_ERROR) grants at least one.
fn replies_grant(served: &[Served<'_>]) -> Judged {
    let want = "every reverse-direction reply granting at least one reverse-direction credit";
    let all = exchanges(served);
    any_call(&all, want)?;
    let mut grants = std::collections::BTreeSet::new();
    for x in &all {
        let Some(h) = x.answer.and_then(|a| a.fixed()) else { continue };
        if h.credit == 0 {
            let got = format!(
                "connection {}: a grant of 0 answering our call {:#010x}: {}",
                x.conn,
                x.xid,
                x.answer.expect("answered")
            );
            return Err(Verdict::fail(want, got));
        }
        grants.insert(h.credit);
    }
    if grants.is_empty() {
        return Err(Verdict::inconclusive(
            want,
            format!("{} reverse-direction {} sent, none answered", all.len(), plural(all.len(), "call")),
        ));
    }
    let grants: Vec<String> = grants.iter().map(u32::to_string).collect();
    Ok(Verdict::pass(want, format!("reverse-direction grants of {}", grants.join(", "))))
}

/// The requester's CREATE_SESSION arguments in a COMPOUND call's arguments, when it is the
/// first operation (RFC 8881 18.36.3: it is the only one): its flags and back channel
/// attributes.
fn create_session(f: &Frame) -> Option<(u32, ChannelAttrs)> {
    let rpc = f.rpc.as_ref()?.as_ref().ok()?;
    if !matches!(rpc.kind, RpcKind::Call { prog: rpcrdma_peers::proto::nfs3::NFS_PROGRAM, vers: 4, proc_: 1 }) {
        return None;
    }
    let mut r = Reader::new(f.slice(rpc.body.clone()));
    r.opaque("tag", u32::MAX).ok()?;
    r.u32("minorversion").ok()?;
    if r.u32("argarray").ok()? == 0 {
        return None;
    }
    match Op::decode(&mut r).ok()? {
        Op::CreateSession { flags, back, .. } => Some((flags, back)),
        _ => None,
    }
}

/// The operations of an NFSv4 COMPOUND call the frame carries, as far as they decode.
fn compound_ops(f: &Frame) -> Vec<Op> {
    let Some(Ok(rpc)) = f.rpc.as_ref() else { return Vec::new() };
    if !matches!(rpc.kind, RpcKind::Call { vers: 4, proc_: 1, .. }) {
        return Vec::new();
    }
    let mut r = Reader::new(f.slice(rpc.body.clone()));
    let (Ok(_), Ok(_), Ok(n)) = (r.opaque("tag", u32::MAX), r.u32("minorversion"), r.u32("argarray")) else {
        return Vec::new();
    };
    let mut ops = Vec::new();
    for _ in 0..n {
        match Op::decode(&mut r) {
            Ok(Op::Other(_)) | Err(_) => break,
            Ok(op) => ops.push(op),
        }
    }
    ops
}

/// RFC 8267 6.5.2: a back channel ca_maxrequestsize larger than the inline threshold says the
/// client takes Long Calls in the back channel; one that says so and refuses a chunked call
/// with ERR_CHUNK (`reverse-chunks`) misstated it. Within the threshold, calls stay Short.
fn back_channel_fits(served: &[Served<'_>]) -> Judged {
    let want = "a back channel ca_maxrequestsize within our inline threshold toward the requester, or Long Calls taken";
    let offered = served.iter().find_map(|s| {
        let back = calls(std::slice::from_ref(s))
            .filter_map(|(_, f)| create_session(f))
            .find(|(flags, _)| flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN != 0)?;
        Some((s, back.1))
    });
    let Some((s, back)) = offered else {
        return Err(Verdict::inconclusive(
            want,
            "no CREATE_SESSION offering a back channel on the connection was observed",
        ));
    };
    // Our calls reach the requester's receives: the receive size its private data advertises,
    // or 1024 without one (RFC 8797 5.1; RFC 8167 4.2: the forward reply threshold).
    let threshold = private_data::effective(&s.conn.private_data, &s.profile).params.receive_size();
    let size = back.maxrequestsize;
    if size <= threshold {
        return Ok(Verdict::pass(
            want,
            format!("ca_maxrequestsize {size} within our {threshold}-byte threshold: Short calls only"),
        ));
    }
    let all = exchanges(served);
    let with_chunks = all.iter().find(|x| chunked(x));
    match with_chunks.and_then(|x| x.answer) {
        Some(a) if matches!(a.v1().map(|h| &h.body), Some(Body::Error { code: ErrorCode::ERR_CHUNK, .. })) => {
            let got = format!("ca_maxrequestsize {size} over our {threshold}-byte threshold says Long Calls are taken, yet our chunked call got ERR_CHUNK: {a}");
            Err(Verdict::fail(want, got))
        }
        Some(a) => Ok(Verdict::pass(want, format!("ca_maxrequestsize {size} over our {threshold}-byte threshold, and our chunked call was taken: {a}"))),
        None => Err(Verdict::inconclusive(
            want,
            format!("ca_maxrequestsize {size} over our {threshold}-byte threshold: our chunked call was not answered, so whether Long Calls are taken is unknown"),
        )),
    }
}

/// RFC 8167 5.4 (SHOULD): a requester holding a delegation keeps a connection, so the server
/// can recall it. A connection that ended with a delegation held, while the requester went on
/// on a later one, is pass-lax.
fn keeps_connection(served: &[Served<'_>]) -> Judged {
    let want = "no connection closed while the requester held a delegation";
    let mut granted = 0;
    let mut held: Vec<Stateid> = Vec::new();
    for (i, s) in served.iter().enumerate() {
        for (_, e) in &s.events {
            match e {
                Seen::Reply(f) => {
                    let Some(Ok(rpc)) = f.rpc.as_ref() else { continue };
                    let Some(res) = compound_res(f.slice(rpc.body.clone()), |_| false) else { continue };
                    if let Some(Res::Open {
                        delegation: Delegation::Read { stateid, .. } | Delegation::Write { stateid, .. },
                        ..
                    }) = res.find(OP_OPEN)
                    {
                        granted += 1;
                        held.push(*stateid);
                    }
                }
                Seen::Call(f) => {
                    for op in compound_ops(f) {
                        if let Op::DelegReturn(sid) = op {
                            held.retain(|h| *h != sid);
                        }
                    }
                }
                _ => {}
            }
        }
        if !held.is_empty() && i + 1 < served.len() {
            let got = format!(
                "connection {i} ended with {} {} held; the requester went on on a new one",
                held.len(),
                plural(held.len(), "delegation")
            );
            return Ok(Verdict::lax(want, got));
        }
    }
    if granted == 0 {
        return Err(Verdict::inconclusive(want, "no OPEN was granted a delegation"));
    }
    Ok(Verdict::pass(
        want,
        format!("{granted} {} granted, each returned or held on a connection kept", plural(granted, "delegation")),
    ))
}

pub static CHECKS: [ClientCheck; 8] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/5.2/requester-reverse-reply-framing",
            judges: &["rfc8167/5.2#1", "rfc8167/5.2#2"],
            acceptable: "each answer to a reverse-direction call with that call's rdma_vers and XID, and an RPC reply starting with the same XID, msg_type REPLY",
            rationale: "The server matches callback replies to its calls by XID and tells them from forward calls by msg_type; a mismatched one leaves the callback waiting, and the delegation unrecalled.",
            groups: &["client", "reverse", "header"],
            broken_by: &[
                ("reverse-reply-bad-version", Outcome::Fail),
                ("reverse-reply-xid-mismatch", Outcome::Fail),
                ("reverse-reply-as-call", Outcome::Fail),
            ],
            precondition: Some(A_REVERSE_CALL),
        },
        scenario: None,
        judge: replies_framed,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.5.2/requester-answers-reverse-calls",
            judges: &["~rfc8267/6.5.2#1"],
            acceptable: "every reverse-direction call without chunks met by a receive and answered while the requester goes on on the connection (a call with chunks: rfc8167/5.3/requester-reverse-err-chunk)",
            rationale: "NFSv4.1 clients MUST carry the backchannel as RFC 8167 says: an unanswered CB_RECALL costs the client its delegation and the server a timeout.",
            groups: &["client", "reverse"],
            broken_by: &[("ignore-reverse-calls", Outcome::Fail), ("no-reverse-receives", Outcome::Fail)],
            precondition: Some(A_REVERSE_CALL),
        },
        scenario: None,
        judge: calls_answered,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/4.3.1/requester-reverse-receives",
            judges: &["~rfc8267/6.5.2#1"],
            acceptable: "as many CB_NULLs at once as the requester's first reverse-direction reply granted, none meeting receiver-not-ready, all answered",
            rationale: "A client posts receives for its reverse-direction credits above those for its forward calls (RFC 8167 4.3.1); otherwise a burst of callbacks fails the connection.",
            groups: &["client", "reverse", "credits", "scenario"],
            broken_by: &[("no-reverse-receives", Outcome::Fail)],
            precondition: Some("the requester's first reverse-direction reply on the scenario's connection (the burst follows it)"),
        },
        scenario: Some(Scenario::ReverseBurst),
        judge: burst_survived,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/4.3.1/requester-reverse-receives-after-reconnect",
            judges: &["~rfc8267/6.5.2#1"],
            acceptable: "after we closed the connection of its first reverse-direction reply, on a new connection where the requester offered its back channel again (BIND_CONN_TO_SESSION or CREATE_SESSION): as many CB_NULLs at once as its first reverse-direction reply there granted, none meeting receiver-not-ready, all answered",
            rationale: "A lost connection flushes every receive; a client that posts its reverse-direction receives on its first connection only (RFC 8167 4.3.1: a fresh connection needs them again) fails the connection at the first burst of callbacks after a reconnect, and its delegations go unrecalled.",
            groups: &["client", "reverse", "credits", "reconnect", "scenario"],
            broken_by: &[("no-reverse-receives-after-reconnect", Outcome::Fail)],
            precondition: Some("a reconnect after we closed the connection, and the back channel offered again on the new connection (the burst follows the requester's first reverse-direction reply there)"),
        },
        scenario: Some(Scenario::ReverseBurstReconnect),
        judge: burst_after_reconnect,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/5.3/requester-reverse-err-chunk",
            judges: &["rfc8167/5.3#2"],
            acceptable: "RDMA_ERROR ERR_CHUNK to a CB_NULL carrying a write list, or (a requester that takes chunks) a reply returning the write list",
            rationale: "A client that ignores chunks it cannot take leaves the server's memory exposed and its call's results unaccounted.",
            groups: &["client", "reverse", "write-chunks", "scenario"],
            broken_by: &[("reverse-chunks-accepted", Outcome::Fail)],
            precondition: Some("the requester's first reverse-direction reply on the scenario's connection (the chunked call follows it)"),
        },
        scenario: Some(Scenario::ReverseChunks),
        judge: chunks_refused,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/4.1/requester-reverse-grant",
            judges: &["~rfc8267/6.5.2#1"],
            acceptable: "a reverse-direction credit grant of at least one in every answer to a reverse-direction call",
            rationale: "Reverse-direction credits work as forward ones (RFC 8167 4.1): a grant of 0 leaves the server no callback to send, and the delegations unrecallable.",
            groups: &["client", "reverse", "credits"],
            broken_by: &[("reverse-zero-credit", Outcome::Fail)],
            precondition: Some(A_REVERSE_CALL),
        },
        scenario: None,
        judge: replies_grant,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8267/6.5.2/requester-back-channel-fits",
            judges: &["~rfc8267/6.5.2#1"],
            acceptable: "a back channel ca_maxrequestsize within our inline threshold toward the requester, or, if larger, our chunked reverse-direction call taken rather than refused with ERR_CHUNK",
            rationale: "A server believes a larger ca_maxrequestsize means Long Calls are taken (RFC 8267 6.5.2) and sends chunked callbacks the client then refuses.",
            groups: &["client", "reverse", "inline", "scenario"],
            broken_by: &[("oversized-back-channel", Outcome::Fail)],
            precondition: Some("a CREATE_SESSION offering a back channel on the connection, and, when its ca_maxrequestsize exceeds the threshold, our chunked call answered"),
        },
        scenario: Some(Scenario::ReverseChunks),
        judge: back_channel_fits,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8167/5.4/requester-keeps-connection",
            judges: &["rfc8167/5.4#1"],
            acceptable: "no connection ended while a delegation was held and the requester went on on another (doing so is pass-lax: a SHOULD)",
            rationale: "The server cannot connect to the client: a recall waits for the client's next connection, or times out and revokes.",
            groups: &["client", "reverse"],
            broken_by: &[("drop-with-delegation", Outcome::PassLax)],
            precondition: Some("an OPEN granted a delegation"),
        },
        scenario: None,
        judge: keeps_connection,
    },
];
