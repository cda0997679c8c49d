//! `replay --listen`: a reply recorded by `serve --fuzz` (a mutated reply after which the
//! requester's kernel logged a bug report) sent again, once, in place of the reference
//! responder's reply to the first inline call of the same RPC program, version and procedure;
//! every word of it that held the recorded call's XID holds the new call's (so a mutated
//! rdma_xid stays mutated).

use std::sync::atomic::{AtomicBool, Ordering};

use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, Message};
use rpcrdma_codec::Profile;

use super::{Session, Stop};
use crate::observe;

/// The recorded reply and the call it answered.
#[derive(Debug)]
pub struct RecordedReply {
    /// The recorded call's RPC program, version and procedure.
    pub procedure: (u32, u32, u32),
    call_xid: u32,
    reply: Vec<u8>,
    played: AtomicBool,
    /// A recorded reverse-direction call instead: sent in place of the n-th (from 1) call of
    /// the upper layer on a connection (RFC 8167 5.1), `reply` holding it.
    pub reverse_call: Option<usize>,
}

impl RecordedReply {
    /// From the recorded call (an RDMA_MSG carrying its RPC call inline) and the reply sent,
    /// the call decoded under the run's wire `profile` (the responder's `Config::profile`).
    pub fn new(call: &[u8], reply: Vec<u8>, profile: &Profile) -> Result<RecordedReply, String> {
        let m = Message::decode(call, profile).map_err(|e| format!("the recorded call: {e}"))?;
        if !matches!(m.header.body, Body::Msg(_)) {
            return Err("the recorded call is not an RDMA_MSG with its RPC call inline".into());
        }
        match RpcMessage::decode(m.payload) {
            Ok(RpcMessage { header: RpcHeader::Call(c), .. }) => Ok(RecordedReply {
                procedure: (c.prog, c.vers, c.proc_),
                call_xid: m.header.xid,
                reply,
                played: AtomicBool::new(false),
                reverse_call: None,
            }),
            _ => Err("the recorded call carries no RPC call".into()),
        }
    }

    /// A recorded (mutated) reverse-direction call, sent in place of the `n`-th (from 1) call
    /// of the upper layer on a connection; every word of it that held `xid` (the call's XID
    /// when it was recorded) holds the new call's.
    pub fn reverse(n: usize, xid: u32, call: Vec<u8>) -> Result<RecordedReply, String> {
        if n == 0 {
            return Err("reverse calls are counted from 1".into());
        }
        Ok(RecordedReply {
            procedure: (0, 0, 0),
            call_xid: xid,
            reply: call,
            played: AtomicBool::new(false),
            reverse_call: Some(n),
        })
    }

    /// Whether the recorded reply has been sent.
    pub fn played(&self) -> bool {
        self.played.load(Ordering::SeqCst)
    }

    /// Whether this inline call is the one to answer with the recorded reply (once).
    fn claims(&self, payload: &[u8]) -> bool {
        if self.reverse_call.is_some() {
            return false;
        }
        match RpcMessage::decode(payload) {
            Ok(RpcMessage { header: RpcHeader::Call(c), .. }) if (c.prog, c.vers, c.proc_) == self.procedure => {
                !self.played.swap(true, Ordering::SeqCst)
            }
            _ => false,
        }
    }

    /// The recorded reply for the call `xid`.
    pub fn reply_for(&self, xid: u32) -> Vec<u8> {
        let mut b = self.reply.clone();
        for w in b.chunks_exact_mut(4) {
            if w == self.call_xid.to_be_bytes() {
                w.copy_from_slice(&xid.to_be_bytes());
            }
        }
        b
    }
}

impl Session<'_> {
    /// A Version One call (`payload` inline unless `nomsg`): is its reply the recorded one?
    pub(super) fn note_recorded_target(&mut self, xid: u32, nomsg: bool, payload: &[u8]) {
        if !nomsg && self.config.recorded_reply.as_ref().is_some_and(|r| r.claims(payload)) {
            self.target = Some(xid);
        }
    }

    /// Sends the recorded reply if `msg` is the reply to the call it replaces; None otherwise.
    pub(super) fn send_recorded(&mut self, msg: &[u8]) -> Option<Result<(), Stop>> {
        let xid = self.target?;
        let r = self.config.recorded_reply.clone()?;
        if msg.get(..4) != Some(&xid.to_be_bytes()[..]) {
            return None;
        }
        self.target = None;
        self.observe(observe::Observed::Injected { scenario: "replay", xid });
        Some(self.transmit(&r.reply_for(xid), None))
    }
}

