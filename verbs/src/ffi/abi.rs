//! The C ABI of rdma-core 44 on x86-64: `#[repr(C)]` mirrors of the structures this crate
//! uses, each size and offset asserted against the headers, and the constants.

use std::ffi::{c_int, c_void};
use std::mem::{offset_of, size_of};

// ---------------------------------------------------------------------------------------
// Structures (rdma-core 44, x86-64). Only the fields this module uses are named; the rest is
// padding of the right size, so each mirror has the C size and the named fields the C offsets.
// ---------------------------------------------------------------------------------------

pub(super) type PollCqFn = unsafe extern "C" fn(*mut IbvCq, c_int, *mut IbvWc) -> c_int;
pub(super) type ReqNotifyCqFn = unsafe extern "C" fn(*mut IbvCq, c_int) -> c_int;
pub(super) type PostSendFn = unsafe extern "C" fn(*mut IbvQp, *mut IbvSendWr, *mut *mut IbvSendWr) -> c_int;
pub(super) type PostRecvFn = unsafe extern "C" fn(*mut IbvQp, *mut IbvRecvWr, *mut *mut IbvRecvWr) -> c_int;
pub(super) type AllocMwFn = unsafe extern "C" fn(*mut IbvPd, c_int) -> *mut IbvMw;
pub(super) type DeallocMwFn = unsafe extern "C" fn(*mut IbvMw) -> c_int;

/// struct ibv_context_ops: 32 function pointers, most of them `_compat_` placeholders.
#[repr(C)]
pub(super) struct IbvContextOps {
    pub(super) _compat0: [*mut c_void; 7],
    pub(super) alloc_mw: Option<AllocMwFn>,
    pub(super) _bind_mw: *mut c_void,
    pub(super) dealloc_mw: Option<DeallocMwFn>,
    pub(super) _compat_create_cq: *mut c_void,
    pub(super) poll_cq: Option<PollCqFn>,
    pub(super) req_notify_cq: Option<ReqNotifyCqFn>,
    pub(super) _compat1: [*mut c_void; 12],
    pub(super) post_send: Option<PostSendFn>,
    pub(super) post_recv: Option<PostRecvFn>,
    pub(super) _compat2: [*mut c_void; 5],
}
const _: () = assert!(size_of::<IbvContextOps>() == 256);
const _: () = assert!(offset_of!(IbvContextOps, alloc_mw) == 56);
const _: () = assert!(offset_of!(IbvContextOps, dealloc_mw) == 72);
const _: () = assert!(offset_of!(IbvContextOps, poll_cq) == 88);
const _: () = assert!(offset_of!(IbvContextOps, req_notify_cq) == 96);
const _: () = assert!(offset_of!(IbvContextOps, post_send) == 200);
const _: () = assert!(offset_of!(IbvContextOps, post_recv) == 208);

/// The head of struct ibv_device (verbs.h): two `_ops` pointers, then the node type
/// (IBV_NODE_CA 1, IBV_NODE_RNIC 4, ...) and the transport type (IBV_TRANSPORT_IB 0,
/// IBV_TRANSPORT_IWARP 1, ...).
#[repr(C)]
pub(super) struct IbvDeviceHead {
    pub(super) _ops: [*mut c_void; 2],
    pub(super) node_type: c_int,
    pub(super) transport_type: c_int,
}
const _: () = assert!(offset_of!(IbvDeviceHead, node_type) == 16);
const _: () = assert!(offset_of!(IbvDeviceHead, transport_type) == 20);

#[repr(C)]
pub(super) struct IbvContext {
    pub(super) device: *mut c_void,
    pub(super) ops: IbvContextOps,
    pub(super) cmd_fd: c_int,
    pub(super) async_fd: c_int,
    pub(super) num_comp_vectors: c_int,
    pub(super) mutex: [u64; 5], // pthread_mutex_t
    pub(super) abi_compat: *mut c_void,
}
const _: () = assert!(size_of::<IbvContext>() == 328);
const _: () = assert!(offset_of!(IbvContext, ops) == 8);
const _: () = assert!(offset_of!(IbvContext, cmd_fd) == 264);

