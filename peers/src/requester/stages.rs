//! The stages of the reference requester's NFSv3 workload, each the faithful rule for one
//! carrier (RFC 8166 3.4, 3.5): NULL and the grant, a READ through a write chunk, a WRITE
//! through a read chunk, a READDIR with a reply chunk, a long call, the credit window. The
//! faults that bend a stage's plan are `faults.rs`'s `bend_*`; an RDMA_ERROR fails its call
//! only (RFC 8166 4.5), so each stage goes on after its call whatever the answer.

use std::time::Instant;

use rpcrdma_codec::chunk::{ReadSegment, Segment};

use super::failure::Step;
use super::Session;
use crate::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_READDIR, NFSPROC3_WRITE};
use crate::proto::Call;
use crate::transport::Access;

/// How a long call travels (RFC 8166 3.5.3): its RPC message in a position-zero read chunk,
/// and a reply chunk of this length offered, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LongCall {
    pub position_zero: bool,
    pub reply_chunk: Option<u32>,
}

impl Session<'_> {
    /// NULL, which learns the grant (RFC 8166 3.3.1).
    pub(super) fn null_for_the_grant(&mut self) -> Step<()> {
        let (xid, credits) = (self.xid(), self.options.credits);
        if let Some(early) = self.faults.burst_xid(xid) {
            self.send("NULL", &Call::null(early, credits).msg())?;
        }
        self.call("NULL", xid, &Call::null(xid, credits).msg()).map(|_| ())
    }

    /// A READ of `five` through a write chunk that covers the count (RFC 8166 3.4.6).
    pub(super) fn read_through_write_chunk(&mut self) -> Step<()> {
        let fh = self.lookup(nfs3::FILE_FIVE)?;
        let mut lengths = vec![5];
        self.faults.bend_write_chunk(&mut lengths);
        let chunk = lengths
            .into_iter()
            .map(|n| self.register(n, Access::WRITE).map(|r| r.segment()))
            .collect::<Step<Vec<Segment>>>()?;
        let mut call = self.call_for(NFSPROC3_READ, nfs3::read_args(&fh, 0, 5));
        call.writes = vec![chunk];
        let _ = self.call("READ", call.xid, &call.msg());
        Ok(())
    }

    /// A WRITE to `scratch` whose data travels in a read chunk at the data item's position,
    /// the data alone, without its XDR pad (RFC 8166 3.4.5, 3.4.5.2).
    pub(super) fn write_through_read_chunk(&mut self) -> Step<()> {
        let fh = self.lookup(nfs3::FILE_SCRATCH)?;
        let bytes = [1u8, 2, 3, 4, 5, 6, 7];
        let mut chunk = bytes.to_vec();
        self.faults.bend_read_chunk(&mut chunk);
        let src = self.source(&chunk)?;
        let mut call = self.call_for(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &bytes));
        let position = self.faults.bend_position(call.end_position());
        call.reads = vec![ReadSegment { position, target: src.segment() }];
        let _ = self.call("WRITE", call.xid, &call.msg());
        self.ensure_connected()
    }

    /// A READDIR of `dir` whose reply is too long for inline: a reply chunk offered for it
    /// (RFC 8166 3.5.3, 4.3.3).
    pub(super) fn readdir_with_reply_chunk(&mut self) -> Step<()> {
        let dir = self.lookup(nfs3::DIR_MANY)?;
        let mut call = self.call_for(NFSPROC3_READDIR, nfs3::readdir_args(&dir, 0, [0; 8], 8192));
        call.reply = self.offer(self.faults.bend_reply_chunk(Some(16384)))?;
        let _ = self.call("READDIR", call.xid, &call.msg());
        self.ensure_connected()
    }

    /// A long call (RFC 8166 3.5.3): a NULL whose whole RPC message travels in a
    /// position-zero read chunk, under RDMA_NOMSG.
    pub(super) fn long_call(&mut self) -> Step<()> {
        let xid = self.xid();
        let mut call = Call::null(xid, self.options.credits);
        let plan = self.faults.bend_long_call(LongCall { position_zero: true, reply_chunk: None });
        if plan.position_zero {
            let src = self.source(&call.rpc_bytes())?;
            call.reads = vec![ReadSegment { position: 0, target: src.segment() }];
        }
        call.reply = self.offer(plan.reply_chunk)?;
        let _ = self.call("long NULL", call.xid, &call.nomsg());
        self.ensure_connected()
    }

    /// The credit window: as many NULLs outstanding as the current grant and our receives
    /// posted allow (RFC 8166 3.3.1), fewer if the options say so; then their replies.
    pub(super) fn credit_window(&mut self) -> Step<()> {
        let grant = self.grant.unwrap_or(1);
        let window = self.faults.bend_window(grant, grant.min(self.options.credits));
        let window = self.options.window.map_or(window, |w| window.min(w));
        for _ in 0..window {
            let xid = self.xid();
            self.send("the credit window", &Call::null(xid, self.options.credits).msg())?;
        }
        self.faults.linger_before_replies();
        let deadline = Instant::now() + self.options.timeout;
        for _ in 0..window {
            if self.recv_until("the credit window", deadline).is_err() {
                break;
            }
        }
        self.ensure_connected()
    }

    /// A NULL to end with, so every earlier reply has been seen.
    pub(super) fn closing_null(&mut self) -> Step<()> {
        let xid = self.xid();
        self.call("the closing NULL", xid, &Call::null(xid, self.options.credits).msg()).map(|_| ())
    }

    /// A registered region of `length` bytes for a reply chunk, when one is offered.
    fn offer(&mut self, length: Option<u32>) -> Step<Option<Vec<Segment>>> {
        length.map(|n| self.register(n, Access::WRITE).map(|r| vec![r.segment()])).transpose()
    }
}