impl Session<'_> {
    /// What goes out in place of the `n`-th reverse-direction call `msg` (RPC XID `xid`) on
    /// this connection: the recorded call (`replay`), a mutated copy (`serve --fuzz`), or
    /// None for `msg` itself.
    pub(super) fn replace_reverse_call(&mut self, n: usize, xid: u32, msg: &[u8]) -> Option<Vec<u8>> {
        if let Some(r) = self.config.recorded_reply.clone() {
            if r.reverse_call != Some(n) || r.played.swap(true, Ordering::SeqCst) {
                return None;
            }
            self.observe(observe::Observed::Injected { scenario: "replay", xid });
            return Some(r.reply_for(xid));
        }
        let fuzz = self.config.reply_fuzz.clone()?;
        let at = super::reply_fuzz::MessageId { connection: self.fuzz_connection, n: n as u64 };
        let (mutated, how) = fuzz.mutate_call(at, msg)?;
        self.observe(observe::Observed::Mutated { how: how.name(), xid });
        Some(mutated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::rpc::CallHeader;
    use rpcrdma_codec::v1::HeaderBuilder;
    use rpcrdma_codec::xdr::Encode;

    fn call(xid: u32, proc_: u32) -> Vec<u8> {
        let rpc = CallHeader::new(xid, 100003, 3, proc_).encode_to_vec();
        [HeaderBuilder::msg(xid, 32).encode_to_vec(), rpc].concat()
    }

    #[test]
    fn the_first_call_of_the_procedure_gets_the_reply_with_its_xid() {
        // A reply whose rdma_xid was mutated (0x0a0b0c0d) and whose RPC XID is the call's.
        let reply = [0x0a0b_0c0d_u32, 1, 32, 0, 0, 0, 0, 0x1111_2222, 1, 0]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect::<Vec<u8>>();
        let r = RecordedReply::new(&call(0x1111_2222, 6), reply, &Profile::default()).expect("an RDMA_MSG READ call");
        assert_eq!(r.procedure, (100003, 3, 6));
        let payload = |xid, p| CallHeader::new(xid, 100003, 3, p).encode_to_vec();
        assert!(!r.claims(&payload(5, 1)), "a GETATTR is not a READ");
        assert!(r.claims(&payload(0x3333_4444, 6)));
        assert!(r.played());
        assert!(!r.claims(&payload(0x5555_6666, 6)), "played once");
        let b = r.reply_for(0x3333_4444);
        assert_eq!(&b[..4], &0x0a0b_0c0d_u32.to_be_bytes(), "the mutated rdma_xid stays");
        assert_eq!(&b[28..32], &0x3333_4444_u32.to_be_bytes(), "the RPC XID is the new call's");
    }

    #[test]
    fn a_call_that_is_not_an_inline_rpc_call_is_refused() {
        let p = Profile::default();
        assert!(RecordedReply::new(&[0; 8], Vec::new(), &p).is_err());
        let nomsg = HeaderBuilder::nomsg(1, 32).encode_to_vec();
        assert!(RecordedReply::new(&nomsg, Vec::new(), &p).is_err());
    }

    #[test]
    fn the_recorded_call_decodes_under_the_runs_profile() {
        // RDMA_ERROR with rdma_err 3: no arm for it in RFC 8166 4.1.2 (an XDR error), the
        // default arm with rdma_extra[8] in RFC 5666 4.3 (a header, then refused as no call).
        let error = [[7_u32, 1, 32, 4, 3].as_slice(), &[0; 8]]
            .concat()
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect::<Vec<u8>>();
        let rfc8166 = RecordedReply::new(&error, Vec::new(), &Profile::default()).unwrap_err();
        assert!(rfc8166.contains("the recorded call: ") && rfc8166.contains("rdma_err"), "{rfc8166}");
        let mut rfc5666 = Profile::default();
        assert!(rfc5666.apply("rfc5666-error-arm"));
        let decoded = RecordedReply::new(&error, Vec::new(), &rfc5666).unwrap_err();
        assert_eq!(decoded, "the recorded call is not an RDMA_MSG with its RPC call inline");
    }

    #[test]
    fn a_recorded_reverse_call_claims_no_forward_call_and_takes_the_new_xid() {
        // RDMA_MSG, rdma_xid and RPC XID 0xcb000002, CB_COMPOUND with its op count mutated.
        let sent =
            [0xcb00_0002_u32, 1, 8, 0, 0, 0, 0, 0xcb00_0002, 0, 2, 0x4000_0000, 1, 1, 0, 0, 0, 0, 0, 1, 0, u32::MAX]
                .iter()
                .flat_map(|w| w.to_be_bytes())
                .collect::<Vec<u8>>();
        assert!(RecordedReply::reverse(0, 1, sent.clone()).is_err(), "counted from 1");
        let r = RecordedReply::reverse(2, 0xcb00_0002, sent.clone()).expect("a reverse call");
        assert_eq!(r.reverse_call, Some(2));
        assert!(!r.claims(&CallHeader::new(5, 100003, 3, 6).encode_to_vec()), "not a reply's stand-in");
        assert!(!r.played());
        assert_eq!(r.reply_for(0xcb00_0002), sent, "the same XID: the same bytes");
        let b = r.reply_for(0xcb00_0007);
        assert_eq!((&b[..4], &b[28..32]), (&[0xcb, 0, 0, 7][..], &[0xcb, 0, 0, 7][..]));
        assert_eq!(b[4..28], sent[4..28]);
        assert_eq!(b[32..], sent[32..]);
    }
}
