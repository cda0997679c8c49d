//! An active client check on RFC 8167 4.1's last rule: the credit value of a message whose
//! direction is not determined is ignored. In `ambiguous-credit` every reply from the first
//! NFSv4 READ's on grants [`AMBIGUOUS_GRANT`]; once the requester has that many calls
//! outstanding, `serve` sends an RDMA_ERROR with the XID of that answered READ (matching no
//! outstanding call) and a credit value far above the grant, and holds its next reply. A
//! requester that took the value as a grant sends beyond the grant; one that ignored it keeps
//! to it.

use std::collections::HashSet;

use rpcrdma_codec::v1::Proc;
use rpcrdma_peers::responder::script::{AMBIGUOUS_GRANT, AMBIGUOUS_RAISED_GRANT};
use rpcrdma_peers::responder::Scenario;

use super::calls::{is_reverse_answer, plural, reverse_xids};
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// What the connection showed about the message of undetermined direction.
#[derive(Default)]
struct Seen4_1 {
    /// The rdma_credit of the message, once sent, and the calls outstanding then.
    sent: Option<(u32, usize)>,
    /// Calls that arrived during the hold (after the message, before our next reply).
    calls: usize,
    /// The most calls outstanding at the arrival of one of them.
    worst: usize,
    /// Whether our next reply went (the hold over, the grant raised).
    raised: bool,
    /// The most calls outstanding at the arrival of a call after it: above the grant of the
    /// hold, the requester had calls waiting then.
    demand: usize,
}

/// Follows the scenario's connection: forward calls outstanding (by XID, the requester's
/// answers to our reverse-direction calls left out), the message, and the calls after it.
fn follow(s: &Served<'_>, injected: u32) -> Seen4_1 {
    let reverse = reverse_xids(s);
    let (mut outstanding, mut played, mut seen) = (HashSet::new(), false, Seen4_1::default());
    for (_, e) in &s.events {
        match e {
            Seen::Injected { .. } => played = true,
            Seen::Call(f) if f.carries_rpc_message() && !is_reverse_answer(f, &reverse) => {
                let Some(h) = f.fixed() else { continue };
                outstanding.insert(h.xid);
                if seen.raised {
                    seen.demand = seen.demand.max(outstanding.len());
                } else if seen.sent.is_some() {
                    seen.calls += 1;
                    seen.worst = seen.worst.max(outstanding.len());
                }
            }
            Seen::Reply(f) => {
                let Some(h) = f.fixed() else { continue };
                // The message: an RDMA_ERROR with the answered READ's XID, after the injection.
                if played && seen.sent.is_none() && h.xid == injected && Proc(h.proc_) == Proc::RDMA_ERROR {
                    seen.sent = Some((h.credit, outstanding.len()));
                    continue;
                }
                seen.raised |= seen.sent.is_some();
                outstanding.remove(&h.xid);
            }
            _ => {}
        }
    }
    seen
}

/// Whether the requester kept to the grant after the message of undetermined direction.
fn undetermined_credit_ignored(served: &[Served<'_>]) -> Judged {
    let n = AMBIGUOUS_GRANT as usize;
    let want = format!(
        "after an RDMA_ERROR whose XID matches no outstanding call, whatever its credit value, never more than {n} calls outstanding (the grant of every reply)"
    );
    let found = served.iter().find_map(|s| {
        s.events.iter().find_map(|(_, e)| match e {
            Seen::Injected { xid, .. } => Some((s, *xid)),
            _ => None,
        })
    });
    let Some((s, xid)) = found else {
        // An NFSv3 requester: no back channel, and no call the scenario plays on.
        let why = "the scenario's call (an NFSv4 COMPOUND with a READ, sent inline) never came";
        return Err(Verdict::inconclusive(want, why));
    };
    let seen = follow(s, xid);
    let Some((credit, then)) = seen.sent else {
        let why = format!(
            "the requester never had {n} calls outstanding at once after the replies granted {n}: the message was not sent, as it had no demand to go beyond the grant"
        );
        return Err(Verdict::inconclusive(want, why));
    };
    if then != n {
        // More outstanding than the grant: calls sent under an earlier, larger grant were
        // still coming, and any beyond the grant now would not be the message's doing.
        let why = format!("{then} calls outstanding when the message went, not the grant's {n}");
        return Err(Verdict::inconclusive(want, why));
    }
    if seen.worst > n {
        let got = format!(
            "{} calls outstanding during the hold after the RDMA_ERROR of the answered call {xid:#010x} with rdma_credit {credit} ({then} outstanding when it came), every reply granting {n}: its credit value taken as a grant",
            seen.worst
        );
        return Err(Verdict::fail(want, got));
    }
    if seen.demand <= n {
        // Calls our replies set off (one each) never take it above the grant: only calls
        // that were waiting do, and only those show the requester could have gone beyond it.
        let got = format!(
            "{} {} during the hold (at most {} outstanding); once our replies granted {AMBIGUOUS_RAISED_GRANT}, at most {} outstanding: no call was waiting, so the requester showed no demand to go beyond the grant",
            seen.calls,
            plural(seen.calls, "call"),
            seen.worst,
            seen.demand
        );
        return Err(Verdict::inconclusive(want, got));
    }
    let got = format!(
        "never more than {n} outstanding during the hold after the RDMA_ERROR of the answered call {xid:#010x} with rdma_credit {credit} ({then} outstanding when it came), with calls waiting: {} outstanding as soon as our replies granted {AMBIGUOUS_RAISED_GRANT}",
        seen.demand
    );
    Ok(Verdict::pass(want, got))
}

pub static CHECKS: [ClientCheck; 1] = [ClientCheck {
    info: CheckInfo {
        id: "rfc8167/4.1/requester-ignores-undetermined-credit",
        judges: &["rfc8167/4.1#2"],
        acceptable: "after an RDMA_ERROR with the XID of an answered call and an rdma_credit far above the grant, sent while the grant's 4 calls are outstanding, never more than 4 outstanding until our next reply (held 500 ms); inconclusive unless calls were waiting then (more than 4 outstanding once our replies grant 8)",
        rationale: "An RDMA_ERROR comes from a Responder, which in bidirectional operation both peers are; with an XID matching no outstanding call, nothing tells whether its credit value is a grant or a request (RFC 8167 4.1). A requester taking it as a grant sends beyond the receives the server posted.",
        groups: &["client", "scenario", "credits", "reverse"],
        broken_by: &[("apply-undetermined-credit", Outcome::Fail)],
        precondition: Some("exactly the grant's 4 calls outstanding when the message is sent, and calls waiting at the end of the hold: more than 4 outstanding once our replies grant 8 (calls our replies set off, one each, never get there)"),
    },
    scenario: Some(Scenario::AmbiguousCredit),
    judge: undetermined_credit_ignored,
}];
