//! Re-framing between the versions: a Version One RDMA_MSG / RDMA_NOMSG and the Version Two
//! RDMA2_MSG / RDMA2_NOMSG with the same chunk lists and payload (v2-01 4.2: the fixed fields,
//! rdma_direction under -01, then the Version One lists).

use super::types::{field, MsgType, Proc, VERSION};
use crate::profile::V2Envelope;
use crate::v1::{self, FixedFields};

/// The rdma_direction word's length under `envelope` (none under -00).
fn direction_len(envelope: V2Envelope) -> usize {
    match envelope {
        V2Envelope::Draft01 => 4,
        V2Envelope::Draft00 => 0,
    }
}

/// A Version One RDMA_MSG or RDMA_NOMSG as Version Two: rdma_vers 2 and, under -01,
/// rdma_direction `direction` after rdma_proc (the proc values are the same, 0 and 1).
/// None for any other message.
pub fn from_v1(msg: &[u8], direction: MsgType, envelope: V2Envelope) -> Option<Vec<u8>> {
    let f = FixedFields::decode(msg).ok()?;
    if f.vers != v1::VERSION || !matches!(v1::Proc(f.proc_), v1::Proc::RDMA_MSG | v1::Proc::RDMA_NOMSG) {
        return None;
    }
    let mut out = Vec::with_capacity(msg.len() + 4);
    out.extend_from_slice(&msg[..field::VERS]);
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&msg[field::CREDIT..field::BODY]);
    if direction_len(envelope) > 0 {
        out.extend_from_slice(&direction.0.to_be_bytes());
    }
    out.extend_from_slice(&msg[v1::field::BODY..]);
    Some(out)
}

/// A Version Two RDMA2_MSG or RDMA2_NOMSG as Version One: rdma_vers 1, rdma_direction (under
/// -01) left out. None for any other message, or one too short for its rdma_direction.
pub fn to_v1(msg: &[u8], envelope: V2Envelope) -> Option<Vec<u8>> {
    let f = FixedFields::decode(msg).ok()?;
    if f.vers != VERSION || !matches!(Proc(f.proc_), Proc::RDMA2_MSG | Proc::RDMA2_NOMSG) {
        return None;
    }
    let body = msg.get(field::BODY + direction_len(envelope)..)?;
    let mut out = Vec::with_capacity(msg.len());
    out.extend_from_slice(&msg[..field::VERS]);
    out.extend_from_slice(&v1::VERSION.to_be_bytes());
    out.extend_from_slice(&msg[field::CREDIT..field::BODY]);
    out.extend_from_slice(body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2::{Body, HeaderBuilder, Message};
    use crate::xdr::Encode;
    use crate::Profile;

    #[test]
    fn a_v1_call_and_its_v2_form_carry_the_same_lists_and_payload() {
        let payload = [0xaa; 12];
        let v1msg = [v1::HeaderBuilder::msg(7, 3).encode_to_vec(), payload.to_vec()].concat();
        for envelope in [V2Envelope::Draft01, V2Envelope::Draft00] {
            let profile = Profile { v2_envelope: envelope, ..Profile::default() };
            let v2msg = from_v1(&v1msg, MsgType::CALL, envelope).expect("an RDMA_MSG");
            let want = HeaderBuilder::msg(7, 3, MsgType::CALL).envelope(envelope).payload(&payload).encode_to_vec();
            assert_eq!(v2msg, want, "{envelope:?}");
            let m = Message::decode(&v2msg, &profile).unwrap();
            let dir = (envelope == V2Envelope::Draft01).then_some(MsgType::CALL);
            assert!(matches!(m.header.body, Body::Msg(c) if c.direction == dir), "{envelope:?}");
            assert_eq!(to_v1(&v2msg, envelope).as_deref(), Some(&v1msg[..]), "{envelope:?}");
        }
        // Neither converts anything else.
        assert_eq!(
            from_v1(&from_v1(&v1msg, MsgType::CALL, V2Envelope::Draft01).unwrap(), MsgType::CALL, V2Envelope::Draft01),
            None
        );
        assert_eq!(to_v1(&v1msg, V2Envelope::Draft01), None);
        assert_eq!(to_v1(&v1msg[..8], V2Envelope::Draft01), None);
    }
}