#[repr(C)]
pub(super) struct IbvPd {
    pub(super) context: *mut IbvContext,
    pub(super) handle: u32,
}
const _: () = assert!(size_of::<IbvPd>() == 16);

#[repr(C)]
pub(super) struct IbvCompChannel {
    pub(super) context: *mut IbvContext,
    pub(super) fd: c_int,
    pub(super) refcnt: c_int,
}
const _: () = assert!(size_of::<IbvCompChannel>() == 16);
const _: () = assert!(offset_of!(IbvCompChannel, fd) == 8);

#[repr(C)]
pub(super) struct IbvCq {
    pub(super) context: *mut IbvContext,
    pub(super) channel: *mut IbvCompChannel,
    pub(super) cq_context: *mut c_void,
    pub(super) handle: u32,
    pub(super) cqe: c_int,
    pub(super) mutex: [u64; 5], // pthread_mutex_t
    pub(super) cond: [u64; 6],  // pthread_cond_t
    pub(super) comp_events_completed: u32,
    pub(super) async_events_completed: u32,
}
const _: () = assert!(size_of::<IbvCq>() == 128);
const _: () = assert!(offset_of!(IbvCq, channel) == 8);

#[repr(C)]
pub(super) struct IbvQp {
    pub(super) context: *mut IbvContext,
    pub(super) qp_context: *mut c_void,
    pub(super) pd: *mut IbvPd,
    pub(super) send_cq: *mut IbvCq,
    pub(super) recv_cq: *mut IbvCq,
    pub(super) srq: *mut c_void,
    pub(super) handle: u32,
    pub(super) qp_num: u32,
    pub(super) state: u32,
    pub(super) qp_type: u32,
    pub(super) mutex: [u64; 5],
    pub(super) cond: [u64; 6],
    pub(super) events_completed: u32,
}
const _: () = assert!(size_of::<IbvQp>() == 160);
const _: () = assert!(offset_of!(IbvQp, qp_num) == 52);
const _: () = assert!(offset_of!(IbvQp, state) == 56);

#[repr(C)]
pub(super) struct IbvMr {
    pub(super) context: *mut IbvContext,
    pub(super) pd: *mut IbvPd,
    pub(super) addr: *mut c_void,
    pub(super) length: usize,
    pub(super) handle: u32,
    pub(super) lkey: u32,
    pub(super) rkey: u32,
}
const _: () = assert!(size_of::<IbvMr>() == 48);
const _: () = assert!(offset_of!(IbvMr, addr) == 16);
const _: () = assert!(offset_of!(IbvMr, length) == 24);
const _: () = assert!(offset_of!(IbvMr, lkey) == 36);
const _: () = assert!(offset_of!(IbvMr, rkey) == 40);

