//! The verbs transport's only module with `unsafe` code: librdmacm and libibverbs (Debian 12,
//! rdma-core 44) loaded at run time with dlopen, their structures as `#[repr(C)]` mirrors
//! checked against the C headers at compile time, and small owning wrappers whose safe methods
//! the rest of `verbs` composes. (The harness's signal handlers are in `signals.rs`.)
//!
//! Layouts: every size and offset asserted below was printed by a C program compiled against
//! /usr/include/infiniband/verbs.h and /usr/include/rdma/rdma_cma.h of rdma-core 44 on x86-64
//! (`sizeof`/`offsetof` of each field used). rdma-core keeps these structures ABI-stable
//! (they are part of the libibverbs.so.1 / librdmacm.so.1 ABI).
//!
//! Soundness rules the wrappers keep:
//! - Every resource holds an `Arc` to what it was created from (a QP its CQ and PD, a CQ its
//!   completion channel, an MR its PD, an id its event channel), so nothing is destroyed while
//!   something created from it lives.
//! - A buffer handed to the device (a posted receive, send or RDMA Read/Write target) is owned
//!   by the queue pair's in-flight table until its completion comes back or the queue pair is
//!   destroyed; a registered buffer is freed only after a successful `ibv_dereg_mr` (after a
//!   failed one it is leaked, never freed while the device may still write it).
//! - Static-inline verbs (`ibv_post_send`, `ibv_post_recv`, `ibv_poll_cq`,
//!   `ibv_req_notify_cq`, `ibv_alloc_mw`, `ibv_dealloc_mw`) go through the context's ops table,
//!   as verbs.h itself does.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::mem::{offset_of, size_of, MaybeUninit};
use std::net::SocketAddr;
use std::ptr;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

// ---------------------------------------------------------------------------------------
// Structures (rdma-core 44, x86-64). Only the fields this module uses are named; the rest is
// padding of the right size, so each mirror has the C size and the named fields the C offsets.
// ---------------------------------------------------------------------------------------

type PollCqFn = unsafe extern "C" fn(*mut IbvCq, c_int, *mut IbvWc) -> c_int;
type ReqNotifyCqFn = unsafe extern "C" fn(*mut IbvCq, c_int) -> c_int;
type PostSendFn = unsafe extern "C" fn(*mut IbvQp, *mut IbvSendWr, *mut *mut IbvSendWr) -> c_int;
type PostRecvFn = unsafe extern "C" fn(*mut IbvQp, *mut IbvRecvWr, *mut *mut IbvRecvWr) -> c_int;
type AllocMwFn = unsafe extern "C" fn(*mut IbvPd, c_int) -> *mut IbvMw;
type DeallocMwFn = unsafe extern "C" fn(*mut IbvMw) -> c_int;

