//! Active client checks on chunks a reply misuses: the responder's reply to an NFSv3 READ
//! offered a write chunk (and no reply chunk) returns a write segment longer than offered, the
//! write chunk twice, or a reply chunk never offered. Each is an error in the header of a
//! reply (RFC 8166 4.5), which the requester must discard: the call is then sent again, as in
//! the other discard scenarios.

use rpcrdma_peers::responder::Scenario;

use super::scenarios::injected_message_discarded;
use super::served::ClientCheck;
use crate::engine::{CheckInfo, Outcome};

const RATIONALE: &str = "A reply that claims more than the requester offered says data landed where none could: a requester that passes it up hands the RPC layer lengths its memory does not back; one that discards it sends the call again after its timeout.";

pub static CHECKS: [ClientCheck; 3] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-longer-write-chunk",
            judges: &["rfc8166/4.5#3"],
            acceptable: "a READ's reply returning its write segment 4096 bytes longer than offered is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "write-chunks"],
            broken_by: &[("accept-chunk-misuse", Outcome::Fail)],
            precondition: Some(super::scenarios::DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyLongerWriteChunk),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-extra-write-chunk",
            judges: &["rfc8166/4.5#3"],
            acceptable: "a READ's reply returning two write chunks where the call offered one is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "write-chunks"],
            broken_by: &[("accept-chunk-misuse", Outcome::Fail)],
            precondition: Some(super::scenarios::DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyExtraWriteChunk),
        judge: injected_message_discarded,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8166/4.5/requester-discards-unoffered-reply-chunk",
            judges: &["rfc8166/4.5#3"],
            acceptable: "a READ's reply returning a reply chunk the call did not offer is discarded: the call is sent again",
            rationale: RATIONALE,
            groups: &["client", "scenario", "reply-chunk"],
            broken_by: &[("accept-chunk-misuse", Outcome::Fail)],
            precondition: Some(super::scenarios::DISCARD_PRECONDITION),
        },
        scenario: Some(Scenario::ReplyUnofferedReplyChunk),
        judge: injected_message_discarded,
    },
];
