//! The Version Two base draft's direction and payload rules over a decoded message.

use super::header::{Body, Message, OptInfo};
use super::rtrext;
use super::types::{field, MsgType};
use crate::check::{Role, Violations};

crate::check::rule_table! {
    "Version Two base rules [`check`](fn@super::check) can report (IDs `v2-01/<section>/<slug>`).", 1;
    MSG_WITHOUT_PAYLOAD = "v2-01/4.2.1/msg-without-payload", Must,
        "When the rdma_proc field has the value RDMA2_MSG, an RPC Payload Stream MUST follow the Transport Header Stream in the Send buffer.";
    ERROR_WITH_PAYLOAD = "v2-01/4.2.1/error-with-payload", MustNot,
        "When the rdma_proc field has the value RDMA2_ERROR, an RPC Payload Stream MUST NOT follow the Transport Header Stream.";
    DIRECTION_MISMATCH = "v2-01/4.2.2/direction-mismatch", Must,
        "When the rdma_proc field has the value RDMA2_MSG or RDMA2_NOMSG, the value of the rdma_direction field MUST be the same as the value of the associated RPC message's msg_type field.";
    ERROR_FROM_REQUESTER = "v2-01/4.2.2/error-from-requester", Must,
        "When the rdma_proc field has the value RDMA2_ERROR, the direction of the message is always Responder-to-Requester (REPLY).";
    OPTDIR_ROLE = "v2-01/4.2.2/optdir-role", Must,
        "When the rdma_proc field has the value RDMA2_OPTIONAL and no RPC message payload is present, a Requester MUST set the value of the rdma_optdir field to CALL, and a Responder MUST set the value of the rdma_optdir field to REPLY.";
}

/// Checks a decoded Version Two message sent in `role` against the base draft's direction
/// and payload rules, then the extension's rules ([`rtrext::check`]).
#[inline]
pub fn check(msg: &Message<'_>, role: Role) -> Violations {
    // Filled in place through a reference: the result is built where it is returned, not
    // on the stack and then copied.
    let mut out = Violations::default();
    check_into(msg, role, &mut out);
    out
}

#[inline(never)]
fn check_into(msg: &Message<'_>, role: Role, out: &mut Violations) {
    let p = msg.payload;
    match &msg.header.body {
        Body::Msg(c) => {
            if p.is_empty() {
                out.rule(&rules::MSG_WITHOUT_PAYLOAD, Some(0), Some(msg.payload_offset));
            } else if let (Some(dir), Some(m)) = (c.direction, p.get(4..8)) {
                let mtype = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
                if MsgType(mtype).is_known() && MsgType(mtype) != dir {
                    out.rule(&rules::DIRECTION_MISMATCH, Some(mtype as u64), Some(msg.payload_offset + 4));
                }
            }
        }
        Body::NoMsg(_) => {}
        Body::Error(_) => {
            if !p.is_empty() {
                out.rule(&rules::ERROR_WITH_PAYLOAD, Some(p.len() as u64), Some(msg.payload_offset));
            }
            if role == Role::Call {
                out.rule(&rules::ERROR_FROM_REQUESTER, None, None);
            }
        }
        Body::Optional(o) => {
            let payload_present = match &o.info {
                OptInfo::Rtr(op) => op.pslen().is_some_and(|n| n > 0),
                OptInfo::Xchar(_) => false,
                OptInfo::Raw(_) => !p.is_empty(),
            };
            let want = match role {
                Role::Call => MsgType::CALL,
                Role::Reply => MsgType::REPLY,
            };
            if let Some(dir) = o.dir {
                if !payload_present && dir != want {
                    out.rule(&rules::OPTDIR_ROLE, Some(dir.0 as u64), Some(field::BODY));
                }
            }
            if let OptInfo::Rtr(op) = &o.info {
                rtrext::check_into(op, o.dir, p.len(), out);
            }
        }
    }
}