/// struct ibv_context_ops: 32 function pointers, most of them `_compat_` placeholders.
#[repr(C)]
struct IbvContextOps {
    _compat0: [*mut c_void; 7],
    alloc_mw: Option<AllocMwFn>,
    _bind_mw: *mut c_void,
    dealloc_mw: Option<DeallocMwFn>,
    _compat_create_cq: *mut c_void,
    poll_cq: Option<PollCqFn>,
    req_notify_cq: Option<ReqNotifyCqFn>,
    _compat1: [*mut c_void; 12],
    post_send: Option<PostSendFn>,
    post_recv: Option<PostRecvFn>,
    _compat2: [*mut c_void; 5],
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
struct IbvDeviceHead {
    _ops: [*mut c_void; 2],
    node_type: c_int,
    transport_type: c_int,
}
const _: () = assert!(offset_of!(IbvDeviceHead, node_type) == 16);
const _: () = assert!(offset_of!(IbvDeviceHead, transport_type) == 20);

#[repr(C)]
struct IbvContext {
    device: *mut c_void,
    ops: IbvContextOps,
    cmd_fd: c_int,
    async_fd: c_int,
    num_comp_vectors: c_int,
    mutex: [u64; 5], // pthread_mutex_t
    abi_compat: *mut c_void,
}
const _: () = assert!(size_of::<IbvContext>() == 328);
const _: () = assert!(offset_of!(IbvContext, ops) == 8);
const _: () = assert!(offset_of!(IbvContext, cmd_fd) == 264);

#[repr(C)]
struct IbvPd {
    context: *mut IbvContext,
    handle: u32,
}
const _: () = assert!(size_of::<IbvPd>() == 16);

#[repr(C)]
struct IbvCompChannel {
    context: *mut IbvContext,
    fd: c_int,
    refcnt: c_int,
}
const _: () = assert!(size_of::<IbvCompChannel>() == 16);
const _: () = assert!(offset_of!(IbvCompChannel, fd) == 8);

#[repr(C)]
struct IbvCq {
    context: *mut IbvContext,
    channel: *mut IbvCompChannel,
    cq_context: *mut c_void,
    handle: u32,
    cqe: c_int,
    mutex: [u64; 5], // pthread_mutex_t
    cond: [u64; 6],  // pthread_cond_t
    comp_events_completed: u32,
    async_events_completed: u32,
}
const _: () = assert!(size_of::<IbvCq>() == 128);
const _: () = assert!(offset_of!(IbvCq, channel) == 8);

#[repr(C)]
struct IbvQp {
    context: *mut IbvContext,
    qp_context: *mut c_void,
    pd: *mut IbvPd,
    send_cq: *mut IbvCq,
    recv_cq: *mut IbvCq,
    srq: *mut c_void,
    handle: u32,
    qp_num: u32,
    state: u32,
    qp_type: u32,
    mutex: [u64; 5],
    cond: [u64; 6],
    events_completed: u32,
}
const _: () = assert!(size_of::<IbvQp>() == 160);
const _: () = assert!(offset_of!(IbvQp, qp_num) == 52);
const _: () = assert!(offset_of!(IbvQp, state) == 56);

#[repr(C)]
struct IbvMr {
    context: *mut IbvContext,
    pd: *mut IbvPd,
    addr: *mut c_void,
    length: usize,
    handle: u32,
    lkey: u32,
    rkey: u32,
}
const _: () = assert!(size_of::<IbvMr>() == 48);
const _: () = assert!(offset_of!(IbvMr, addr) == 16);
const _: () = assert!(offset_of!(IbvMr, length) == 24);
const _: () = assert!(offset_of!(IbvMr, lkey) == 36);
const _: () = assert!(offset_of!(IbvMr, rkey) == 40);

#[repr(C)]
struct IbvMw {
    context: *mut IbvContext,
    pd: *mut IbvPd,
    rkey: u32,
    handle: u32,
    mw_type: c_int,
}
const _: () = assert!(size_of::<IbvMw>() == 32);
const _: () = assert!(offset_of!(IbvMw, rkey) == 16);
const _: () = assert!(offset_of!(IbvMw, mw_type) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
struct IbvMwBindInfo {
    mr: *mut IbvMr,
    addr: u64,
    length: u64,
    mw_access_flags: u32,
}
const _: () = assert!(size_of::<IbvMwBindInfo>() == 32);
const _: () = assert!(offset_of!(IbvMwBindInfo, addr) == 8);
const _: () = assert!(offset_of!(IbvMwBindInfo, length) == 16);
const _: () = assert!(offset_of!(IbvMwBindInfo, mw_access_flags) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
struct IbvSge {
    addr: u64,
    length: u32,
    lkey: u32,
}
const _: () = assert!(size_of::<IbvSge>() == 16);
const _: () = assert!(offset_of!(IbvSge, length) == 8);
const _: () = assert!(offset_of!(IbvSge, lkey) == 12);

/// struct ibv_send_wr with its unions flattened to the members used: `imm_data` /
/// `invalidate_rkey` at 36, `wr.rdma` at 40, `bind_mw` at 80.
#[repr(C)]
struct IbvSendWr {
    wr_id: u64,
    next: *mut IbvSendWr,
    sg_list: *mut IbvSge,
    num_sge: c_int,
    opcode: u32,
    send_flags: u32,
    invalidate_rkey: u32,
    rdma_remote_addr: u64,
    rdma_rkey: u32,
    _wr_rest: [u32; 5],
    _qp_type: u32,
    _pad: u32,
    bind_mw_mw: *mut IbvMw,
    bind_mw_rkey: u32,
    _pad2: u32,
    bind_mw_info: IbvMwBindInfo,
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
struct IbvRecvWr {
    wr_id: u64,
    next: *mut IbvRecvWr,
    sg_list: *mut IbvSge,
    num_sge: c_int,
}
const _: () = assert!(size_of::<IbvRecvWr>() == 32);
const _: () = assert!(offset_of!(IbvRecvWr, num_sge) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
struct IbvWc {
    wr_id: u64,
    status: u32,
    opcode: u32,
    vendor_err: u32,
    byte_len: u32,
    imm_or_invalidated_rkey: u32,
    qp_num: u32,
    src_qp: u32,
    wc_flags: u32,
    pkey_index: u16,
    slid: u16,
    sl: u8,
    dlid_path_bits: u8,
}
const _: () = assert!(size_of::<IbvWc>() == 48);
const _: () = assert!(offset_of!(IbvWc, status) == 8);
const _: () = assert!(offset_of!(IbvWc, opcode) == 12);
const _: () = assert!(offset_of!(IbvWc, byte_len) == 20);
const _: () = assert!(offset_of!(IbvWc, imm_or_invalidated_rkey) == 24);
const _: () = assert!(offset_of!(IbvWc, wc_flags) == 36);
const _: () = assert!(offset_of!(IbvWc, dlid_path_bits) == 45);

#[repr(C)]
struct IbvQpCap {
    max_send_wr: u32,
    max_recv_wr: u32,
    max_send_sge: u32,
    max_recv_sge: u32,
    max_inline_data: u32,
}
const _: () = assert!(size_of::<IbvQpCap>() == 20);

#[repr(C)]
struct IbvQpInitAttr {
    qp_context: *mut c_void,
    send_cq: *mut IbvCq,
    recv_cq: *mut IbvCq,
    srq: *mut c_void,
    cap: IbvQpCap,
    qp_type: u32,
    sq_sig_all: c_int,
}
const _: () = assert!(size_of::<IbvQpInitAttr>() == 64);
const _: () = assert!(offset_of!(IbvQpInitAttr, cap) == 32);
const _: () = assert!(offset_of!(IbvQpInitAttr, qp_type) == 52);
const _: () = assert!(offset_of!(IbvQpInitAttr, sq_sig_all) == 56);

#[repr(C)]
struct RdmaEventChannel {
    fd: c_int,
}
const _: () = assert!(size_of::<RdmaEventChannel>() == 4);

/// struct rdma_cm_id: the first four pointers; `route` and the rest as padding.
#[repr(C)]
struct RdmaCmId {
    verbs: *mut IbvContext,
    channel: *mut RdmaEventChannel,
    context: *mut c_void,
    qp: *mut IbvQp,
    _rest: [u64; 48],
}
const _: () = assert!(size_of::<RdmaCmId>() == 416);
const _: () = assert!(offset_of!(RdmaCmId, channel) == 8);
const _: () = assert!(offset_of!(RdmaCmId, qp) == 24);

#[repr(C)]
#[derive(Clone, Copy)]
struct RdmaConnParam {
    private_data: *const c_void,
    private_data_len: u8,
    responder_resources: u8,
    initiator_depth: u8,
    flow_control: u8,
    retry_count: u8,
    rnr_retry_count: u8,
    srq: u8,
    qp_num: u32,
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
struct RdmaCmEvent {
    id: *mut RdmaCmId,
    listen_id: *mut RdmaCmId,
    event: u32,
    status: c_int,
    conn: RdmaConnParam,
    _ud_rest: [u64; 4],
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
const RDMA_PS_TCP: c_int = 0x0106;
const IBV_QPT_RC: u32 = 2;
const IBV_WR_RDMA_WRITE: u32 = 0;
const IBV_WR_SEND: u32 = 2;
const IBV_WR_RDMA_READ: u32 = 4;
const IBV_WR_BIND_MW: u32 = 8;
const IBV_WR_SEND_WITH_INV: u32 = 9;
const IBV_SEND_SIGNALED: u32 = 1 << 1;
const IBV_WC_WITH_INV: u32 = 1 << 3;
/// The kernel's IB_WC_WITH_INVALIDATE (include/rdma/ib_verbs.h). Providers whose completions
/// are the kernel's `ib_uverbs_wc` copied as is (rxe's poll_cq memcpys them) report remote
/// invalidation with this bit, not IBV_WC_WITH_INV; on an RC receive completion it has no
/// other meaning (IBV_WC_IP_CSUM_OK, the same value, is for raw-packet/UD offloads).
const KERNEL_IB_WC_WITH_INVALIDATE: u32 = 1 << 2;
/// IBV_WC_RECV: receive completions have this bit set in their opcode.
const IBV_WC_RECV: u32 = 1 << 7;
const IBV_MW_TYPE_2: c_int = 2;
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

// ---------------------------------------------------------------------------------------
// Run-time loading.
// ---------------------------------------------------------------------------------------

/// The entry points used, resolved from librdmacm.so.1 and libibverbs.so.1.
pub struct Lib {
    rdma_create_event_channel: unsafe extern "C" fn() -> *mut RdmaEventChannel,
    rdma_destroy_event_channel: unsafe extern "C" fn(*mut RdmaEventChannel),
    rdma_create_id: unsafe extern "C" fn(*mut RdmaEventChannel, *mut *mut RdmaCmId, *mut c_void, c_int) -> c_int,
    rdma_destroy_id: unsafe extern "C" fn(*mut RdmaCmId) -> c_int,
    rdma_resolve_addr:
        unsafe extern "C" fn(*mut RdmaCmId, *const libc::sockaddr, *const libc::sockaddr, c_int) -> c_int,
    rdma_resolve_route: unsafe extern "C" fn(*mut RdmaCmId, c_int) -> c_int,
    rdma_create_qp: unsafe extern "C" fn(*mut RdmaCmId, *mut IbvPd, *mut IbvQpInitAttr) -> c_int,
    rdma_destroy_qp: unsafe extern "C" fn(*mut RdmaCmId),
    rdma_connect: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaConnParam) -> c_int,
    rdma_accept: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaConnParam) -> c_int,
    rdma_reject: unsafe extern "C" fn(*mut RdmaCmId, *const c_void, u8) -> c_int,
    rdma_disconnect: unsafe extern "C" fn(*mut RdmaCmId) -> c_int,
    rdma_bind_addr: unsafe extern "C" fn(*mut RdmaCmId, *const libc::sockaddr) -> c_int,
    rdma_listen: unsafe extern "C" fn(*mut RdmaCmId, c_int) -> c_int,
    rdma_migrate_id: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaEventChannel) -> c_int,
    rdma_get_cm_event: unsafe extern "C" fn(*mut RdmaEventChannel, *mut *mut RdmaCmEvent) -> c_int,
    rdma_ack_cm_event: unsafe extern "C" fn(*mut RdmaCmEvent) -> c_int,
    rdma_event_str: unsafe extern "C" fn(u32) -> *const c_char,
    ibv_get_device_list: unsafe extern "C" fn(*mut c_int) -> *mut *mut c_void,
    ibv_free_device_list: unsafe extern "C" fn(*mut *mut c_void),
    ibv_alloc_pd: unsafe extern "C" fn(*mut IbvContext) -> *mut IbvPd,
    ibv_dealloc_pd: unsafe extern "C" fn(*mut IbvPd) -> c_int,
    ibv_create_comp_channel: unsafe extern "C" fn(*mut IbvContext) -> *mut IbvCompChannel,
    ibv_destroy_comp_channel: unsafe extern "C" fn(*mut IbvCompChannel) -> c_int,
    ibv_create_cq: unsafe extern "C" fn(*mut IbvContext, c_int, *mut c_void, *mut IbvCompChannel, c_int) -> *mut IbvCq,
    ibv_destroy_cq: unsafe extern "C" fn(*mut IbvCq) -> c_int,
    ibv_get_cq_event: unsafe extern "C" fn(*mut IbvCompChannel, *mut *mut IbvCq, *mut *mut c_void) -> c_int,
    ibv_ack_cq_events: unsafe extern "C" fn(*mut IbvCq, u32),
    ibv_reg_mr: unsafe extern "C" fn(*mut IbvPd, *mut c_void, usize, c_int) -> *mut IbvMr,
    ibv_dereg_mr: unsafe extern "C" fn(*mut IbvMr) -> c_int,
}

fn dlerror_string() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call
    // on this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

fn open(name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|_| format!("bad library name {name:?}"))?;
    // SAFETY: `c` is a valid NUL-terminated path; the libraries' constructors (rdma-core's)
    // only initialize their own state. The handle is never closed, so the resolved function
    // pointers stay valid for the life of the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if h.is_null() {
        Err(dlerror_string())
    } else {
        Ok(h)
    }
}

fn sym(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|_| format!("bad symbol name {name:?}"))?;
    // SAFETY: `handle` came from a successful dlopen that is never closed; `c` is
    // NUL-terminated.
    let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if p.is_null() {
        Err(format!("{name}: {}", dlerror_string()))
    } else {
        Ok(p)
    }
}

/// Reinterprets a symbol address as the function-pointer type `F`.
///
/// # Safety
/// `F` must be an `unsafe extern "C" fn` type matching the C prototype of the symbol.
unsafe fn cast_fn<F: Copy>(p: *mut c_void) -> F {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    // SAFETY: same size (asserted above); the caller guarantees the type matches the symbol.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

macro_rules! load_fns {
    ($($h:ident: $($name:ident),+;)+) => {
        Lib { $($(
            // SAFETY: the symbol is the rdma-core 44 function of that name, whose C prototype
            // the field's type mirrors (checked against the headers by hand: each argument
            // is a pointer, int, uint8/32 or size_t as declared there).
            $name: unsafe { cast_fn(sym($h, stringify!($name))?) },
        )+)+ }
    };
}

/// Library names, overridable for machines with rdma-core elsewhere (and for tests).
fn lib_names() -> (String, String) {
    (
        std::env::var("RPCRDMA_LIBIBVERBS").unwrap_or_else(|_| "libibverbs.so.1".into()),
        std::env::var("RPCRDMA_LIBRDMACM").unwrap_or_else(|_| "librdmacm.so.1".into()),
    )
}

fn load_libs() -> Result<Lib, String> {
    let (verbs_name, cm_name) = lib_names();
    let verbs = open(&verbs_name)?;
    let cm = open(&cm_name)?;
    Ok(load_fns! {
        cm: rdma_create_event_channel, rdma_destroy_event_channel, rdma_create_id, rdma_destroy_id,
            rdma_resolve_addr, rdma_resolve_route, rdma_create_qp, rdma_destroy_qp, rdma_connect,
            rdma_accept, rdma_reject, rdma_disconnect, rdma_bind_addr, rdma_listen, rdma_migrate_id,
            rdma_get_cm_event, rdma_ack_cm_event, rdma_event_str;
        verbs: ibv_get_device_list, ibv_free_device_list, ibv_alloc_pd, ibv_dealloc_pd,
            ibv_create_comp_channel, ibv_destroy_comp_channel, ibv_create_cq, ibv_destroy_cq,
            ibv_get_cq_event, ibv_ack_cq_events, ibv_reg_mr, ibv_dereg_mr;
    })
}

/// Loads rdma-core once per process; the error says why it is not usable.
pub fn lib() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(load_libs).as_ref().map_err(|e| e.clone())
}

impl Lib {
    /// How many RDMA devices libibverbs can open (0 when it finds none or fails).
    pub fn device_count(&self) -> usize {
        let mut n: c_int = 0;
        // SAFETY: `n` is a valid out-pointer; the returned list is freed with the matching
        // ibv_free_device_list and not used after.
        unsafe {
            let list = (self.ibv_get_device_list)(&mut n);
            if list.is_null() {
                return 0;
            }
            (self.ibv_free_device_list)(list);
        }
        n.max(0) as usize
    }

