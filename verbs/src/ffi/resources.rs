//! Verbs resources: protection domains, completion channels and queues, registered buffers
//! and memory windows.

#![allow(unsafe_code)]

use super::*;
use std::ffi::{c_int, c_void};
use std::io;
use std::ptr;
use std::sync::Arc;

// ---------------------------------------------------------------------------------------
// Verbs resources.
// ---------------------------------------------------------------------------------------

/// A device context owned by librdmacm (open for the life of the process).
#[derive(Clone, Copy)]
pub struct Context {
    pub(super) lib: &'static Lib,
    pub(super) ctx: *mut IbvContext,
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
    pub(super) lib: &'static Lib,
    pub(super) pd: *mut IbvPd,
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
    pub(super) lib: &'static Lib,
    pub(super) ch: *mut IbvCompChannel,
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

    pub(super) fn drain(&self) {
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
    pub(super) lib: &'static Lib,
    pub(super) cq: *mut IbvCq,
    pub(super) channel: Arc<CompChannel>,
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
    pub(super) lib: &'static Lib,
    pub(super) mr: *mut IbvMr,
    pub(super) buf: *mut u8,
    pub(super) len: usize,
    pub(super) _pd: Arc<Pd>,
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
        let mut v = Vec::with_capacity(len);
        // SAFETY: `at..at+len` is inside the buffer and `v` has room for `len` bytes, all of
        // them written before set_len. The device may write the buffer concurrently (a peer's
        // RDMA Write): the bytes are copied as they are, like any DMA consumer.
        unsafe {
            ptr::copy_nonoverlapping(self.buf.add(at), v.as_mut_ptr(), len);
            v.set_len(len);
        }
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
    pub(super) mw: *mut IbvMw,
    pub(super) dealloc: DeallocMwFn,
    pub(super) _pd: Arc<Pd>,
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
