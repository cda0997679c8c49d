//! Run-time loading: librdmacm and libibverbs opened with dlopen, and their entry points.

#![allow(unsafe_code)]

use super::*;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

// ---------------------------------------------------------------------------------------
// Run-time loading.
// ---------------------------------------------------------------------------------------

/// The entry points used, resolved from librdmacm.so.1 and libibverbs.so.1.
pub struct Lib {
    pub(super) rdma_create_event_channel: unsafe extern "C" fn() -> *mut RdmaEventChannel,
    pub(super) rdma_destroy_event_channel: unsafe extern "C" fn(*mut RdmaEventChannel),
    pub(super) rdma_create_id:
        unsafe extern "C" fn(*mut RdmaEventChannel, *mut *mut RdmaCmId, *mut c_void, c_int) -> c_int,
    pub(super) rdma_destroy_id: unsafe extern "C" fn(*mut RdmaCmId) -> c_int,
    pub(super) rdma_resolve_addr:
        unsafe extern "C" fn(*mut RdmaCmId, *const libc::sockaddr, *const libc::sockaddr, c_int) -> c_int,
    pub(super) rdma_resolve_route: unsafe extern "C" fn(*mut RdmaCmId, c_int) -> c_int,
    pub(super) rdma_create_qp: unsafe extern "C" fn(*mut RdmaCmId, *mut IbvPd, *mut IbvQpInitAttr) -> c_int,
    pub(super) rdma_destroy_qp: unsafe extern "C" fn(*mut RdmaCmId),
    pub(super) rdma_connect: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaConnParam) -> c_int,
    pub(super) rdma_accept: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaConnParam) -> c_int,
    pub(super) rdma_reject: unsafe extern "C" fn(*mut RdmaCmId, *const c_void, u8) -> c_int,
    pub(super) rdma_disconnect: unsafe extern "C" fn(*mut RdmaCmId) -> c_int,
    pub(super) rdma_bind_addr: unsafe extern "C" fn(*mut RdmaCmId, *const libc::sockaddr) -> c_int,
    pub(super) rdma_listen: unsafe extern "C" fn(*mut RdmaCmId, c_int) -> c_int,
    pub(super) rdma_migrate_id: unsafe extern "C" fn(*mut RdmaCmId, *mut RdmaEventChannel) -> c_int,
    pub(super) rdma_get_cm_event: unsafe extern "C" fn(*mut RdmaEventChannel, *mut *mut RdmaCmEvent) -> c_int,
    pub(super) rdma_ack_cm_event: unsafe extern "C" fn(*mut RdmaCmEvent) -> c_int,
    pub(super) rdma_event_str: unsafe extern "C" fn(u32) -> *const c_char,
    pub(super) ibv_get_device_list: unsafe extern "C" fn(*mut c_int) -> *mut *mut c_void,
    pub(super) ibv_free_device_list: unsafe extern "C" fn(*mut *mut c_void),
    pub(super) ibv_alloc_pd: unsafe extern "C" fn(*mut IbvContext) -> *mut IbvPd,
    pub(super) ibv_dealloc_pd: unsafe extern "C" fn(*mut IbvPd) -> c_int,
    pub(super) ibv_create_comp_channel: unsafe extern "C" fn(*mut IbvContext) -> *mut IbvCompChannel,
    pub(super) ibv_destroy_comp_channel: unsafe extern "C" fn(*mut IbvCompChannel) -> c_int,
    pub(super) ibv_create_cq:
        unsafe extern "C" fn(*mut IbvContext, c_int, *mut c_void, *mut IbvCompChannel, c_int) -> *mut IbvCq,
    pub(super) ibv_destroy_cq: unsafe extern "C" fn(*mut IbvCq) -> c_int,
    pub(super) ibv_get_cq_event: unsafe extern "C" fn(*mut IbvCompChannel, *mut *mut IbvCq, *mut *mut c_void) -> c_int,
    pub(super) ibv_ack_cq_events: unsafe extern "C" fn(*mut IbvCq, u32),
    pub(super) ibv_reg_mr: unsafe extern "C" fn(*mut IbvPd, *mut c_void, usize, c_int) -> *mut IbvMr,
    pub(super) ibv_dereg_mr: unsafe extern "C" fn(*mut IbvMr) -> c_int,
}

pub(super) fn dlerror_string() -> String {
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

pub(super) fn open(name: &str) -> Result<*mut c_void, String> {
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

pub(super) fn sym(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
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
pub(super) unsafe fn cast_fn<F: Copy>(p: *mut c_void) -> F {
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
pub(super) fn lib_names() -> (String, String) {
    (
        std::env::var("RPCRDMA_LIBIBVERBS").unwrap_or_else(|_| "libibverbs.so.1".into()),
        std::env::var("RPCRDMA_LIBRDMACM").unwrap_or_else(|_| "librdmacm.so.1".into()),
    )
}

pub(super) fn load_libs() -> Result<Lib, String> {
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

pub(super) fn check(rc: c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(super) fn set_nonblocking(fd: c_int) -> io::Result<()> {
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

pub(super) enum SockAddr {
    V4(libc::sockaddr_in),
    V6(libc::sockaddr_in6),
}

impl SockAddr {
    pub(super) fn new(addr: &SocketAddr) -> SockAddr {
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

    pub(super) fn as_ptr(&self) -> *const libc::sockaddr {
        match self {
            SockAddr::V4(s) => s as *const _ as *const libc::sockaddr,
            SockAddr::V6(s) => s as *const _ as *const libc::sockaddr,
        }
    }
}