    pub fn event_name(&self, event: u32) -> String {
        // SAFETY: rdma_event_str returns a pointer to a static string for any value.
        unsafe {
            let s = (self.rdma_event_str)(event);
            if s.is_null() {
                format!("event {event}")
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        }
    }
}

fn check(rc: c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_nonblocking(fd: c_int) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Waits until one of `fds` is readable or `deadline` passes; which ones are readable.
pub fn wait_readable(fds: &[c_int], deadline: Instant) -> io::Result<Vec<bool>> {
    let mut p: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let left = deadline.saturating_duration_since(Instant::now());
    let ms = if left.is_zero() { 0 } else { (left.as_micros().div_ceil(1000)).min(i32::MAX as u128) as c_int };
    // SAFETY: `p` is a valid array of `p.len()` pollfd structures for the duration of the call.
    let rc = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(p.iter().map(|q| q.revents != 0).collect())
}

/// Whether `fd` is readable right now.
pub fn readable_now(fd: c_int) -> bool {
    wait_readable(&[fd], Instant::now()).is_ok_and(|r| r[0])
}

enum SockAddr {
    V4(libc::sockaddr_in),
    V6(libc::sockaddr_in6),
}

impl SockAddr {
    fn new(addr: &SocketAddr) -> SockAddr {
        match addr {
            SocketAddr::V4(a) => {
                // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
                let mut s: libc::sockaddr_in = unsafe { MaybeUninit::zeroed().assume_init() };
                s.sin_family = libc::AF_INET as libc::sa_family_t;
                s.sin_port = a.port().to_be();
                s.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                SockAddr::V4(s)
            }
            SocketAddr::V6(a) => {
                // SAFETY: sockaddr_in6 is plain old data; all-zero is a valid value.
                let mut s: libc::sockaddr_in6 = unsafe { MaybeUninit::zeroed().assume_init() };
                s.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                s.sin6_port = a.port().to_be();
                s.sin6_flowinfo = a.flowinfo().to_be();
                s.sin6_addr.s6_addr = a.ip().octets();
                s.sin6_scope_id = a.scope_id();
                SockAddr::V6(s)
            }
        }
    }

    fn as_ptr(&self) -> *const libc::sockaddr {
        match self {
            SockAddr::V4(s) => s as *const _ as *const libc::sockaddr,
            SockAddr::V6(s) => s as *const _ as *const libc::sockaddr,
        }
    }
}

// ---------------------------------------------------------------------------------------
// RDMA-CM.
// ---------------------------------------------------------------------------------------

/// An RDMA-CM event channel (its fd is non-blocking).
pub struct EventChannel {
    lib: &'static Lib,
    ch: *mut RdmaEventChannel,
}

// SAFETY: the channel is a heap struct holding an fd; librdmacm calls on it are thread-safe
// (each is a read/write on the fd) and the pointer is never handed out.
unsafe impl Send for EventChannel {}
// SAFETY: as above; `&EventChannel` only reads events through librdmacm.
unsafe impl Sync for EventChannel {}

/// A CM event, copied out and acknowledged.
pub struct CmEvent {
    pub kind: u32,
    pub status: i32,
    /// The private data as delivered (the whole zero-padded CM area).
    pub private_data: Vec<u8>,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    /// For CONNECT_REQUEST: the new connection's id (on the listener's channel).
    pub new_id: Option<CmId>,
}

impl EventChannel {
    pub fn new(lib: &'static Lib) -> io::Result<Arc<EventChannel>> {
        // SAFETY: no arguments; a NULL result is an error reported through errno.
        let ch = unsafe { (lib.rdma_create_event_channel)() };
        if ch.is_null() {
            return Err(io::Error::last_os_error());
        }
        let me = EventChannel { lib, ch };
        set_nonblocking(me.fd())?;
        Ok(Arc::new(me))
    }

    pub fn fd(&self) -> c_int {
        // SAFETY: `ch` is a live channel owned by self.
        unsafe { (*self.ch).fd }
    }

    /// The next event if one is queued (never blocks).
    pub fn try_event(self: &Arc<Self>) -> io::Result<Option<CmEvent>> {
        let mut ev: *mut RdmaCmEvent = ptr::null_mut();
        // SAFETY: `ch` is live; `ev` is a valid out-pointer. The fd is non-blocking, so the
        // call returns EAGAIN instead of waiting.
        let rc = unsafe { (self.lib.rdma_get_cm_event)(self.ch, &mut ev) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
        }
        // SAFETY: on success `ev` points to an event librdmacm owns until we ack it; its
        // private_data (if non-NULL) has private_data_len readable bytes. Everything is
        // copied before rdma_ack_cm_event frees it.
        unsafe {
            let e = &*ev;
            let pd = if e.conn.private_data.is_null() || e.conn.private_data_len == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(e.conn.private_data as *const u8, e.conn.private_data_len as usize).to_vec()
            };
            let new_id = if e.event == cm_event::CONNECT_REQUEST && !e.id.is_null() {
                Some(CmId { lib: self.lib, id: e.id, ch: self.clone(), qp: None })
            } else {
                None
            };
            let out = CmEvent {
                kind: e.event,
                status: e.status,
                private_data: pd,
                responder_resources: e.conn.responder_resources,
                initiator_depth: e.conn.initiator_depth,
                new_id,
            };
            (self.lib.rdma_ack_cm_event)(ev);
            Ok(Some(out))
        }
    }

    /// The next event, waiting until `deadline`.
    pub fn next_event(self: &Arc<Self>, deadline: Instant) -> io::Result<Option<CmEvent>> {
        loop {
            if let Some(e) = self.try_event()? {
                return Ok(Some(e));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            wait_readable(&[self.fd()], deadline)?;
        }
    }
}

impl Drop for EventChannel {
    fn drop(&mut self) {
        // SAFETY: every id on this channel holds an Arc to it, so none is left.
        unsafe { (self.lib.rdma_destroy_event_channel)(self.ch) }
    }
}

/// Queue-pair sizes.
#[derive(Debug, Clone, Copy)]
pub struct QpCaps {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
}

/// Connection parameters for rdma_connect / rdma_accept.
#[derive(Debug, Clone, Copy)]
pub struct ConnParams {
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub retry_count: u8,
    pub rnr_retry_count: u8,
}

struct QpState {
    // Declared (and so dropped) after nothing that uses them: the QP is destroyed in
    // CmId::drop before these Arcs are released.
    cq: Arc<Cq>,
    _pd: Arc<Pd>,
    inflight: HashMap<u64, Mr>,
}

/// An RDMA-CM id, with the RC queue pair once created on it.
pub struct CmId {
    lib: &'static Lib,
    id: *mut RdmaCmId,
    ch: Arc<EventChannel>,
    qp: Option<QpState>,
}

// SAFETY: the id and its QP are used only through &mut self or thread-safe librdmacm /
// provider calls; the raw pointers are never shared outside this struct.
unsafe impl Send for CmId {}

/// What a posted work request carries. Buffers move into the queue pair until completion.
pub enum Post<'a> {
    Send { wr_id: u64, buf: Mr, len: u32, invalidate: Option<u32> },
    Read { wr_id: u64, buf: Mr, len: u32, rkey: u32, remote_addr: u64 },
    Write { wr_id: u64, buf: Mr, len: u32, rkey: u32, remote_addr: u64 },
    Bind { wr_id: u64, region: &'a Region, rkey: u32, access: c_int },
}

/// One work completion, with the buffer that was posted with it (if any).
pub struct Completion {
    pub wr_id: u64,
    pub status: u32,
    pub byte_len: u32,
    pub opcode: u32,
    pub wc_flags: u32,
    /// The R_key invalidated by a Send With Invalidate.
    pub invalidated: Option<u32>,
    pub buf: Option<Mr>,
}

impl CmId {
    pub fn new(ch: &Arc<EventChannel>) -> io::Result<CmId> {
        let mut id: *mut RdmaCmId = ptr::null_mut();
        // SAFETY: `ch` is live (and kept alive by the returned CmId); `id` is an out-pointer.
        check(unsafe { (ch.lib.rdma_create_id)(ch.ch, &mut id, ptr::null_mut(), RDMA_PS_TCP) })?;
        Ok(CmId { lib: ch.lib, id, ch: ch.clone(), qp: None })
    }

    pub fn channel(&self) -> &Arc<EventChannel> {
        &self.ch
    }

    pub fn resolve_addr(&self, dst: &SocketAddr, timeout_ms: i32) -> io::Result<()> {
        let sa = SockAddr::new(dst);
        // SAFETY: `id` is live; `sa` outlives the call (librdmacm copies the address).
        check(unsafe { (self.lib.rdma_resolve_addr)(self.id, ptr::null(), sa.as_ptr(), timeout_ms) })
    }

    pub fn resolve_route(&self, timeout_ms: i32) -> io::Result<()> {
        // SAFETY: `id` is live.
        check(unsafe { (self.lib.rdma_resolve_route)(self.id, timeout_ms) })
    }

    pub fn bind_addr(&self, addr: &SocketAddr) -> io::Result<()> {
        let sa = SockAddr::new(addr);
        // SAFETY: `id` is live; `sa` outlives the call.
        check(unsafe { (self.lib.rdma_bind_addr)(self.id, sa.as_ptr()) })
    }

    pub fn listen(&self, backlog: i32) -> io::Result<()> {
        // SAFETY: `id` is live.
        check(unsafe { (self.lib.rdma_listen)(self.id, backlog) })
    }

    /// Moves the id to another event channel (a new connection off a listener).
    pub fn migrate(&mut self, ch: &Arc<EventChannel>) -> io::Result<()> {
        // SAFETY: both live; librdmacm waits for the id's outstanding events on the old
        // channel, all of which we acked when copying them.
        check(unsafe { (self.lib.rdma_migrate_id)(self.id, ch.ch) })?;
        self.ch = ch.clone();
        Ok(())
    }

    /// The device context the id is bound to (after address resolution or a connect request).
    pub fn context(&self) -> Option<Context> {
        // SAFETY: `id` is live; `verbs` is NULL or a context librdmacm keeps open for the
        // life of the process (its device list is never freed).
        let v = unsafe { (*self.id).verbs };
        (!v.is_null()).then_some(Context { lib: self.lib, ctx: v })
    }

    pub fn create_qp(&mut self, pd: &Arc<Pd>, cq: &Arc<Cq>, caps: QpCaps) -> io::Result<()> {
        if self.qp.is_some() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "queue pair exists"));
        }
        let mut attr = IbvQpInitAttr {
            qp_context: ptr::null_mut(),
            send_cq: cq.cq,
            recv_cq: cq.cq,
            srq: ptr::null_mut(),
            cap: IbvQpCap {
                max_send_wr: caps.max_send_wr,
                max_recv_wr: caps.max_recv_wr,
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            qp_type: IBV_QPT_RC,
            sq_sig_all: 0,
        };
        // SAFETY: `id`, `pd` and `cq` are live; the PD and CQ are kept alive by QpState until
        // the QP is destroyed in Drop.
        check(unsafe { (self.lib.rdma_create_qp)(self.id, pd.pd, &mut attr) })?;
        self.qp = Some(QpState { cq: cq.clone(), _pd: pd.clone(), inflight: HashMap::new() });
        Ok(())
    }

