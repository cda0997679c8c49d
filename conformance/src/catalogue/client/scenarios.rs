//! Active client checks: each is a `serve` scenario ([`Scenario`]) in which the responder
//! replaces its reply to one call (the first NFSv3 READ sent inline) with a message the specs
//! require a requester to discard silently, or with a reply granting fewer credits, judged
//! from what the requester did next.
//!
//! A requester that discards the message still has the call outstanding: it waits, and after
//! its timeout sends the call again (the same XID), on the same connection or a new one. One
//! that goes on with other calls and closes its connections without ever sending it again took
//! the message as the call's reply (or its error). One still connected at the end may yet send
//! it again: that is not judged (observe longer than the requester's retransmission timeout).
//! Each check judges only the connections of its own scenario, so one broken reaction cannot
//! hide another.

use rpcrdma_peers::responder::Scenario;

use super::calls::plural;
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// Whether the call whose reply the scenario replaced was sent again afterwards.
pub(super) fn injected_message_discarded(served: &[Served<'_>]) -> Judged {
    let want = "the injected message discarded: the call sent again (the same XID) after it";
    let found = served.iter().enumerate().find_map(|(c, s)| {
        s.events.iter().enumerate().find_map(|(e, (at, seen))| match seen {
            Seen::Injected { xid, .. } => Some((c, e, *at, *xid)),
            _ => None,
        })
    });
    let Some((c, e, at, xid)) = found else {
        return Err(Verdict::unsupported(want, "the scenario's call (an NFSv3 READ sent inline) never came"));
    };
    let after = served[c].events[e + 1..].iter().chain(served[c + 1..].iter().flat_map(|s| s.events.iter()));
    let (mut others, mut closed) = (0usize, false);
    for (t, seen) in after {
        match seen {
            Seen::Call(f) if f.fixed().is_some_and(|h| h.xid == xid) => {
                let ms = t.saturating_sub(at).as_millis();
                return Ok(Verdict::pass(
                    want,
                    format!("the call {xid:#010x} was sent again {ms} ms after the injection"),
                ));
            }
            Seen::Call(_) => others += 1,
            Seen::Closed => closed = true,
            _ => {}
        }
    }
    // Still connected: the call may yet be sent again, after a timeout longer than we watched.
    if !closed {
        let got = format!(
            "the call {xid:#010x} was not sent again before the observation ended ({others} other {} followed)",
            plural(others, "call")
        );
        return Err(Verdict::inconclusive(want, got));
    }
    // Closed, having sent nothing else: taken as the answer, or abandoned; we cannot tell.
    if others == 0 {
        let got = format!("the requester closed the connection without sending the call {xid:#010x} again");
        return Err(Verdict::inconclusive(want, got));
    }
    let got = format!(
        "the call {xid:#010x} was never sent again: the requester went on with {others} other {} and closed the connection, taking the injected message as its answer",
        plural(others, "call")
    );
    Err(Verdict::fail(want, got))
}

/// Whether the calls sent after the grant shrank stayed within the grant of the latest reply.
/// Only calls that arrived after the shrinking reply count as outstanding: the ones before it
/// were sent under the old grant (this can miss an excess, never invent one).
fn within_shrunk_grant(served: &[Served<'_>]) -> Judged {
    let want = "after a reply grants fewer credits, never more calls outstanding than the latest grant";
    let mut started = false;
    let (mut grant, mut outstanding, mut worst, mut calls) = (0u32, 0usize, 0usize, 0usize);
    for s in served {
        for (_, seen) in &s.events {
            match seen {
                Seen::Injected { .. } => started = true,
                Seen::Reply(f) if started => {
                    if let Some(h) = f.fixed() {
                        grant = h.credit;
                    }
                    outstanding = outstanding.saturating_sub(1);
                }
                // Only messages that expect a reply count as requests.
                Seen::Call(f) if started && f.carries_rpc_message() => {
                    calls += 1;
                    outstanding += 1;
                    worst = worst.max(outstanding);
                    if outstanding > grant as usize {
                        let got = format!("{outstanding} calls outstanding after a reply granted {grant}");
                        return Err(Verdict::fail(want, got));
                    }
                }
                _ => {}
            }
        }
        // A new connection starts afresh; its grant is learnt from its first reply.
        outstanding = 0;
    }
    if !started {
        return Err(Verdict::unsupported(want, "the scenario's call (an NFSv3 READ sent inline) never came"));
    }
    if calls == 0 {
        return Err(Verdict::inconclusive(want, "no call followed the reply that shrank the grant"));
    }
    Ok(Verdict::pass(want, format!("{calls} calls after the grant shrank to {grant}, at most {worst} outstanding")))
}

/// What gives a requester the chance to take an injected message as its answer, or to show
/// it discarded it ([`injected_message_discarded`]).
pub(super) const DISCARD_PRECONDITION: &str = "after the injected message, the call sent again, or other calls and the connection closed: a requester still waiting at the end of the observation has shown neither";

const RATIONALE: &str = "A requester that takes such a message as the call's answer completes the call with garbage; one that discards it keeps the call outstanding and sends it again after its timeout.";

pub static CHECKS: [ClientCheck; 7] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-short-reply",
            judges: &["rfc8166/4.5#1"],
            acceptable: "the reply cut to 24 bytes (its XID intact) is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-short-reply", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ShortReply),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-bad-header",
            judges: &["rfc8166/4.5#3"],
            acceptable: "the reply with rdma_vers 0 is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-bad-version-reply", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyBadVersion),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-unknown-proc",
            judges: &["rfc8166/4.5#3"],
            acceptable: "the reply with rdma_proc 5 (no Version One procedure) is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-unknown-proc-reply", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyUnknownProc),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-undecodable-error",
            judges: &["rfc8166/4.5#7"],
            acceptable: "an RDMA_ERROR with rdma_err 3 (neither ERR_VERS nor ERR_CHUNK) is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-undecodable-error", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::UndecodableError),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.6.1/requester-discards-msgp",
            judges: &["rfc8166/4.6.1#2"],
            acceptable: "the reply with rdma_proc RDMA_MSGP is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-msgp-reply", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyMsgp),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.6.2/requester-discards-done",
            judges: &["rfc8166/4.6.2#2"],
            acceptable: "an RDMA_DONE with the call's XID, in place of the reply, is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "header"],
            broken_by: &[("accept-done-reply", Outcome::Fail)],
            precondition: Some(DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyDone),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.3.1/requester-within-shrunk-grant",
            judges: &["rfc8166/3.3.1#1"],
            acceptable: "after a reply grants 1 credit (and every later one too), never more than 1 call outstanding",
            rationale: "A responder may reduce its grant (3.3.1, e.g. for a shared receive queue); a requester still sending to the old grant overruns its receives.",
            groups: &["client", "scenario", "credits"],
            broken_by: &[("ignore-grant-changes", Outcome::Fail)],
            precondition: Some("a call after the reply that shrank the grant"),
        },
        scenario: Some(Scenario::ShrinkGrant),
        judge: within_shrunk_grant,
    },
];
