//! RDMA-CM: event channels, connection identifiers, and their queue pairs.

#![allow(unsafe_code)]

use super::*;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::hash::BuildHasherDefault;
use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

// ---------------------------------------------------------------------------------------
// RDMA-CM.
// ---------------------------------------------------------------------------------------

/// An RDMA-CM event channel (its fd is non-blocking).
pub struct EventChannel {
    pub(super) lib: &'static Lib,
    pub(super) ch: *mut RdmaEventChannel,
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

pub(super) struct QpState {
    // Declared (and so dropped) after nothing that uses them: the QP is destroyed in
    // CmId::drop before these Arcs are released.
    pub(super) cq: Arc<Cq>,
    pub(super) _pd: Arc<Pd>,
    pub(super) inflight: HashMap<u64, Mr, BuildHasherDefault<WrIdHasher>>,
    /// The requester's slots, once open ([`CmId::open_slots`]).
    pub(super) slots: Option<super::slots::Slots>,
    /// What ibv_poll_cq writes into, zeroed between polls (kept: no 1.5 KiB to zero a poll).
    pub(super) wcs: Box<[IbvWc; POLL_BATCH]>,
    /// A chain of receives and their SGEs being posted (kept for their allocations).
    pub(super) chain: Vec<IbvRecvWr>,
    pub(super) sges: Vec<IbvSge>,
}

pub(super) const ZERO_WC: IbvWc = IbvWc {
    wr_id: 0,
    status: 0,
    opcode: 0,
    vendor_err: 0,
    byte_len: 0,
    imm_or_invalidated_rkey: 0,
    qp_num: 0,
    src_qp: 0,
    wc_flags: 0,
    pkey_index: 0,
    slid: 0,
    sl: 0,
    dlid_path_bits: 0,
};

/// Hashes our work-request ids (unique counters, their kind in the top bits) with one
/// multiplication: a lookup per posted and per completed work request, where SipHash's
/// resistance to chosen keys buys nothing.
#[derive(Default)]
pub(super) struct WrIdHasher(u64);

impl std::hash::Hasher for WrIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// An RDMA-CM id, with the RC queue pair once created on it.
pub struct CmId {
    pub(super) lib: &'static Lib,
    pub(super) id: *mut RdmaCmId,
    pub(super) ch: Arc<EventChannel>,
    pub(super) qp: Option<QpState>,
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
        self.qp = Some(QpState {
            cq: cq.clone(),
            _pd: pd.clone(),
            inflight: HashMap::default(),
            slots: None,
            wcs: Box::new([ZERO_WC; POLL_BATCH]),
            chain: Vec::with_capacity(POLL_BATCH),
            sges: Vec::with_capacity(POLL_BATCH),
        });
        Ok(())
    }

    pub(super) fn conn_param(private_data: &[u8], p: ConnParams) -> io::Result<RdmaConnParam> {
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

    pub(super) fn qp_ptr(&self) -> io::Result<(*mut IbvQp, &'static IbvContextOps)> {
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
        let st = self.qp.as_mut().expect("checked in qp_ptr");
        if let Some((id, buf)) = keep {
            st.inflight.insert(id, buf);
        }
        Ok(())
    }
}

/// The most completions one [`CmId::poll_completions`] takes.
pub const POLL_BATCH: usize = 32;

impl CmId {
    /// Takes up to [`POLL_BATCH`] completions off the QP's CQ (never blocks), appended to
    /// `out` (the caller's, reused: nothing is allocated per poll); how many.
    pub fn poll_completions(&mut self, out: &mut Vec<Completion>) -> io::Result<usize> {
        let n = self.poll_wcs()?;
        let st = self.qp.as_mut().expect("checked in poll_wcs");
        for w in st.wcs[..n].iter_mut() {
            let wc = std::mem::replace(w, ZERO_WC);
            let buf = st.inflight.remove(&wc.wr_id);
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
                buf,
            });
        }
        Ok(n)
    }

    /// Polls up to [`POLL_BATCH`] completions into the QP state's `wcs` (never blocks); how
    /// many. The caller takes each of `wcs[..n]` with `std::mem::replace(w, ZERO_WC)`: zeroed
    /// before each poll, as a provider need not write every field (ibv_poll_cq(3): on an error
    /// status only wr_id, status, qp_num and vendor_err are valid; byte_len is not set for a
    /// Send), and every field is read.
    pub(super) fn poll_wcs(&mut self) -> io::Result<usize> {
        let (_, ops) = self.qp_ptr()?;
        let poll = ops.poll_cq.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let st = self.qp.as_mut().expect("checked in qp_ptr");
        // SAFETY: the CQ is live (held by QpState); `wcs` has room for POLL_BATCH entries and
        // the provider writes at most that many, the count it returns.
        let n = unsafe { poll(st.cq.cq, POLL_BATCH as c_int, st.wcs.as_mut_ptr()) };
        if n < 0 {
            return Err(io::Error::other(format!("ibv_poll_cq failed ({n})")));
        }
        Ok((n as usize).min(POLL_BATCH))
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