    fn conn_param(private_data: &[u8], p: ConnParams) -> io::Result<RdmaConnParam> {
        let len = u8::try_from(private_data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "private data over 255 bytes"))?;
        Ok(RdmaConnParam {
            private_data: if private_data.is_empty() { ptr::null() } else { private_data.as_ptr() as *const c_void },
            private_data_len: len,
            responder_resources: p.responder_resources,
            initiator_depth: p.initiator_depth,
            flow_control: 1,
            retry_count: p.retry_count,
            rnr_retry_count: p.rnr_retry_count,
            srq: 0,
            qp_num: 0,
        })
    }

    pub fn connect(&self, private_data: &[u8], p: ConnParams) -> io::Result<()> {
        let mut cp = Self::conn_param(private_data, p)?;
        // SAFETY: `id` is live; `cp` and the private data it points to outlive the call
        // (librdmacm copies them into the kernel command).
        check(unsafe { (self.lib.rdma_connect)(self.id, &mut cp) })
    }

    pub fn accept(&self, private_data: &[u8], p: ConnParams) -> io::Result<()> {
        let mut cp = Self::conn_param(private_data, p)?;
        // SAFETY: as in connect.
        check(unsafe { (self.lib.rdma_accept)(self.id, &mut cp) })
    }

    pub fn reject(&self, private_data: &[u8]) -> io::Result<()> {
        let len = private_data.len().min(255) as u8;
        let p = if private_data.is_empty() { ptr::null() } else { private_data.as_ptr() as *const c_void };
        // SAFETY: `id` is live; `p` has `len` readable bytes for the call.
        check(unsafe { (self.lib.rdma_reject)(self.id, p, len) })
    }

