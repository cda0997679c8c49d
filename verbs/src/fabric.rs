//! What each RDMA fabric guarantees the verbs transport, written down once (docs/fabrics.md
//! has the same table). InfiniBand and RoCE (soft-RoCE, rxe) share the InfiniBand transport:
//! reliable-connected work requests are acknowledged by the responder, so remote errors come
//! back on the requester's completion. iWARP (soft-iWARP, siw; RFC 5040 RDMAP over RFC 5041
//! DDP over RFC 5044 MPA on TCP) acknowledges nothing at the RDMAP layer: a Send's or RDMA
//! Write's completion says only that the message left (RFC 5040 section 5.5 and 7.2), and an
//! error the remote peer detects ends the stream with a TERMINATE message (section 5.4), which
//! the local side sees as the connection going down.

/// The transport family of an RDMA device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fabric {
    /// InfiniBand transport: InfiniBand itself, RoCE, soft-RoCE (rxe).
    InfiniBand,
    /// iWARP: an RNIC, or soft-iWARP (siw).
    Iwarp,
}

/// ibv_node_type IBV_NODE_RNIC and ibv_transport_type IBV_TRANSPORT_IWARP (verbs.h).
const IBV_NODE_RNIC: i32 = 4;
const IBV_TRANSPORT_IWARP: i32 = 1;

impl Fabric {
    /// From a device's (node type, transport type), as libibverbs reports them.
    pub fn from_device(node_type: i32, transport_type: i32) -> Fabric {
        if transport_type == IBV_TRANSPORT_IWARP || node_type == IBV_NODE_RNIC {
            Fabric::Iwarp
        } else {
            Fabric::InfiniBand
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fabric::InfiniBand => "infiniband",
            Fabric::Iwarp => "iwarp",
        }
    }

    /// Whether a Send's and an RDMA Write's completion reports what the remote peer did
    /// with it. InfiniBand: yes (acknowledged: receiver not ready with rnr_retry 0, remote
    /// access error, remote invalid request). iWARP: no, the completion is local; the
    /// remote peer's error arrives as a TERMINATE, and the connection goes down.
    pub fn remote_errors_on_completion(self) -> bool {
        self == Fabric::InfiniBand
    }

    /// Whether a Send that finds no receive posted is reported as such (receiver not ready).
    /// iWARP has no RNR: the remote peer terminates the connection.
    pub fn reports_receiver_not_ready(self) -> bool {
        self == Fabric::InfiniBand
    }

    /// Whether the receive completion of a Send With Invalidate names the invalidated R_key
    /// (IBV_WC_WITH_INV). iWARP: not always. rdma-core's siw provider (providers/siw/siw.c,
    /// copy_cqe()) sets wc_flags to 0 and never copies the STag, so such a Send arrives
    /// looking plain; the kernel's siw invalidated the STag all the same
    /// (siw_rdmap_complete() in siw_qp_rx.c), and later accesses with it are refused.
    pub fn names_invalidated_rkey(self) -> bool {
        self == Fabric::InfiniBand
    }

    /// Whether connection private data arrives zero-padded to the CM message's private
    /// data area (InfiniBand CM: REQ and REP have fixed areas). iWARP (MPA, RFC 5044 section
    /// 7.1) carries exactly the bytes sent.
    pub fn pads_private_data(self) -> bool {
        self == Fabric::InfiniBand
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fabric_from_device_types() {
        // rxe: IBV_NODE_CA (1), IBV_TRANSPORT_IB (0); siw: IBV_NODE_RNIC (4), IBV_TRANSPORT_IWARP (1).
        assert_eq!(Fabric::from_device(1, 0), Fabric::InfiniBand);
        assert_eq!(Fabric::from_device(4, 1), Fabric::Iwarp);
        assert!(Fabric::InfiniBand.remote_errors_on_completion() && !Fabric::Iwarp.remote_errors_on_completion());
        assert!(Fabric::InfiniBand.pads_private_data() && !Fabric::Iwarp.pads_private_data());
    }
}
