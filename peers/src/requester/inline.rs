//! The reference requester's call inline threshold (RFC 8797 4.2), learnt from the
//! responder's private data on each connection, and the workload's step that uses it.

use rpcrdma_codec::ccp::{self, ConfigRdmaReply, ConfigRdmaReq};
use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::private_data;
use rpcrdma_codec::rpc::RpcMessage;
use rpcrdma_codec::v1::{Body, Message};
use rpcrdma_codec::xdr::{Encode, Reader};

use super::failure::{at, Step};
use super::Session;
use crate::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_WRITE};
use crate::proto::Call;
use crate::transport::{Connection, TransportError};

impl Session<'_> {
    /// Learns the call inline threshold from the responder's private data on `conn`: the
    /// lower of our send size and its receive size (RFC 8797 4.2); 1024 without usable private
    /// data (5.1, 5.2, RFC 8166 3.3.3).
    pub(super) fn learn_thresholds(&mut self, conn: &mut dyn Connection) -> Step<()> {
        let mut profile = self.options.profile;
        if self.faults.private_data_offset_zero_only {
            profile.private_data_locate = rpcrdma_codec::profile::PrivateDataLocate::OffsetZero;
        }
        let theirs = private_data::effective(conn.peer_private_data(), &profile);
        if self.faults.reject_reserved_bits && theirs.params.reserved != 0 {
            conn.disconnect();
            let why = TransportError::Unreachable("reserved bits set in the responder's private data".into());
            return at("connect", Err(why));
        }
        let mut receive = theirs.params.receive_size();
        if self.faults.assume_large_responder_receive && theirs.status != private_data::Status::Ok {
            receive = 4096;
        }
        if !(self.faults.keep_first_thresholds && self.call_inline.is_some()) {
            self.call_inline = Some(self.options.send_size.min(receive) as usize);
        }
        Ok(())
    }
}

/// A WRITE of 2000 bytes to `scratch`: inline when the call fits the call inline threshold,
/// its data in a read chunk otherwise (RFC 8166 3.5.2).
pub(super) fn write_2000(s: &mut Session<'_>) -> Step<()> {
    let fh = s.lookup(nfs3::FILE_SCRATCH)?;
    let data = vec![0xa5u8; 2000];
    let mut call = s.call_for(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    let mut inline = call.clone();
    inline.args.extend_from_slice(&data);
    let ccp_limit = s.ccp.map_or(usize::MAX, |c| c.maxcall_sendsize as usize);
    if inline.msg().len() <= s.call_inline.unwrap_or(1024).min(ccp_limit) {
        call = inline;
    } else {
        let src = s.source(&data)?;
        call.reads = vec![ReadSegment { position: call.end_position(), target: src.segment() }];
    }
    let _ = s.call("2000-byte WRITE", call.xid, &call.msg());
    s.ensure_connected()
}

/// A READ of 1024 bytes of `big` with no chunks: its reply (about 1180 bytes) fits our
/// receives inline.
pub(super) fn read_1024(s: &mut Session<'_>) -> Step<()> {
    let fh = s.lookup(nfs3::FILE_BIG)?;
    let call = s.call_for(NFSPROC3_READ, nfs3::read_args(&fh, 0, 1024));
    let _ = s.call("1024-byte READ", call.xid, &call.msg());
    s.ensure_connected()
}

/// CONF_RDMA (RFC 5666 6.2): our sizes offered, the responder's limits kept. A responder
/// that does not serve CCP (RFC 8166 A.1 retired it) leaves the workload as it was.
pub(super) fn configure(s: &mut Session<'_>) -> Step<()> {
    let o = s.options;
    let req = ConfigRdmaReq { maxcall_sendsize: o.send_size, maxreply_sendsize: o.receive_size, maxrdmaread: 16 };
    let call = Call::new(s.xid(), o.credits, ccp::PROGRAM, ccp::VERSION, ccp::CONF_RDMA, req.encode_to_vec());
    let Ok(reply) = s.call("CONF_RDMA", call.xid, &call.msg()) else { return s.ensure_connected() };
    let limits = Message::decode(&reply, &o.profile)
        .ok()
        .and_then(|m| RpcMessage::decode(m.payload).ok())
        .and_then(|rpc| ConfigRdmaReply::decode(&mut Reader::new(rpc.body)).ok());
    if !s.faults.ignore_ccp_limits {
        s.ccp = limits;
    }
    Ok(())
}

/// Why `msg` may not be sent under the CCP limits: an inline call over maxcall_sendsize, or
/// read chunks where maxrdmaread is 0 (RFC 5666 6.2). The `oversized-inline` fault sends
/// past every limit.
pub(super) fn forbidden(s: &Session<'_>, msg: &[u8]) -> Option<&'static str> {
    let limits = s.ccp.filter(|_| !s.faults.oversized_inline)?;
    let m = Message::decode(msg, &s.options.profile).ok()?;
    let chunks = m.header.body.chunks()?;
    if limits.maxrdmaread == 0 && chunks.reads.segments().next().is_some() {
        return Some("read chunks where CONF_RDMA returned maxrdmaread 0");
    }
    let inline = matches!(m.header.body, Body::Msg(_)) && m.payload.len() > limits.maxcall_sendsize as usize;
    inline.then_some("an inline call over the maxcall_sendsize CONF_RDMA returned")
}

/// Whether `reply` returns chunks `call` did not offer: more write chunks or segments, a
/// segment longer than offered, a reply chunk (RFC 8166 4.5: an error in the header of a
/// reply, to discard silently).
pub(super) fn misused(s: &Session<'_>, call: &[u8], reply: &[u8]) -> bool {
    let p = &s.options.profile;
    let (Ok(c), Ok(r)) = (Message::decode(call, p), Message::decode(reply, p)) else { return false };
    let (Some(c), Some(r)) = (c.header.body.chunks(), r.header.body.chunks()) else { return false };
    let longer = r.writes.chunks().zip(c.writes.chunks()).any(|(rw, cw)| {
        rw.segment_count() > cw.segment_count() || rw.segments().zip(cw.segments()).any(|(a, b)| a.length > b.length)
    });
    let misused = longer || r.writes.len() > c.writes.len() || r.reply.is_some() && c.reply.is_none();
    misused && !s.faults.accept_chunk_misuse
}
