//! Active client checks on credits (RFC 8166 3.3.1): the responder's reply to the scenario's
//! call (the first NFSv3 READ sent inline), and every later reply on the connection, grants 0
//! credits (which a responder MUST NOT do, and which leaves the requester nothing to send on
//! that connection), or far more than the requester asked for (which it must not take as
//! leave to expect more replies than it has receives posted for).

use rpcrdma_peers::responder::script::HUGE_GRANT;
use rpcrdma_peers::responder::Scenario;
use rpcrdma_peers::transport::WcStatus;

use super::calls::plural;
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// What happened on the scenario's connections after the injected reply.
#[derive(Default)]
struct After {
    injected: bool,
    /// Calls (RDMA_MSG or RDMA_NOMSG) that arrived on the connection after it.
    calls: usize,
    /// The most calls outstanding at once after it (those outstanding before included).
    worst: usize,
    /// A Send of ours that met no receive posted, with the calls then outstanding.
    rnr: Option<usize>,
}

fn after_injection(served: &[Served<'_>]) -> After {
    let mut a = After::default();
    for s in served {
        let (mut started, mut outstanding) = (false, 0usize);
        for (_, seen) in &s.events {
            match seen {
                Seen::Injected { .. } => {
                    started = true;
                    a.injected = true;
                }
                // Only messages that expect a reply count as requests.
                Seen::Call(f) if f.carries_rpc_message() => {
                    outstanding += 1;
                    if started {
                        a.calls += 1;
                        a.worst = a.worst.max(outstanding);
                    }
                }
                Seen::Reply(_) => outstanding = outstanding.saturating_sub(1),
                Seen::SendFailed(WcStatus::ReceiverNotReady) if started => {
                    a.rnr.get_or_insert(outstanding);
                }
                _ => {}
            }
        }
        // The scenario is played once per responder: later connections start afresh.
        if started {
            break;
        }
    }
    a
}

const NEVER_CAME: &str = "the scenario's call (an NFSv3 READ sent inline) never came";

/// Whether the requester sent nothing more on the connection after a grant of 0. A call that
/// raced the reply (sent before the requester received it) counts too; the scenario's call is
/// usually the only one outstanding. Judged only when some call followed the grant of 0 (on
/// the connection, or on a new one): without one the requester had no chance to break the
/// rule, and the result is inconclusive.
fn nothing_beyond_zero_grant(served: &[Served<'_>]) -> Judged {
    let want =
        "after a reply grants 0 credits, no further call on that connection (a new connection starts with one credit)";
    let a = after_injection(served);
    if !a.injected {
        return Err(Verdict::unsupported(want, NEVER_CAME));
    }
    if a.calls > 0 {
        let got = format!(
            "{} {} sent on the connection after every reply granted 0 credits (at most {} outstanding)",
            a.calls,
            plural(a.calls, "call"),
            a.worst
        );
        return Err(Verdict::fail(want, got));
    }
    let later = served.iter().skip_while(|s| !s.events.iter().any(|(_, e)| matches!(e, Seen::Injected { .. })));
    let elsewhere = later.skip(1).flat_map(|s| s.events.iter()).filter(|(_, e)| matches!(e, Seen::Call(_))).count();
    if elsewhere == 0 {
        let why = "no call followed the reply that granted 0, on that connection or a new one: the requester had nothing more to send, so it had no chance to go beyond the grant";
        return Err(Verdict::inconclusive(want, why));
    }
    Ok(Verdict::pass(
        want,
        format!(
            "no call on the connection after the grant of 0; {elsewhere} {} followed on new connections",
            plural(elsewhere, "call")
        ),
    ))
}

/// Whether every reply found a receive posted after a grant far beyond the requester's own.
fn receives_for_expected_replies(served: &[Served<'_>]) -> Judged {
    let want = "after a reply grants far more credits than requested, every reply finds a receive posted";
    let a = after_injection(served);
    if !a.injected {
        return Err(Verdict::unsupported(want, NEVER_CAME));
    }
    if let Some(outstanding) = a.rnr {
        let got = format!(
            "a reply met no receive posted (receiver not ready) with {outstanding} calls outstanding after a grant of {HUGE_GRANT}"
        );
        return Err(Verdict::fail(want, got));
    }
    if a.calls == 0 {
        return Err(Verdict::inconclusive(want, "no call followed the reply that granted more"));
    }
    // One call at a time needs one receive: a requester that trusted the grant over its
    // receives could not have overrun them.
    if a.worst < 2 {
        let got = format!(
            "{} {} after a grant of {HUGE_GRANT}, never more than one outstanding: no reply could have met a requester short of receives",
            a.calls,
            plural(a.calls, "call")
        );
        return Err(Verdict::inconclusive(want, got));
    }
    let got = format!(
        "{} {} after a grant of {HUGE_GRANT}, at most {} outstanding, each reply found a receive posted",
        a.calls,
        plural(a.calls, "call"),
        a.worst
    );
    Ok(Verdict::pass(want, got))
}

pub static CHECKS: [ClientCheck; 2] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.3.1/requester-zero-grant",
            judges: &["rfc8166/3.3.1#1"],
            acceptable: "after a reply (and every later one) grants 0, no further call on that connection; reconnecting is the way on",
            rationale: "A grant of 0 is the responder's error, but it leaves no credit: a requester that treats it as one (as some do to avoid the deadlock) sends beyond the grant, where a new connection would start with one credit (3.3.3).",
            groups: &["client", "scenario", "credits"],
            broken_by: &[("zero-grant-as-one", Outcome::Fail)],
            precondition: Some("a call after the reply that granted 0 (on that connection, or on a new one): the workload has more to send after the scenario's READ"),
        },
        scenario: Some(Scenario::ZeroGrant),
        judge: nothing_beyond_zero_grant,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/3.3.1/requester-receives-for-grant",
            judges: &["rfc5666/6#2", "rfc8166/3.3.1#5"],
            acceptable: "after replies grant 1024 credits, no reply of ours meets a requester with no receive posted (receiver not ready)",
            rationale: "A grant is leave to send, not a promise of replies the requester can take: one that sends up to the grant beyond its own receives has the replies it expects fail with receiver not ready, and the connection with them.",
            groups: &["client", "scenario", "credits"],
            broken_by: &[("window-beyond-receives", Outcome::Fail)],
            precondition: Some("more than one call outstanding at once after the reply that granted 1024 credits"),
        },
        scenario: Some(Scenario::HugeGrant),
        judge: receives_for_expected_replies,
    },
];