#[repr(C)]
pub(super) struct IbvMw {
    pub(super) context: *mut IbvContext,
    pub(super) pd: *mut IbvPd,
    pub(super) rkey: u32,
    pub(super) handle: u32,
    pub(super) mw_type: c_int,
}
const _: () = assert!(size_of::<IbvMw>() == 32);
const _: () = assert!(offset_of!(IbvMw, rkey) == 16);
const _: () = assert!(offset_of!(IbvMw, mw_type) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct IbvMwBindInfo {
    pub(super) mr: *mut IbvMr,
    pub(super) addr: u64,
    pub(super) length: u64,
    pub(super) mw_access_flags: u32,
}
const _: () = assert!(size_of::<IbvMwBindInfo>() == 32);
const _: () = assert!(offset_of!(IbvMwBindInfo, addr) == 8);
const _: () = assert!(offset_of!(IbvMwBindInfo, length) == 16);
const _: () = assert!(offset_of!(IbvMwBindInfo, mw_access_flags) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct IbvSge {
    pub(super) addr: u64,
    pub(super) length: u32,
    pub(super) lkey: u32,
}
const _: () = assert!(size_of::<IbvSge>() == 16);
const _: () = assert!(offset_of!(IbvSge, length) == 8);
const _: () = assert!(offset_of!(IbvSge, lkey) == 12);

/// struct ibv_send_wr with its unions flattened to the members used: `imm_data` /
/// `invalidate_rkey` at 36, `wr.rdma` at 40, `bind_mw` at 80.
#[repr(C)]
pub(super) struct IbvSendWr {
    pub(super) wr_id: u64,
    pub(super) next: *mut IbvSendWr,
    pub(super) sg_list: *mut IbvSge,
    pub(super) num_sge: c_int,
    pub(super) opcode: u32,
    pub(super) send_flags: u32,
    pub(super) invalidate_rkey: u32,
    pub(super) rdma_remote_addr: u64,
    pub(super) rdma_rkey: u32,
    pub(super) _wr_rest: [u32; 5],
    pub(super) _qp_type: u32,
    pub(super) _pad: u32,
    pub(super) bind_mw_mw: *mut IbvMw,
    pub(super) bind_mw_rkey: u32,
    pub(super) _pad2: u32,
    pub(super) bind_mw_info: IbvMwBindInfo,
}
const _: () = assert!(size_of::<IbvSendWr>() == 128);
const _: () = assert!(offset_of!(IbvSendWr, num_sge) == 24);
const _: () = assert!(offset_of!(IbvSendWr, opcode) == 28);
const _: () = assert!(offset_of!(IbvSendWr, send_flags) == 32);
const _: () = assert!(offset_of!(IbvSendWr, invalidate_rkey) == 36);
const _: () = assert!(offset_of!(IbvSendWr, rdma_remote_addr) == 40);
const _: () = assert!(offset_of!(IbvSendWr, rdma_rkey) == 48);
const _: () = assert!(offset_of!(IbvSendWr, _qp_type) == 72);
const _: () = assert!(offset_of!(IbvSendWr, bind_mw_mw) == 80);
const _: () = assert!(offset_of!(IbvSendWr, bind_mw_rkey) == 88);
const _: () = assert!(offset_of!(IbvSendWr, bind_mw_info) == 96);

#[repr(C)]
pub(super) struct IbvRecvWr {
    pub(super) wr_id: u64,
    pub(super) next: *mut IbvRecvWr,
    pub(super) sg_list: *mut IbvSge,
    pub(super) num_sge: c_int,
}
const _: () = assert!(size_of::<IbvRecvWr>() == 32);
const _: () = assert!(offset_of!(IbvRecvWr, num_sge) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct IbvWc {
    pub(super) wr_id: u64,
    pub(super) status: u32,
    pub(super) opcode: u32,
    pub(super) vendor_err: u32,
    pub(super) byte_len: u32,
    pub(super) imm_or_invalidated_rkey: u32,
    pub(super) qp_num: u32,
    pub(super) src_qp: u32,
    pub(super) wc_flags: u32,
    pub(super) pkey_index: u16,
    pub(super) slid: u16,
    pub(super) sl: u8,
    pub(super) dlid_path_bits: u8,
}
const _: () = assert!(size_of::<IbvWc>() == 48);
const _: () = assert!(offset_of!(IbvWc, status) == 8);
const _: () = assert!(offset_of!(IbvWc, opcode) == 12);
const _: () = assert!(offset_of!(IbvWc, byte_len) == 20);
const _: () = assert!(offset_of!(IbvWc, imm_or_invalidated_rkey) == 24);
const _: () = assert!(offset_of!(IbvWc, wc_flags) == 36);
const _: () = assert!(offset_of!(IbvWc, dlid_path_bits) == 45);

#[repr(C)]
pub(super) struct IbvQpCap {
    pub(super) max_send_wr: u32,
    pub(super) max_recv_wr: u32,
    pub(super) max_send_sge: u32,
    pub(super) max_recv_sge: u32,
    pub(super) max_inline_data: u32,
}
const _: () = assert!(size_of::<IbvQpCap>() == 20);

#[repr(C)]
pub(super) struct IbvQpInitAttr {
    pub(super) qp_context: *mut c_void,
    pub(super) send_cq: *mut IbvCq,
    pub(super) recv_cq: *mut IbvCq,
    pub(super) srq: *mut c_void,
    pub(super) cap: IbvQpCap,
    pub(super) qp_type: u32,
    pub(super) sq_sig_all: c_int,
}
const _: () = assert!(size_of::<IbvQpInitAttr>() == 64);
const _: () = assert!(offset_of!(IbvQpInitAttr, cap) == 32);
const _: () = assert!(offset_of!(IbvQpInitAttr, qp_type) == 52);
const _: () = assert!(offset_of!(IbvQpInitAttr, sq_sig_all) == 56);

#[repr(C)]
pub(super) struct RdmaEventChannel {
    pub(super) fd: c_int,
}
const _: () = assert!(size_of::<RdmaEventChannel>() == 4);

/// struct rdma_cm_id: the first four pointers; `route` and the rest as padding.
#[repr(C)]
pub(super) struct RdmaCmId {
    pub(super) verbs: *mut IbvContext,
    pub(super) channel: *mut RdmaEventChannel,
    pub(super) context: *mut c_void,
    pub(super) qp: *mut IbvQp,
    pub(super) _rest: [u64; 48],
}
const _: () = assert!(size_of::<RdmaCmId>() == 416);
const _: () = assert!(offset_of!(RdmaCmId, channel) == 8);
const _: () = assert!(offset_of!(RdmaCmId, qp) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct RdmaConnParam {
    pub(super) private_data: *const c_void,
    pub(super) private_data_len: u8,
    pub(super) responder_resources: u8,
    pub(super) initiator_depth: u8,
    pub(super) flow_control: u8,
    pub(super) retry_count: u8,
    pub(super) rnr_retry_count: u8,
    pub(super) srq: u8,
    pub(super) qp_num: u32,
}
const _: () = assert!(size_of::<RdmaConnParam>() == 24);
const _: () = assert!(offset_of!(RdmaConnParam, private_data_len) == 8);
const _: () = assert!(offset_of!(RdmaConnParam, responder_resources) == 9);
const _: () = assert!(offset_of!(RdmaConnParam, initiator_depth) == 10);
const _: () = assert!(offset_of!(RdmaConnParam, retry_count) == 12);
const _: () = assert!(offset_of!(RdmaConnParam, rnr_retry_count) == 13);
const _: () = assert!(offset_of!(RdmaConnParam, srq) == 14);
const _: () = assert!(offset_of!(RdmaConnParam, qp_num) == 16);

/// struct rdma_cm_event; `param` is a union of `conn` (rdma_conn_param) and the larger `ud`.
#[repr(C)]
pub(super) struct RdmaCmEvent {
    pub(super) id: *mut RdmaCmId,
    pub(super) listen_id: *mut RdmaCmId,
    pub(super) event: u32,
    pub(super) status: c_int,
    pub(super) conn: RdmaConnParam,
    pub(super) _ud_rest: [u64; 4],
}
const _: () = assert!(size_of::<RdmaCmEvent>() == 80);
const _: () = assert!(offset_of!(RdmaCmEvent, event) == 16);
const _: () = assert!(offset_of!(RdmaCmEvent, status) == 20);
const _: () = assert!(offset_of!(RdmaCmEvent, conn) == 24);

// sockaddr_in / sockaddr_in6 come from the libc crate; check them as well.
const _: () = assert!(size_of::<libc::sockaddr_in>() == 16);
const _: () = assert!(offset_of!(libc::sockaddr_in, sin_port) == 2);
const _: () = assert!(offset_of!(libc::sockaddr_in, sin_addr) == 4);
const _: () = assert!(size_of::<libc::sockaddr_in6>() == 28);
const _: () = assert!(offset_of!(libc::sockaddr_in6, sin6_addr) == 8);
const _: () = assert!(offset_of!(libc::sockaddr_in6, sin6_scope_id) == 24);

// Constants (values printed from the same headers).
pub(super) const RDMA_PS_TCP: c_int = 0x0106;
pub(super) const IBV_QPT_RC: u32 = 2;
pub(super) const IBV_WR_RDMA_WRITE: u32 = 0;
pub(super) const IBV_WR_SEND: u32 = 2;
pub(super) const IBV_WR_RDMA_READ: u32 = 4;
pub(super) const IBV_WR_BIND_MW: u32 = 8;
pub(super) const IBV_WR_SEND_WITH_INV: u32 = 9;
pub(super) const IBV_SEND_SIGNALED: u32 = 1 << 1;
pub(super) const IBV_WC_WITH_INV: u32 = 1 << 3;
/// The kernel's IB_WC_WITH_INVALIDATE (include/rdma/ib_verbs.h). Providers whose completions
/// are the kernel's `ib_uverbs_wc` copied as is (rxe's poll_cq memcpys them) report remote
/// invalidation with this bit, not IBV_WC_WITH_INV; on an RC receive completion it has no
/// other meaning (IBV_WC_IP_CSUM_OK, the same value, is for raw-packet/UD offloads).
pub(super) const KERNEL_IB_WC_WITH_INVALIDATE: u32 = 1 << 2;
/// IBV_WC_RECV: receive completions have this bit set in their opcode.
pub(super) const IBV_WC_RECV: u32 = 1 << 7;
pub(super) const IBV_MW_TYPE_2: c_int = 2;
pub const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
pub const IBV_ACCESS_REMOTE_WRITE: c_int = 1 << 1;
pub const IBV_ACCESS_REMOTE_READ: c_int = 1 << 2;
pub const IBV_ACCESS_MW_BIND: c_int = 1 << 4;
/// RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH: librdmacm substitutes the device maximum.
pub const RDMA_MAX_DEPTH: u8 = 0xff;

/// ibv_wc_status values this crate distinguishes.
#[allow(dead_code)]
pub mod wc_status {
    pub const SUCCESS: u32 = 0;
    pub const LOC_LEN_ERR: u32 = 1;
    pub const LOC_QP_OP_ERR: u32 = 2;
    pub const LOC_PROT_ERR: u32 = 4;
    pub const WR_FLUSH_ERR: u32 = 5;
    pub const REM_INV_REQ_ERR: u32 = 9;
    pub const REM_ACCESS_ERR: u32 = 10;
    pub const RETRY_EXC_ERR: u32 = 12;
    pub const RNR_RETRY_EXC_ERR: u32 = 13;
}

/// enum rdma_cm_event_type.
#[allow(dead_code)]
pub mod cm_event {
    pub const ADDR_RESOLVED: u32 = 0;
    pub const ADDR_ERROR: u32 = 1;
    pub const ROUTE_RESOLVED: u32 = 2;
    pub const ROUTE_ERROR: u32 = 3;
    pub const CONNECT_REQUEST: u32 = 4;
    pub const CONNECT_RESPONSE: u32 = 5;
    pub const CONNECT_ERROR: u32 = 6;
    pub const UNREACHABLE: u32 = 7;
    pub const REJECTED: u32 = 8;
    pub const ESTABLISHED: u32 = 9;
    pub const DISCONNECTED: u32 = 10;
    pub const DEVICE_REMOVAL: u32 = 11;
    pub const TIMEWAIT_EXIT: u32 = 15;
}
