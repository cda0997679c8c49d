//! The Connection Configuration Protocol (RFC 5666 6) as an upper layer: CONF_RDMA answered
//! with the responder's limits. RFC 8166 A.1 deleted CCP as never implemented, so peers may
//! equally refuse it with PROG_UNAVAIL.

use rpcrdma_codec::ccp::{ConfigRdmaReply, ConfigRdmaReq, CONF_RDMA, VERSION};
use rpcrdma_codec::xdr::{Encode, Reader};

use super::{UlpOutcome, UlpResults, UpperLayer};

/// Answers CONF_RDMA with the smaller of the requester's and our limits.
#[derive(Debug, Clone, Copy)]
pub struct CcpServer {
    /// The largest call we accept inline (our receive size).
    pub maxcall_sendsize: u32,
    /// The alignment we want for RDMA_MSGP (we never use RDMA_MSGP: 0).
    pub align: u32,
    /// RDMA Reads we allow outstanding.
    pub maxrdmaread: u32,
    /// Fault switch: answer CONF_RDMA with SUCCESS and no results.
    pub empty_reply: bool,
    /// The requester's maxrdmaread from its last CONF_RDMA: the RDMA Reads we may have active
    /// against its memory (RFC 5666 6.2).
    pub peer_maxrdmaread: Option<u32>,
}

impl Default for CcpServer {
    fn default() -> Self {
        CcpServer { maxcall_sendsize: 4096, align: 0, maxrdmaread: 16, empty_reply: false, peer_maxrdmaread: None }
    }
}

impl UpperLayer for CcpServer {
    fn call(&mut self, _prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome {
        if vers != VERSION {
            return UlpOutcome::ProgMismatch { low: VERSION, high: VERSION };
        }
        match proc_ {
            // RFC 5531 7: procedure 0 is NULL by convention (wire notes A7).
            0 => UlpOutcome::Success(UlpResults::default()),
            CONF_RDMA if self.empty_reply => UlpOutcome::Success(UlpResults::default()),
            CONF_RDMA => {
                let Ok(req) = ConfigRdmaReq::decode(&mut Reader::new(args)) else {
                    return UlpOutcome::GarbageArgs;
                };
                self.peer_maxrdmaread = Some(req.maxrdmaread);
                let reply = ConfigRdmaReply {
                    maxcall_sendsize: req.maxcall_sendsize.min(self.maxcall_sendsize),
                    align: self.align,
                    maxrdmaread: req.maxrdmaread.min(self.maxrdmaread),
                };
                UlpOutcome::Success(UlpResults::plain(reply.encode_to_vec()))
            }
            _ => UlpOutcome::ProcUnavail,
        }
    }

    fn peer_max_rdma_reads(&self) -> Option<u32> {
        self.peer_maxrdmaread
    }
}

/// Routes calls to the upper layer serving each program; others get PROG_UNAVAIL.
#[derive(Default)]
pub struct Programs {
    programs: Vec<(u32, Box<dyn UpperLayer>)>,
}

impl std::fmt::Debug for Programs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let progs: Vec<u32> = self.programs.iter().map(|(p, _)| *p).collect();
        f.debug_struct("Programs").field("programs", &progs).finish()
    }
}

impl Programs {
    pub fn new() -> Self {
        Programs::default()
    }

    /// Serves `program` with `ulp`.
    pub fn with(mut self, program: u32, ulp: Box<dyn UpperLayer>) -> Self {
        self.programs.push((program, ulp));
        self
    }

    /// The reference responder's programs: NFSv3 and NFSv4 over a fresh tree, NFSACL's NULL
    /// ([`super::NfsAclServer`]), and CCP.
    pub fn reference(ccp: CcpServer) -> Self {
        Programs::reference_with(ccp, super::NfsServer::new())
    }

    /// The reference responder's programs with `nfs` as the NFS program.
    pub fn reference_with(ccp: CcpServer, nfs: super::NfsServer) -> Self {
        Programs::new()
            .with(crate::proto::nfs3::NFS_PROGRAM, Box::new(nfs))
            .with(super::NFSACL_PROGRAM, Box::new(super::NfsAclServer))
            .with(rpcrdma_codec::ccp::PROGRAM, Box::new(ccp))
    }
}

impl UpperLayer for Programs {
    fn call(&mut self, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome {
        match self.programs.iter_mut().find(|(p, _)| *p == prog) {
            Some((_, ulp)) => ulp.call(prog, vers, proc_, args),
            None => UlpOutcome::ProgUnavail,
        }
    }

    fn ddp_eligible_arg(&self, prog: u32, vers: u32, proc_: u32, args: &[u8], offset: usize) -> bool {
        self.programs
            .iter()
            .find(|(p, _)| *p == prog)
            .is_some_and(|(_, u)| u.ddp_eligible_arg(prog, vers, proc_, args, offset))
    }

    fn peer_max_rdma_reads(&self) -> Option<u32> {
        self.programs.iter().find_map(|(_, u)| u.peer_max_rdma_reads())
    }

    fn take_reverse_calls(&mut self) -> Vec<Vec<u8>> {
        self.programs.iter_mut().flat_map(|(_, u)| u.take_reverse_calls()).collect()
    }

    fn reverse_reply(&mut self, msg: &[u8]) {
        // Each program ignores the replies to calls it did not make.
        for (_, u) in self.programs.iter_mut() {
            u.reverse_reply(msg);
        }
    }

    fn offered_write_list(&mut self, segments: &[u32]) {
        for (_, u) in self.programs.iter_mut() {
            u.offered_write_list(segments);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_rdma_answers_the_smaller_limits() {
        let args: Vec<u8> = [8192u32, 8192, 4].iter().flat_map(|w| w.to_be_bytes()).collect();
        let UlpOutcome::Success(r) = CcpServer::default().call(100417, 1, 1, &args) else { panic!() };
        // maxcall_sendsize min(8192, 4096), align 0, maxrdmaread min(4, 16) (RFC 5666 6.2).
        assert_eq!(r.head, [0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
        let mut ccp = CcpServer::default();
        assert_eq!(ccp.peer_max_rdma_reads(), None);
        ccp.call(100417, 1, 1, &args);
        assert_eq!(ccp.peer_max_rdma_reads(), Some(4), "the requester's maxrdmaread, kept");
        assert_eq!(CcpServer::default().call(100417, 1, 1, &args[..8]), UlpOutcome::GarbageArgs);
        assert_eq!(CcpServer::default().call(100417, 2, 1, &args), UlpOutcome::ProgMismatch { low: 1, high: 1 });
    }

    #[test]
    fn programs_route_and_refuse() {
        let mut p = Programs::reference(CcpServer::default());
        assert!(matches!(p.call(100003, 3, 0, &[]), UlpOutcome::Success(_)));
        assert!(matches!(p.call(100417, 1, 0, &[]), UlpOutcome::Success(_)));
        assert_eq!(p.call(100005, 3, 0, &[]), UlpOutcome::ProgUnavail);
        // NFSACL: NULL of version 3 only (a client binds the program on it), SETACL refused.
        assert!(matches!(p.call(100227, 3, 0, &[]), UlpOutcome::Success(_)));
        assert_eq!(p.call(100227, 3, 2, &[0; 8]), UlpOutcome::ProgUnavail);
        assert_eq!(p.call(100227, 2, 0, &[]), UlpOutcome::ProgMismatch { low: 3, high: 3 });
    }
}
