//! The reference requester's call inline threshold (RFC 8797 4.2), learnt from the
//! responder's private data on each connection, and the workload's step that uses it.

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::private_data;
use rpcrdma_codec::Profile;

use super::failure::{at, Step};
use super::Session;
use crate::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_WRITE};
use crate::transport::{Connection, TransportError};

impl Session<'_> {
    /// Learns the call inline threshold from the responder's private data on `conn`: the
    /// lower of our send size and its receive size (RFC 8797 4.2); 1024 without usable private
    /// data (5.1, 5.2, RFC 8166 3.3.3).
    pub(super) fn learn_thresholds(&mut self, conn: &mut dyn Connection) -> Step<()> {
        let theirs = private_data::effective(conn.peer_private_data(), &Profile::default());
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
    if inline.msg().len() <= s.call_inline.unwrap_or(1024) {
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
