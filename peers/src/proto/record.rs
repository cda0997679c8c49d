//! ONC RPC over a byte stream (TCP), as the MOUNT and rpcbind clients speak it: record marking
//! (RFC 5531 11), call messages as records, and replies judged down to the procedure's
//! results with a typed error for every way a reply can go wrong (RFC 5531 9). Pure encode
//! and decode: the socket I/O belongs to the caller. Every length read from the peer is
//! bounded before anything is allocated for it.

use std::fmt;

use rpcrdma_codec::rpc::{
    AcceptStat, AuthFlavor, CallHeader, OpaqueAuth, Rejected, ReplyHeader, RpcHeader, RpcMessage,
};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::DecodeError;

use super::rpc::AUTH_SYS_ROOT;

/// The record-marking header's last-fragment bit (RFC 5531 11).
pub const LAST_FRAGMENT: u32 = 0x8000_0000;
/// The longest record accepted, headers included: MOUNT and GETPORT replies are well under a
/// kilobyte, so a peer announcing more is not answering the call.
pub const MAX_RECORD: usize = 65_536;

/// The credential of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cred {
    /// AUTH_NONE.
    None,
    /// AUTH_SYS as root: uid 0, gid 0 ([`AUTH_SYS_ROOT`]); servers often refuse AUTH_NONE for
    /// MOUNTPROC3_MNT.
    SysRoot,
}

/// `data` as one record: a single fragment whose header has the last-fragment bit set and
/// the length in the other 31 bits (RFC 5531 11).
pub fn record(data: &[u8]) -> Vec<u8> {
    assert!(data.len() < LAST_FRAGMENT as usize, "a fragment holds at most 2^31 - 1 bytes");
    let mut v = (LAST_FRAGMENT | data.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(data);
    v
}

/// A call of `prog`/`vers`/`proc_` with `args`, as one record.
pub fn call_record(xid: u32, prog: u32, vers: u32, proc_: u32, cred: Cred, args: &[u8]) -> Vec<u8> {
    let mut header = CallHeader::new(xid, prog, vers, proc_);
    if cred == Cred::SysRoot {
        header.cred = OpaqueAuth { flavor: AuthFlavor::AUTH_SYS, body: &AUTH_SYS_ROOT };
    }
    let mut msg = header.encode_to_vec();
    msg.extend_from_slice(args);
    record(&msg)
}

/// A reply to `xid`, as one record: MSG_ACCEPTED with `stat` (and `results` after SUCCESS).
pub fn accepted_record(xid: u32, stat: AcceptStat, results: &[u8]) -> Vec<u8> {
    let mut msg = ReplyHeader::accepted(xid, stat).encode_to_vec();
    msg.extend_from_slice(results);
    record(&msg)
}

/// A MSG_DENIED reply to `xid`, as one record.
pub fn denied_record(xid: u32, why: Rejected) -> Vec<u8> {
    record(&ReplyHeader::denied(xid, why).encode_to_vec())
}

/// Why a reply is not the results of the call it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyError {
    /// A record longer than `max` bytes, headers included.
    RecordTooLong { max: usize },
    /// The reply does not decode: short, or a field out of its range.
    Garbled(DecodeError),
    /// A call came back, not a reply.
    NotAReply,
    /// A reply to another call.
    WrongXid { sent: u32, got: u32 },
    /// MSG_DENIED: RPC_MISMATCH, or AUTH_ERROR with its auth_stat.
    Denied(Rejected),
    /// MSG_ACCEPTED with an accept_stat other than SUCCESS (PROG_UNAVAIL, PROG_MISMATCH, ...).
    NotSuccess(AcceptStat),
}

impl From<DecodeError> for ReplyError {
    fn from(e: DecodeError) -> Self {
        ReplyError::Garbled(e)
    }
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplyError::RecordTooLong { max } => write!(f, "a reply record longer than {max} bytes"),
            ReplyError::Garbled(e) => write!(f, "garbled reply: {e}"),
            ReplyError::NotAReply => write!(f, "a CALL message came back instead of a reply"),
            ReplyError::WrongXid { sent, got } => {
                write!(f, "a reply to xid {got:#010x}, not to the call's {sent:#010x}")
            }
            ReplyError::Denied(Rejected::RpcMismatch { low, high }) => {
                write!(f, "MSG_DENIED RPC_MISMATCH (RPC versions {low} to {high})")
            }
            ReplyError::Denied(Rejected::AuthError { stat }) => write!(f, "MSG_DENIED AUTH_ERROR ({stat})"),
            ReplyError::NotSuccess(AcceptStat::ProgMismatch { low, high }) => {
                write!(f, "PROG_MISMATCH (versions {low} to {high})")
            }
            ReplyError::NotSuccess(stat) => f.write_str(stat.name()),
        }
    }
}

