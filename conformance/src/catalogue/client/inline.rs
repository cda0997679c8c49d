//! Active client check on the inline threshold every receiver supports (RFC 8166 3.3.3): the
//! responder's reply to an NFSv3 READ of 1024 bytes or more asked without a write chunk is
//! cut to exactly 1024 bytes (a short read), and the requester must take it as the reply.

use rpcrdma_peers::responder::script::INLINE_1024;
use rpcrdma_peers::responder::Scenario;

use super::calls::plural;
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// Whether the 1024-byte reply was taken: the call not sent again, other calls following.
fn reply_at_1024_taken(served: &[Served<'_>]) -> Judged {
    let want = "a 1024-byte inline reply taken as the reply: the call not sent again, the requester going on";
    let found = served.iter().enumerate().find_map(|(c, s)| {
        s.events.iter().enumerate().find_map(|(e, (_, seen))| match seen {
            Seen::Injected { xid, .. } => Some((c, e, *xid)),
            _ => None,
        })
    });
    let Some((c, e, xid)) = found else {
        let got = "the scenario's call (an NFSv3 READ of 1024 bytes or more without a write chunk) never came";
        return Err(Verdict::unsupported(want, got));
    };
    let mut after = served[c].events[e + 1..].iter().chain(served[c + 1..].iter().flat_map(|s| s.events.iter()));
    match after.next() {
        Some((_, Seen::Reply(f))) if f.bytes().len() == INLINE_1024 => {}
        _ => {
            let got = "our reply could not be cut to 1024 bytes (its data did not end it inline)";
            return Err(Verdict::unsupported(want, got));
        }
    }
    let mut others = 0usize;
    for (_, seen) in after {
        match seen {
            Seen::SendFailed(st) => {
                let got = format!("the 1024-byte reply found no receive able to take it: {}", st.name());
                return Err(Verdict::fail(want, got));
            }
            Seen::Call(f) if f.fixed().is_some_and(|h| h.xid == xid) => {
                let got = format!(
                    "the call {xid:#010x} was sent again after its 1024-byte reply: the requester discarded it"
                );
                return Err(Verdict::fail(want, got));
            }
            Seen::Call(_) => others += 1,
            _ => {}
        }
    }
    if others == 0 {
        let got = format!("no call followed the 1024-byte reply to {xid:#010x}: whether it was taken cannot be told");
        return Err(Verdict::unsupported(want, got));
    }
    let got = format!(
        "the 1024-byte reply to {xid:#010x} was taken: {others} other {} followed, none sending it again",
        plural(others, "call")
    );
    Ok(Verdict::pass(want, got))
}

pub static CHECKS: [ClientCheck; 1] = [ClientCheck {
    info: CheckInfo {
        id: "rfc8166/3.3.3/requester-reply-at-1024",
        judges: &["rfc8166/3.3.3#2"],
        acceptable: "a reply of exactly 1024 bytes (a READ's data cut short to fit) taken as the call's reply: the call not sent again",
        rationale: "The threshold is inclusive: a requester that drops a 1024-byte message (or posts receives one byte short) retransmits a call whose reply every responder may send inline.",
        groups: &["client", "scenario", "inline"],
        broken_by: &[("discard-1024-reply", Outcome::Fail)],
        precondition: None,
    },
    scenario: Some(Scenario::Reply1024),
    judge: reply_at_1024_taken,
}];
