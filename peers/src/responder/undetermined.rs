//! `ambiguous-credit` (RFC 8167 4.1): once the scenario's grant is in force and the requester
//! has that many calls outstanding, the responder sends a message whose direction neither
//! context nor a payload tells ([`Scenario::undetermined_message`]) and holds its next reply,
//! so a requester that took the message's credit value as a grant has the time to send
//! beyond the grant, where the observation tap records it; the replies after the hold grant
//! more, so a requester that had calls waiting shows it.

use std::collections::VecDeque;
use std::time::Instant;

use rpcrdma_codec::v1::{Body, FixedFields, Message};

use super::script::{AMBIGUOUS_GATHER, AMBIGUOUS_GRANT, AMBIGUOUS_HOLD, AMBIGUOUS_RAISED_GRANT};
use super::{reverse, Scenario, Session, Stop};
use crate::transport::{Event, WcStatus};

/// The scenario's progress on one connection.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// The XID of the call whose reply set the grant (answered, so no longer outstanding).
    pub(crate) answered: Option<u32>,
    /// The message of undetermined direction has been sent.
    sent: bool,
}

/// Whether the connection waits for the grant's worth of calls outstanding: the grant is in
/// force and the message not yet sent.
fn waiting(s: &Session<'_>) -> bool {
    s.config.scenario == Some(Scenario::AmbiguousCredit) && s.undetermined.answered.is_some() && !s.undetermined.sent
}

/// Before the arrivals are gathered: while waiting, a pause, so that calls sent together are
/// seen together.
pub(super) fn gather(s: &Session<'_>) {
    if waiting(s) {
        std::thread::sleep(AMBIGUOUS_GATHER);
    }
}

/// The rdma_credit of `data` when it is a forward-direction call (RDMA_MSG or RDMA_NOMSG that
/// is not a reverse-direction reply, RFC 8167 4.1, 5.2).
fn forward_call(s: &Session<'_>, data: &[u8]) -> Option<u32> {
    let fixed = FixedFields::decode(data).ok()?;
    let msg = Message::decode(data, &s.config.profile).ok()?;
    let call = matches!(msg.header.body, Body::Msg(_) | Body::NoMsg(_)) && !reverse::is_reply(&msg);
    call.then_some(fixed.credit)
}

/// Before the call `data` is answered: when exactly the grant's worth of calls is outstanding
/// (this one and those waiting behind it; more means calls sent under the earlier grant are
/// still draining), the message of undetermined direction, the hold, and the calls that
/// arrived meanwhile recorded and queued behind the others.
pub(super) fn before_answering(s: &mut Session<'_>, data: &[u8], pending: &mut VecDeque<Event>) -> Result<(), Stop> {
    if !waiting(s) {
        return Ok(());
    }
    let Some(requested) = forward_call(s, data) else { return Ok(()) };
    let behind = pending
        .iter()
        .filter(|e| matches!(e, Event::Recv { status: WcStatus::Success, data, .. } if forward_call(s, data).is_some()))
        .count();
    if 1 + behind != AMBIGUOUS_GRANT as usize {
        return Ok(());
    }
    let (xid, vers) = (s.undetermined.answered.unwrap_or(0), FixedFields::decode(data).map_or(1, |f| f.vers));
    s.undetermined.sent = true;
    s.transmit(&Scenario::undetermined_message(xid, vers, requested), None)?;
    std::thread::sleep(AMBIGUOUS_HOLD);
    while let Ok(more) = s.conn.poll(Instant::now()) {
        s.observe_arrival(&more);
        pending.push_back(more);
    }
    // From here the replies grant more: a requester with calls waiting sends them now, which
    // shows it had the demand to go beyond the grant during the hold.
    s.scripted_grant = Some(AMBIGUOUS_RAISED_GRANT);
    Ok(())
}