impl std::error::Error for ReplyError {}

/// The first record in `buf`: `Ok(None)` while it is incomplete, else its data (the fragments
/// joined) and how many bytes of `buf` it took. A record whose fragments, headers included,
/// run past `max` bytes is an error as soon as its headers say so, before its data arrives.
pub fn parse_record(buf: &[u8], max: usize) -> Result<Option<(Vec<u8>, usize)>, ReplyError> {
    let mut at = 0usize;
    let mut data = Vec::new();
    loop {
        let Some(word) = buf.get(at..at + 4) else { return Ok(None) };
        let word = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        let len = (word & !LAST_FRAGMENT) as usize;
        let end = at + 4 + len;
        if end > max {
            return Err(ReplyError::RecordTooLong { max });
        }
        let Some(fragment) = buf.get(at + 4..end) else { return Ok(None) };
        data.extend_from_slice(fragment);
        at = end;
        if word & LAST_FRAGMENT != 0 {
            return Ok(Some((data, at)));
        }
    }
}

/// The results of the reply `msg` (one record's data) to the call `xid`.
pub fn reply_results(msg: &[u8], xid: u32) -> Result<&[u8], ReplyError> {
    let m = RpcMessage::decode(msg)?;
    let RpcHeader::Reply(reply) = m.header else { return Err(ReplyError::NotAReply) };
    if reply.xid != xid {
        return Err(ReplyError::WrongXid { sent: xid, got: reply.xid });
    }
    match reply.body {
        rpcrdma_codec::rpc::ReplyBody::Denied(why) => Err(ReplyError::Denied(why)),
        rpcrdma_codec::rpc::ReplyBody::Accepted { stat: AcceptStat::Success, .. } => Ok(m.body),
        rpcrdma_codec::rpc::ReplyBody::Accepted { stat, .. } => Err(ReplyError::NotSuccess(stat)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::rpc::AuthStat;

    // Expected bytes written from RFC 5531 (9 call_body and reply_body, 11 record marking,
    // appendix A authsys_parms) and RFC 4506 (opaque and string padding), word by word.

    #[test]
    fn a_record_is_one_last_fragment() {
        assert_eq!(record(&[1, 2, 3, 4, 5]), [0x80, 0, 0, 5, 1, 2, 3, 4, 5]);
        assert_eq!(record(&[]), [0x80, 0, 0, 0]);
    }

    #[test]
    fn mnt_call_with_auth_sys_root() {
        let args = [0, 0, 0, 7, b'/', b'e', b'x', b'p', b'o', b'r', b't', 0];
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0x80, 0, 0, 80][..],        // last fragment, 80 bytes
            &[0x01, 0x02, 0x03, 0x04],    // xid
            &[0, 0, 0, 0],                // CALL
            &[0, 0, 0, 2],                // rpcvers
            &[0, 0x01, 0x86, 0xa5],       // prog 100005
            &[0, 0, 0, 3],                // vers
            &[0, 0, 0, 1],                // MOUNTPROC3_MNT
            &[0, 0, 0, 1, 0, 0, 0, 28],   // cred: AUTH_SYS, 28 bytes
            &[0, 0, 0, 0],                //   stamp
            &[0, 0, 0, 7, b'r', b'p', b'c', b'r', b'd', b'm', b'a', 0], // machinename
            &[0, 0, 0, 0, 0, 0, 0, 0],    //   uid 0, gid 0
            &[0, 0, 0, 0],                //   no gids
            &[0, 0, 0, 0, 0, 0, 0, 0],    // verf: AUTH_NONE
            &args,
        ]
        .concat();
        assert_eq!(call_record(0x0102_0304, 100005, 3, 1, Cred::SysRoot, &args), want);
    }

    #[test]
    fn getport_call_with_auth_none() {
        let mapping = [0, 1, 0x86, 0xa5, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0, 0];
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0x80, 0, 0, 56][..],
            &[0, 0, 0, 9], &[0, 0, 0, 0], &[0, 0, 0, 2],
            &[0, 0x01, 0x86, 0xa0], &[0, 0, 0, 2], &[0, 0, 0, 3], // PMAP_PROG 100000, 2, GETPORT
            &[0; 8], &[0; 8],                                     // AUTH_NONE cred and verf
            &mapping,
        ]
        .concat();
        assert_eq!(call_record(9, 100000, 2, 3, Cred::None, &mapping), want);
    }

    #[test]
    fn fragments_are_joined_and_incomplete_records_wait() {
        let buf = [0, 0, 0, 2, b'a', b'b', 0x80, 0, 0, 1, b'c', 0xee];
        assert_eq!(parse_record(&buf, MAX_RECORD).unwrap(), Some((b"abc".to_vec(), 11)));
        for n in 0..11 {
            assert_eq!(parse_record(&buf[..n], MAX_RECORD).unwrap(), None, "{n} bytes");
        }
        // Empty fragments are fragments.
        assert_eq!(parse_record(&[0, 0, 0, 0, 0x80, 0, 0, 0], 64).unwrap(), Some((vec![], 8)));
    }

    #[test]
    fn a_record_over_the_bound_fails_on_its_header() {
        assert_eq!(parse_record(&[0x80, 1, 0, 0], MAX_RECORD), Err(ReplyError::RecordTooLong { max: MAX_RECORD }));
        assert_eq!(parse_record(&[0xff; 4], MAX_RECORD), Err(ReplyError::RecordTooLong { max: MAX_RECORD }));
        // Fragments that add up past the bound.
        let two = [0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 8];
        assert_eq!(parse_record(&two, 20), Err(ReplyError::RecordTooLong { max: 20 }));
        assert_eq!(parse_record(&[0x80, 0, 0, 16], 20).unwrap(), None);
    }

    fn reply(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn replies_are_judged() {
        // xid 7, REPLY, MSG_ACCEPTED, verf AUTH_NONE, then accept_stat.
        let ok = reply(&[7, 1, 0, 0, 0, 0, 0x6f]);
        assert_eq!(reply_results(&ok, 7).unwrap(), [0, 0, 0, 0x6f]);
        assert_eq!(reply_results(&ok, 8), Err(ReplyError::WrongXid { sent: 8, got: 7 }));
        let e = reply_results(&reply(&[7, 1, 0, 0, 0, 1]), 7).unwrap_err();
        assert_eq!(e, ReplyError::NotSuccess(AcceptStat::ProgUnavail));
        assert_eq!(e.to_string(), "PROG_UNAVAIL");
        let e = reply_results(&reply(&[7, 1, 0, 0, 0, 2, 1, 2]), 7).unwrap_err();
        assert_eq!(e, ReplyError::NotSuccess(AcceptStat::ProgMismatch { low: 1, high: 2 }));
        assert_eq!(reply_results(&reply(&[7, 1, 0, 0, 0, 3]), 7), Err(ReplyError::NotSuccess(AcceptStat::ProcUnavail)));
        // MSG_DENIED AUTH_ERROR AUTH_TOOWEAK; MSG_DENIED RPC_MISMATCH 2..2.
        let e = reply_results(&reply(&[7, 1, 1, 1, 5]), 7).unwrap_err();
        assert_eq!(e, ReplyError::Denied(Rejected::AuthError { stat: AuthStat::AUTH_TOOWEAK }));
        assert_eq!(e.to_string(), "MSG_DENIED AUTH_ERROR (AUTH_TOOWEAK)");
        let e = reply_results(&reply(&[7, 1, 1, 0, 2, 2]), 7).unwrap_err();
        assert_eq!(e, ReplyError::Denied(Rejected::RpcMismatch { low: 2, high: 2 }));
        // A CALL.
        assert_eq!(reply_results(&reply(&[7, 0, 2, 100005, 3, 1, 0, 0, 0, 0]), 7), Err(ReplyError::NotAReply));
    }

    #[test]
    fn short_and_garbled_replies_are_errors() {
        let ok = reply(&[7, 1, 0, 0, 0, 0]);
        for n in 0..ok.len() {
            assert!(matches!(reply_results(&ok[..n], 7), Err(ReplyError::Garbled(_))), "{n} bytes");
        }
        // reply_stat 2, accept_stat 6, mtype 2, a verifier longer than 400 bytes.
        for bad in [[7, 1, 2, 0, 0, 0], [7, 1, 0, 0, 0, 6], [7, 2, 0, 0, 0, 0], [7, 1, 0, 0, 401, 0]] {
            assert!(matches!(reply_results(&reply(&bad), 7), Err(ReplyError::Garbled(_))), "{bad:?}");
        }
        assert!(matches!(reply_results(&reply(&[7, 1, 0, 0, u32::MAX, 0]), 7), Err(ReplyError::Garbled(_))));
    }
}
