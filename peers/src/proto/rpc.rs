//! The RPC calls a requester sends over RPC-over-RDMA, built whole: the transport header with
//! its chunk lists, then the ONC RPC call header (RFC 5531) and the arguments.

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::rpc::{AuthFlavor, CallHeader, OpaqueAuth};
use rpcrdma_codec::v1::HeaderBuilder;
use rpcrdma_codec::xdr::Encode;

use super::nfs3::{NFSPROC3_NULL, NFS_PROGRAM, NFS_V3};

/// authsys_parms (RFC 5531 appendix A): stamp 0, machinename "rpcrdma", uid 0, gid 0, no gids.
pub const AUTH_SYS_ROOT: [u8; 28] =
    [0, 0, 0, 0, 0, 0, 0, 7, b'r', b'p', b'c', b'r', b'd', b'm', b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// One RPC call with the chunks that carry it: the read list (data items moved out of the
/// payload stream), the write list and the reply chunk offered for the reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Call {
    pub xid: u32,
    /// Credits requested (rdma_credit).
    pub credit: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub args: Vec<u8>,
    pub reads: Vec<ReadSegment>,
    pub writes: Vec<Vec<Segment>>,
    pub reply: Option<Vec<Segment>>,
}

impl Call {
    /// A call of `prog`/`vers`/`proc_` with `args` and no chunks.
    pub fn new(xid: u32, credit: u32, prog: u32, vers: u32, proc_: u32, args: Vec<u8>) -> Self {
        Call { xid, credit, prog, vers, proc_, args, ..Default::default() }
    }

    /// An NFSv3 call.
    pub fn nfs3(xid: u32, credit: u32, proc_: u32, args: Vec<u8>) -> Self {
        Call::new(xid, credit, NFS_PROGRAM, NFS_V3, proc_, args)
    }

    /// The NFSv3 NULL call (AUTH_NONE): what liveness probes send.
    pub fn null(xid: u32, credit: u32) -> Self {
        Call::nfs3(xid, credit, NFSPROC3_NULL, Vec::new())
    }

    /// The RPC call (header and arguments) alone: the payload stream. NFS procedures other
    /// than NULL carry AUTH_SYS as root (uid 0, gid 0), which an export with `no_root_squash`
    /// lets write; NULL and other programs carry AUTH_NONE.
    pub fn rpc_bytes(&self) -> Vec<u8> {
        let mut header = CallHeader::new(self.xid, self.prog, self.vers, self.proc_);
        if self.prog == NFS_PROGRAM && self.proc_ != NFSPROC3_NULL {
            header.cred = OpaqueAuth { flavor: AuthFlavor::AUTH_SYS, body: &AUTH_SYS_ROOT };
        }
        let mut buf = header.encode_to_vec();
        buf.extend_from_slice(&self.args);
        buf
    }

    /// The position, in the payload stream, of the byte after the arguments: where a data
    /// item split off the end of `args` (a WRITE's data) goes as a read chunk.
    pub fn end_position(&self) -> u32 {
        self.rpc_bytes().len() as u32
    }

    /// The transport header with rdma_xid `rdma_xid`, changed by `adjust` (a builder's `raw_*`
    /// methods make it malformed on purpose).
    fn header(&self, nomsg: bool, rdma_xid: u32, adjust: impl FnOnce(HeaderBuilder) -> HeaderBuilder) -> Vec<u8> {
        let writes: Vec<&[Segment]> = self.writes.iter().map(|c| c.as_slice()).collect();
        let mut b =
            if nomsg { HeaderBuilder::nomsg(rdma_xid, self.credit) } else { HeaderBuilder::msg(rdma_xid, self.credit) };
        b = adjust(b.read_list(&self.reads).write_list(&writes));
        if let Some(r) = &self.reply {
            b = b.reply_chunk(r);
        }
        b.encode_to_vec()
    }

    /// RDMA_MSG: header, then the RPC call inline.
    pub fn msg(&self) -> Vec<u8> {
        self.msg_with(|b| b)
    }

    /// RDMA_MSG whose header `adjust` changed (`|b| b.raw_vers(7)`), then the RPC call inline.
    pub fn msg_with(&self, adjust: impl FnOnce(HeaderBuilder) -> HeaderBuilder) -> Vec<u8> {
        let mut m = self.header(false, self.xid, adjust);
        m.extend_from_slice(&self.rpc_bytes());
        m
    }

    /// RDMA_MSG whose rdma_xid is not the RPC call's XID (RFC 8166 4.5.2: an XDR error).
    pub fn msg_with_rdma_xid(&self, rdma_xid: u32) -> Vec<u8> {
        let mut m = self.header(false, rdma_xid, |b| b);
        m.extend_from_slice(&self.rpc_bytes());
        m
    }

    /// RDMA_NOMSG: header only (the payload travels in a position-zero read chunk).
    pub fn nomsg(&self) -> Vec<u8> {
        self.header(true, self.xid, |b| b)
    }
}