    pub fn disconnect(&self) -> io::Result<()> {
        // SAFETY: `id` is live; disconnecting moves the QP to the error state, which is safe
        // at any time (posted buffers stay owned by `inflight`).
        check(unsafe { (self.lib.rdma_disconnect)(self.id) })
    }

    fn qp_ptr(&self) -> io::Result<(*mut IbvQp, &'static IbvContextOps)> {
        // SAFETY: `id` is live; when a QP was created, `qp` points to it and its context to
        // the device context whose ops table lives as long as the process.
        unsafe {
            let qp = (*self.id).qp;
            if self.qp.is_none() || qp.is_null() {
                return Err(io::Error::new(io::ErrorKind::NotConnected, "no queue pair"));
            }
            Ok((qp, &(*(*qp).context).ops))
        }
    }

    /// Posts one receive of `len` bytes into `buf`.
    pub fn post_recv(&mut self, wr_id: u64, buf: Mr, len: u32) -> io::Result<()> {
        let (qp, ops) = self.qp_ptr()?;
        let post = ops.post_recv.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let mut sge = IbvSge { addr: buf.addr(), length: len.min(buf.size() as u32), lkey: buf.lkey() };
        let mut wr = IbvRecvWr { wr_id, next: ptr::null_mut(), sg_list: &mut sge, num_sge: 1 };
        let mut bad: *mut IbvRecvWr = ptr::null_mut();
        // SAFETY: `qp` is live; `wr` and `sge` are valid for the call (the provider copies
        // them); the buffer they describe is registered and moves into `inflight` below, so it
        // stays allocated until its completion or the QP's destruction.
        let rc = unsafe { post(qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        self.qp.as_mut().expect("checked in qp_ptr").inflight.insert(wr_id, buf);
        Ok(())
    }

    /// Posts one signaled send-queue work request.
    pub fn post_send(&mut self, op: Post<'_>) -> io::Result<()> {
        let (qp, ops) = self.qp_ptr()?;
        let post = ops.post_send.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        // SAFETY: IbvSendWr is plain data (integers and raw pointers); all-zero is valid.
        let mut wr: IbvSendWr = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut sge = IbvSge { addr: 0, length: 0, lkey: 0 };
        wr.send_flags = IBV_SEND_SIGNALED;
        let keep: Option<(u64, Mr)> = match op {
            Post::Send { wr_id, buf, len, invalidate } => {
                sge = IbvSge { addr: buf.addr(), length: len.min(buf.size() as u32), lkey: buf.lkey() };
                wr.wr_id = wr_id;
                match invalidate {
                    Some(k) => {
                        wr.opcode = IBV_WR_SEND_WITH_INV;
                        wr.invalidate_rkey = k;
                        // rdma-core's siw provider (providers/siw/siw.c push_send_wqe()) takes
                        // the STag to invalidate from wr.rdma.rkey, never from invalidate_rkey,
                        // so it would send STag 0 and the peer's siw answers with a TERMINATE.
                        // Other providers ignore wr.rdma for a Send: set both.
                        wr.rdma_rkey = k;
                    }
                    None => wr.opcode = IBV_WR_SEND,
                }
                Some((wr_id, buf))
            }
            Post::Read { wr_id, buf, len, rkey, remote_addr } => {
                sge = IbvSge { addr: buf.addr(), length: len.min(buf.size() as u32), lkey: buf.lkey() };
                wr.wr_id = wr_id;
                wr.opcode = IBV_WR_RDMA_READ;
                wr.rdma_remote_addr = remote_addr;
                wr.rdma_rkey = rkey;
                Some((wr_id, buf))
            }
            Post::Write { wr_id, buf, len, rkey, remote_addr } => {
                sge = IbvSge { addr: buf.addr(), length: len.min(buf.size() as u32), lkey: buf.lkey() };
                wr.wr_id = wr_id;
                wr.opcode = IBV_WR_RDMA_WRITE;
                wr.rdma_remote_addr = remote_addr;
                wr.rdma_rkey = rkey;
                Some((wr_id, buf))
            }
            Post::Bind { wr_id, region, rkey, access } => {
                let mw = region.mw.as_ref().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no window"))?;
                wr.wr_id = wr_id;
                wr.opcode = IBV_WR_BIND_MW;
                wr.bind_mw_mw = mw.mw;
                wr.bind_mw_rkey = rkey;
                wr.bind_mw_info = IbvMwBindInfo {
                    mr: region.mr.mr,
                    addr: region.mr.addr(),
                    length: region.mr.size() as u64,
                    mw_access_flags: access as u32,
                };
                None
            }
        };
        if keep.is_some() {
            wr.sg_list = &mut sge;
            wr.num_sge = 1;
        }
        let mut bad: *mut IbvSendWr = ptr::null_mut();
        // SAFETY: `qp` is live; `wr` and `sge` are valid for the call (the provider copies
        // them). The local buffer moves into `inflight` below and stays allocated until its
        // completion or the QP's destruction. A bound region's MR and MW are owned by the
        // caller's Region, which the caller keeps until the bind completes (and which is
        // deregistered, never freed, while a window is bound).
        let rc = unsafe { post(qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        if let Some((id, buf)) = keep {
            self.qp.as_mut().expect("checked in qp_ptr").inflight.insert(id, buf);
        }
        Ok(())
    }
}

impl CmId {
    /// Takes up to `max` completions off the QP's CQ (never blocks).
    pub fn poll_completions(&mut self, max: usize) -> io::Result<Vec<Completion>> {
        let (_, ops) = self.qp_ptr()?;
        let poll = ops.poll_cq.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let st = self.qp.as_mut().expect("checked in qp_ptr");
        let mut wcs: Vec<IbvWc> = Vec::with_capacity(max);
        // SAFETY: the CQ is live (held by QpState); `wcs` has room for `max` entries and the
        // provider writes at most that many, the count it returns, which we then expose.
        let n = unsafe {
            let n = poll(st.cq.cq, max as c_int, wcs.as_mut_ptr());
            if n < 0 {
                return Err(io::Error::other(format!("ibv_poll_cq failed ({n})")));
            }
            wcs.set_len(n as usize);
            n
        };
        let mut out = Vec::with_capacity(n as usize);
        for wc in wcs {
            out.push(Completion {
                wr_id: wc.wr_id,
                status: wc.status,
                byte_len: wc.byte_len,
                invalidated: (wc.status == wc_status::SUCCESS
                    && wc.opcode & IBV_WC_RECV != 0
                    && wc.wc_flags & (IBV_WC_WITH_INV | KERNEL_IB_WC_WITH_INVALIDATE) != 0)
                    .then_some(wc.imm_or_invalidated_rkey),
                opcode: wc.opcode,
                wc_flags: wc.wc_flags,
                buf: st.inflight.remove(&wc.wr_id),
            });
        }
        Ok(out)
    }

    /// Arms the CQ's completion channel for the next completion.
    pub fn arm(&self) -> io::Result<()> {
        let (_, ops) = self.qp_ptr()?;
        let arm = ops.req_notify_cq.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let cq = self.qp.as_ref().expect("checked in qp_ptr").cq.cq;
        // SAFETY: the CQ is live.
        let rc = unsafe { arm(cq, 0) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    /// The completion channel's fd, once a QP exists.
    pub fn completion_fd(&self) -> Option<c_int> {
        self.qp.as_ref().map(|q| q.cq.channel.fd())
    }

    /// Consumes (and acknowledges) pending completion-channel events.
    pub fn drain_completion_events(&self) {
        if let Some(q) = &self.qp {
            q.cq.channel.drain();
        }
    }
}

impl Drop for CmId {
    fn drop(&mut self) {
        // SAFETY: `id` is live and owned by us. The QP (if any) is destroyed first; only then
        // are its in-flight buffers, CQ and PD released (QpState drops after this body).
        // rdma_destroy_id waits for unacked events of this id: we ack every event at once.
        unsafe {
            if self.qp.is_some() && !(*self.id).qp.is_null() {
                (self.lib.rdma_destroy_qp)(self.id);
            }
            (self.lib.rdma_destroy_id)(self.id);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Verbs resources.
// ---------------------------------------------------------------------------------------

/// A device context owned by librdmacm (open for the life of the process).
#[derive(Clone, Copy)]
pub struct Context {
    lib: &'static Lib,
    ctx: *mut IbvContext,
}

impl Context {
    /// The device's (node type, transport type), as ibv_device holds them.
    pub fn device_types(&self) -> (i32, i32) {
        // SAFETY: `ctx` is a live context librdmacm keeps open; its `device` points to an
        // ibv_device of the process-lifetime device list, whose head is IbvDeviceHead.
        unsafe {
            let dev = (*self.ctx).device as *const IbvDeviceHead;
            if dev.is_null() {
                return (0, 0);
            }
            ((*dev).node_type, (*dev).transport_type)
        }
    }
}

/// A protection domain.
pub struct Pd {
    lib: &'static Lib,
    pd: *mut IbvPd,
}

// SAFETY: a PD is an immutable kernel handle; verbs calls using it are thread-safe.
unsafe impl Send for Pd {}
// SAFETY: as above.
unsafe impl Sync for Pd {}

impl Pd {
    pub fn new(ctx: Context) -> io::Result<Arc<Pd>> {
        // SAFETY: `ctx` is a live context (see Context).
        let pd = unsafe { (ctx.lib.ibv_alloc_pd)(ctx.ctx) };
        if pd.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Arc::new(Pd { lib: ctx.lib, pd }))
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // SAFETY: every MR, MW and QP of this PD holds an Arc to it, so none is left.
        unsafe { (self.lib.ibv_dealloc_pd)(self.pd) };
    }
}

/// A completion channel (non-blocking fd).
pub struct CompChannel {
    lib: &'static Lib,
    ch: *mut IbvCompChannel,
}

// SAFETY: a completion channel is an fd wrapper; libibverbs calls on it are thread-safe.
unsafe impl Send for CompChannel {}
// SAFETY: as above.
unsafe impl Sync for CompChannel {}

impl CompChannel {
    pub fn new(ctx: Context) -> io::Result<Arc<CompChannel>> {
        // SAFETY: `ctx` is live.
        let ch = unsafe { (ctx.lib.ibv_create_comp_channel)(ctx.ctx) };
        if ch.is_null() {
            return Err(io::Error::last_os_error());
        }
        let me = CompChannel { lib: ctx.lib, ch };
        set_nonblocking(me.fd())?;
        Ok(Arc::new(me))
    }

    pub fn fd(&self) -> c_int {
        // SAFETY: `ch` is live.
        unsafe { (*self.ch).fd }
    }

    fn drain(&self) {
        loop {
            let mut cq: *mut IbvCq = ptr::null_mut();
            let mut cq_ctx: *mut c_void = ptr::null_mut();
            // SAFETY: `ch` is live; out-pointers are valid. The fd is non-blocking, so this
            // fails with EAGAIN when nothing is pending. The event names one of our CQs (each
            // CQ on this channel is kept alive by its Arc), acked at once.
            unsafe {
                if (self.lib.ibv_get_cq_event)(self.ch, &mut cq, &mut cq_ctx) != 0 {
                    return;
                }
                (self.lib.ibv_ack_cq_events)(cq, 1);
            }
        }
    }
}

impl Drop for CompChannel {
    fn drop(&mut self) {
        // SAFETY: every CQ on this channel holds an Arc to it, so none is left.
        unsafe { (self.lib.ibv_destroy_comp_channel)(self.ch) };
    }
}

/// A completion queue bound to a completion channel.
pub struct Cq {
    lib: &'static Lib,
    cq: *mut IbvCq,
    channel: Arc<CompChannel>,
}

// SAFETY: the CQ is used through provider calls that lock internally; the pointer is private.
unsafe impl Send for Cq {}
// SAFETY: as above.
unsafe impl Sync for Cq {}

impl Cq {
    pub fn new(ctx: Context, entries: i32, channel: &Arc<CompChannel>) -> io::Result<Arc<Cq>> {
        // SAFETY: `ctx` and `channel` are live; the CQ keeps the channel alive.
        let cq = unsafe { (ctx.lib.ibv_create_cq)(ctx.ctx, entries, ptr::null_mut(), channel.ch, 0) };
        if cq.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Arc::new(Cq { lib: ctx.lib, cq, channel: channel.clone() }))
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: the QP using it holds an Arc and is destroyed first; all channel events
        // were acked when drained.
        unsafe { (self.lib.ibv_destroy_cq)(self.cq) };
    }
}

/// Zeroed memory registered with a PD.
pub struct Mr {
    lib: &'static Lib,
    mr: *mut IbvMr,
    buf: *mut u8,
    len: usize,
    _pd: Arc<Pd>,
}

// SAFETY: the buffer is owned by this struct (or, while posted, by the QP's in-flight table);
// access goes through &self / &mut self only.
unsafe impl Send for Mr {}

impl Mr {
    /// Registers `len` (at least 1) zeroed bytes with `access` (IBV_ACCESS_* flags).
    pub fn new(pd: &Arc<Pd>, len: usize, access: c_int) -> io::Result<Mr> {
        let len = len.max(1);
        let buf = Box::into_raw(vec![0u8; len].into_boxed_slice()) as *mut u8;
        // SAFETY: `buf` points to `len` bytes we own; `pd` is live.
        let mr = unsafe { (pd.lib.ibv_reg_mr)(pd.pd, buf as *mut c_void, len, access) };
        if mr.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: registration failed, so the device has no access: free the buffer we
            // allocated above with its original layout.
            unsafe { drop(Box::from_raw(ptr::slice_from_raw_parts_mut(buf, len))) };
            return Err(e);
        }
        Ok(Mr { lib: pd.lib, mr, buf, len, _pd: pd.clone() })
    }

    pub fn size(&self) -> usize {
        self.len
    }

    pub fn addr(&self) -> u64 {
        self.buf as u64
    }

    pub fn lkey(&self) -> u32 {
        // SAFETY: `mr` is live.
        unsafe { (*self.mr).lkey }
    }

    pub fn rkey(&self) -> u32 {
        // SAFETY: `mr` is live.
        unsafe { (*self.mr).rkey }
    }

    /// Copies `data` in at byte `at`; false when it does not fit.
    pub fn write(&mut self, at: usize, data: &[u8]) -> bool {
        let Some(end) = at.checked_add(data.len()) else { return false };
        if end > self.len {
            return false;
        }
        // SAFETY: `at..end` is inside the buffer we own; `data` cannot overlap it (it is
        // borrowed from elsewhere while we hold &mut self).
        unsafe { ptr::copy_nonoverlapping(data.as_ptr(), self.buf.add(at), data.len()) };
        true
    }

    /// Copies out `len` bytes from byte `at` (clamped to the buffer).
    pub fn read(&self, at: usize, len: usize) -> Vec<u8> {
        let at = at.min(self.len);
        let len = len.min(self.len - at);
        let mut v = vec![0u8; len];
        // SAFETY: `at..at+len` is inside the buffer. The device may write it concurrently
        // (a peer's RDMA Write): the bytes are copied as they are, like any DMA consumer.
        unsafe { ptr::copy_nonoverlapping(self.buf.add(at), v.as_mut_ptr(), len) };
        v
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: `mr` is live. Only after a successful deregistration can the device no
        // longer touch the buffer, so only then is it freed; otherwise it is leaked.
        unsafe {
            if (self.lib.ibv_dereg_mr)(self.mr) == 0 {
                drop(Box::from_raw(ptr::slice_from_raw_parts_mut(self.buf, self.len)));
            }
        }
    }
}

/// A type 2 memory window.
pub struct Mw {
    mw: *mut IbvMw,
    dealloc: DeallocMwFn,
    _pd: Arc<Pd>,
}

// SAFETY: an MW is a handle used only through &self/&mut self of its owner.
unsafe impl Send for Mw {}

impl Mw {
    pub fn new(pd: &Arc<Pd>) -> io::Result<Mw> {
        // SAFETY: `pd` is live and so is its context; the ops table is the provider's.
        let ops = unsafe { &(*(*pd.pd).context).ops };
        let (Some(alloc), Some(dealloc)) = (ops.alloc_mw, ops.dealloc_mw) else {
            return Err(io::Error::from(io::ErrorKind::Unsupported));
        };
        // SAFETY: `pd` is live; IBV_MW_TYPE_2 is a valid type.
        let mw = unsafe { alloc(pd.pd, IBV_MW_TYPE_2) };
        if mw.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Mw { mw, dealloc, _pd: pd.clone() })
    }

    pub fn rkey(&self) -> u32 {
        // SAFETY: `mw` is live.
        unsafe { (*self.mw).rkey }
    }
}

impl Drop for Mw {
    fn drop(&mut self) {
        // SAFETY: `mw` is live and owned; deallocating a bound window unbinds it.
        unsafe { (self.dealloc)(self.mw) };
    }
}

/// Registered memory the peer may access: an MR, optionally behind a memory window (which
/// is dropped, and so deallocated, before the MR is deregistered: field order).
pub struct Region {
    pub mw: Option<Mw>,
    pub mr: Mr,
}
