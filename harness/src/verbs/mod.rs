//! The real RDMA transport: RDMA-CM (librdmacm) and verbs (libibverbs) from rdma-core,
//! loaded at run time so the harness builds and runs its embedded default where rdma-core is
//! missing. Implements the engine's [`Connector`] / [`Connection`] with the semantics of the
//! emulated transport (`rpcrdma_peers::transport::emulated`).
//!
//! This module has no `unsafe`: all of it is in [`ffi`]. `forbid(unsafe_code)` cannot be
//! scoped like that (a child module cannot lift it), so this module says
//! `deny(unsafe_code)` and only `ffi` allows it.
//!
//! Design:
//! - One connection = one RDMA-CM event channel, one cm_id, a PD, a completion channel, one
//!   CQ for both send and receive completions, and an RC queue pair. No threads: every call
//!   runs on the caller's thread.
//! - Waiting: `poll(2)` on the completion channel's fd and the CM event channel's fd together,
//!   with the caller's deadline as the timeout (the CQ is re-armed and re-polled before each
//!   wait, so no completion is missed). Nothing busy-polls.
//! - Receives, Sends and the local side of our RDMA Reads and Writes use buffers registered
//!   with IBV_ACCESS_LOCAL_WRITE only, recycled through a small pool.
//! - Regions registered for the peer are type 2 memory windows bound over an MR (the R_key we
//!   advertise is the window's), so a peer's Send With Invalidate really invalidates them, as
//!   RFC 8166 section 3.4.4 expects. Where the provider has no windows (or
//!   `RPCRDMA_VERBS_NO_MW=1`), the MR itself is registered with IBV_ACCESS_REMOTE_READ /
//!   _WRITE; remote invalidation of such an MR is not allowed by verbs, so a peer that uses
//!   Send With Invalidate on it fails the receive (advertise R=0 then).
//! - Connection parameters: rnr_retry_count 0 (a Send with no receive posted at the peer
//!   fails at once with IBV_WC_RNR_RETRY_EXC_ERR, as in the emulated fabric), retry_count 3,
//!   responder resources and initiator depth the device maximum (RDMA_MAX_RESP_RES /
//!   RDMA_MAX_INIT_DEPTH).
//! - Errors: the first failed completion (or a CM DISCONNECTED / DEVICE_REMOVAL event, or a
//!   flushed work request) takes the connection down: it is reported, then
//!   [`Event::Disconnected`] once, then [`TransportError::Disconnected`]. Flushed receives
//!   are not reported one by one (the emulated fabric drops them too). We call
//!   `rdma_disconnect` so the peer learns of it.
//! - Provider quirks handled (soft-RoCE, rxe, kernel 6.1 / rdma-core 44): a receive
//!   overrun by a longer Send completes with IBV_WC_LOC_QP_OP_ERR (reported as
//!   [`WcStatus::LocalLengthError`]); remote invalidation is flagged with the kernel's
//!   IB_WC_WITH_INVALIDATE bit (accepted as well as IBV_WC_WITH_INV).
//! - `RPCRDMA_VERBS_TRACE=1` prints every completion and CM event to stderr.
//! - What verbs cannot do: observe the peer's RDMA Reads and Writes of our memory
//!   ([`Connection::accesses`] returns [`TransportError::Environment`]).

#![deny(unsafe_code)]

mod fabric;
mod ffi;

pub use fabric::Fabric;

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{
    Access, Connection, Connector, Event, Region, RemoteAccess, Result, TransportError, WcStatus,
};

/// Where rdma-core exposes devices.
const SYSFS_DEVICES: &str = "/sys/class/infiniband";

const CQ_ENTRIES: i32 = 4096;
const MAX_SEND_WR: u32 = 512;
const MAX_RECV_WR: u32 = 2048;
/// How long an iWARP connection is left alone after ESTABLISHED before our first Send (see
/// VerbsConnector::connect).
const IWARP_SETTLE: Duration = Duration::from_millis(20);
/// Local buffers kept for reuse.
const POOL_MAX: usize = 256;
/// How long [`VerbsConnection::pump`] polls before it sleeps on the completion channel.
const SPIN: std::time::Duration = std::time::Duration::from_millis(2);

const KIND_SHIFT: u32 = 56;
const KIND_SEND: u64 = 1;
const KIND_RECV: u64 = 2;
const KIND_READ: u64 = 3;
const KIND_WRITE: u64 = 4;
const KIND_BIND: u64 = 5;

fn params() -> ffi::ConnParams {
    ffi::ConnParams {
        responder_resources: ffi::RDMA_MAX_DEPTH,
        initiator_depth: ffi::RDMA_MAX_DEPTH,
        retry_count: 3,
        rnr_retry_count: 0,
    }
}

/// Maps an ibv_wc_status to the classes conformance distinguishes.
pub fn wc_status(status: u32) -> WcStatus {
    use ffi::wc_status as s;
    match status {
        s::SUCCESS => WcStatus::Success,
        s::LOC_LEN_ERR => WcStatus::LocalLengthError,
        s::REM_INV_REQ_ERR => WcStatus::RemoteInvalidRequest,
        s::RNR_RETRY_EXC_ERR => WcStatus::ReceiverNotReady,
        s::WR_FLUSH_ERR => WcStatus::Flushed,
        s::REM_ACCESS_ERR => WcStatus::RemoteAccessError,
        // LOC_PROT_ERR, LOC_QP_OP_ERR, REM_OP_ERR, RETRY_EXC_ERR, MW_BIND_ERR, ...
        _ => WcStatus::LocalProtectionError,
    }
}

/// Checks that rdma-core can be loaded and sees an RDMA device; the error is one line for
/// the user.
pub fn check_environment() -> std::result::Result<(), String> {
    let lib = ffi::lib().map_err(|e| {
        format!(
            "no RDMA verbs: rdma-core (libibverbs.so.1, librdmacm.so.1) cannot be loaded ({e}); \
             install rdma-core and ibverbs-providers, or run without --peer"
        )
    })?;
    let entries: Vec<String> = match std::fs::read_dir(SYSFS_DEVICES) {
        Ok(d) => d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => {
            return Err(format!(
                "no RDMA device: rdma-core found, but {SYSFS_DEVICES} does not exist (the kernel has no RDMA \
                 support loaded: load rdma_rxe and add a link, or use a machine with an RDMA NIC)"
            ))
        }
    };
    if entries.is_empty() {
        return Err(format!(
            "no RDMA device: rdma-core found, but {SYSFS_DEVICES} is empty (load rdma_rxe and add a link, \
             or use a machine with an RDMA NIC)"
        ));
    }
    if lib.device_count() == 0 {
        return Err(format!(
            "no usable RDMA device: {} in {SYSFS_DEVICES}, but libibverbs opens none (load ib_uverbs and \
             rdma_ucm, and install ibverbs-providers)",
            entries.join(", ")
        ));
    }
    Ok(())
}

fn env_err(what: &str, e: std::io::Error) -> TransportError {
    TransportError::Environment(format!("{what}: {e}"))
}

/// rdma_connect's own failure. iWARP providers connect the TCP stream inside the call (siw's
/// siw_connect()), so a port with no listener fails it with ECONNREFUSED (InfiniBand reports
/// that later, as RDMA_CM_EVENT_REJECTED or _UNREACHABLE): the peer, not our environment.
fn connect_err(addr: SocketAddr, e: std::io::Error) -> TransportError {
    const PEER: [i32; 6] = [
        111, // ECONNREFUSED
        104, // ECONNRESET
        110, // ETIMEDOUT
        113, // EHOSTUNREACH
        101, // ENETUNREACH
        112, // EHOSTDOWN
    ];
    match e.raw_os_error() {
        Some(n) if PEER.contains(&n) => TransportError::Unreachable(format!("rdma_connect {addr}: {e}")),
        _ => env_err("rdma_connect", e),
    }
}

fn ms_until(deadline: Instant) -> i32 {
    let left = deadline.saturating_duration_since(Instant::now());
    (left.as_millis() as i32).clamp(1, i32::MAX)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Resolves `host` (an IPv4/IPv6 literal or a name) with `port`.
pub fn resolve(host: &str, port: u16) -> std::result::Result<SocketAddr, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} has no address"))
}

/// Waits for one CM event of kind `want` on `ch`; any other (error) event fails.
fn expect_event(
    lib: &'static ffi::Lib,
    ch: &Arc<ffi::EventChannel>,
    want: u32,
    what: &str,
    deadline: Instant,
) -> Result<ffi::CmEvent> {
    loop {
        let ev = ch
            .next_event(deadline)
            .map_err(|e| env_err("rdma_get_cm_event", e))?
            .ok_or_else(|| TransportError::Unreachable(format!("no answer to {what} before the deadline")))?;
        if ev.kind == want {
            return Ok(ev);
        }
        if ev.kind == ffi::cm_event::TIMEWAIT_EXIT {
            continue;
        }
        let pd = if ev.private_data.iter().any(|&b| b != 0) {
            format!(", private data {}", hex(&ev.private_data))
        } else {
            String::new()
        };
        let why = if ev.kind == ffi::cm_event::REJECTED {
            format!("{what}: the peer rejected the connection (status {}{pd})", ev.status)
        } else {
            format!("{what} failed: {} (status {}{pd})", lib.event_name(ev.kind), ev.status)
        };
        return Err(TransportError::Unreachable(why));
    }
}

/// The active side: `--peer HOST[:PORT]`.
pub struct VerbsConnector {
    lib: &'static ffi::Lib,
    host: String,
    port: u16,
}

impl VerbsConnector {
    /// A connector for `host:port`, after checking that this machine can do verbs.
    pub fn new(host: &str, port: u16) -> std::result::Result<VerbsConnector, String> {
        check_environment()?;
        let lib = ffi::lib()?;
        Ok(VerbsConnector { lib, host: host.to_string(), port })
    }
}

impl Connector for VerbsConnector {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
        // iWARP connects a TCP stream from the port RDMA-CM picked; that 4-tuple may still be
        // in TIME_WAIT from an earlier connection (siw's rdma_connect then fails with
        // EADDRINUSE or EADDRNOTAVAIL): a new id, and so a new port, goes on.
        let mut tries = 0;
        loop {
            match self.connect_once(private_data, deadline) {
                Err(Attempt::PortBusy(e)) if tries < 4 && Instant::now() < deadline => {
                    tries += 1;
                    if std::env::var("RPCRDMA_VERBS_TRACE").is_ok_and(|v| v == "1") {
                        eprintln!("verbs: rdma_connect: {e}; again from another port");
                    }
                }
                Err(Attempt::PortBusy(e)) => return Err(env_err("rdma_connect", e)),
                Err(Attempt::Failed(e)) => return Err(e),
                Ok(c) => return Ok(c),
            }
        }
    }

    fn describe(&self) -> String {
        if self.host.contains(':') {
            format!("verbs [{}]:{}", self.host, self.port)
        } else {
            format!("verbs {}:{}", self.host, self.port)
        }
    }
}

/// How one connect attempt failed.
enum Attempt {
    /// rdma_connect: the local port is taken (EADDRINUSE, EADDRNOTAVAIL).
    PortBusy(std::io::Error),
    Failed(TransportError),
}

impl From<TransportError> for Attempt {
    fn from(e: TransportError) -> Attempt {
        Attempt::Failed(e)
    }
}

impl VerbsConnector {
    fn connect_once(
        &mut self,
        private_data: &[u8],
        deadline: Instant,
    ) -> std::result::Result<Box<dyn Connection>, Attempt> {
        let addr = resolve(&self.host, self.port).map_err(TransportError::Unreachable)?;
        let ch = ffi::EventChannel::new(self.lib).map_err(|e| env_err("rdma_create_event_channel", e))?;
        let id = ffi::CmId::new(&ch).map_err(|e| env_err("rdma_create_id", e))?;
        id.resolve_addr(&addr, ms_until(deadline))
            .map_err(|e| TransportError::Unreachable(format!("rdma_resolve_addr {addr}: {e}")))?;
        expect_event(self.lib, &ch, ffi::cm_event::ADDR_RESOLVED, "address resolution", deadline)?;
        id.resolve_route(ms_until(deadline))
            .map_err(|e| TransportError::Unreachable(format!("rdma_resolve_route {addr}: {e}")))?;
        expect_event(self.lib, &ch, ffi::cm_event::ROUTE_RESOLVED, "route resolution", deadline)?;
        let mut conn = VerbsConnection::setup(id)?;
        conn.id.connect(private_data, params()).map_err(|e| match e.raw_os_error() {
            Some(98 | 99) => Attempt::PortBusy(e), // EADDRINUSE, EADDRNOTAVAIL
            _ => Attempt::Failed(connect_err(addr, e)),
        })?;
        let ev = expect_event(self.lib, &ch, ffi::cm_event::ESTABLISHED, "connect", deadline)?;
        conn.peer_private_data = ev.private_data;
        conn.up = true;
        if conn.fabric == Fabric::Iwarp {
            // Linux siw's siw_accept() (drivers/infiniband/sw/siw/siw_cm.c) sends the MPA
            // reply before it hands the socket to the QP (siw_qp_socket_assoc()); a first
            // FPDU arriving in between meets siw_cm_llp_data_ready(), which ignores data in
            // RDMA mode, and waits unread until the next one: the peer never sees our first
            // message. Give the accepting side that moment.
            std::thread::sleep(IWARP_SETTLE);
        }
        Ok(Box::new(conn))
    }
}

struct RegionEntry {
    region: ffi::Region,
    length: u32,
    valid: bool,
}

/// One RC connection over verbs.
pub struct VerbsConnection {
    id: ffi::CmId,
    pd: Arc<ffi::Pd>,
    peer_private_data: Vec<u8>,
    /// Regions by the R_key the peer uses.
    regions: HashMap<u32, RegionEntry>,
    /// Regions whose window bind did not complete in time: kept until the connection goes.
    stuck: Vec<ffi::Region>,
    /// Registered buffers by size, smallest first: a Send or Receive takes the smallest that fits.
    pool: std::collections::BTreeMap<usize, Vec<ffi::Mr>>,
    pooled: usize,
    events: VecDeque<Event>,
    /// Completions of our RDMA Reads, Writes and window binds, by work-request id.
    done: HashMap<u64, (WcStatus, Option<ffi::Mr>)>,
    next_wr: u64,
    up: bool,
    down_queued: bool,
    told_down: bool,
    /// Whether regions are memory windows (None: not tried yet).
    windows: Option<bool>,
    /// `RPCRDMA_VERBS_TRACE=1`: every completion and CM event on stderr.
    trace: bool,
    fabric: Fabric,
}

impl VerbsConnection {
    /// PD, completion channel, CQ and RC queue pair on a resolved (or requested) id.
    fn setup(mut id: ffi::CmId) -> Result<VerbsConnection> {
        let ctx = id
            .context()
            .ok_or_else(|| TransportError::Environment("the CM id has no device after resolution".into()))?;
        let (node, transport) = ctx.device_types();
        let pd = ffi::Pd::new(ctx).map_err(|e| env_err("ibv_alloc_pd", e))?;
        let cc = ffi::CompChannel::new(ctx).map_err(|e| env_err("ibv_create_comp_channel", e))?;
        let cq = ffi::Cq::new(ctx, CQ_ENTRIES, &cc).map_err(|e| env_err("ibv_create_cq", e))?;
        id.create_qp(&pd, &cq, ffi::QpCaps { max_send_wr: MAX_SEND_WR, max_recv_wr: MAX_RECV_WR })
            .map_err(|e| env_err("rdma_create_qp", e))?;
        let windows = std::env::var("RPCRDMA_VERBS_NO_MW").is_ok_and(|v| v == "1").then_some(false);
        Ok(VerbsConnection {
            id,
            pd,
            peer_private_data: Vec::new(),
            regions: HashMap::new(),
            stuck: Vec::new(),
            pool: std::collections::BTreeMap::new(),
            pooled: 0,
            events: VecDeque::new(),
            done: HashMap::new(),
            next_wr: 0,
            up: false,
            down_queued: false,
            told_down: false,
            windows,
            trace: std::env::var("RPCRDMA_VERBS_TRACE").is_ok_and(|v| v == "1"),
            fabric: Fabric::from_device(node, transport),
        })
    }

    /// The fabric of the connection's device: what its completions guarantee.
    pub fn fabric(&self) -> Fabric {
        self.fabric
    }

    fn wr_id(&mut self, kind: u64) -> u64 {
        self.next_wr += 1;
        (kind << KIND_SHIFT) | (self.next_wr & ((1 << KIND_SHIFT) - 1))
    }

    /// A local buffer of at least `len` bytes.
    fn buffer(&mut self, len: usize) -> Result<ffi::Mr> {
        if let Some((_, free)) = self.pool.range_mut(len..).find(|(_, v)| !v.is_empty()) {
            if let Some(mr) = free.pop() {
                self.pooled -= 1;
                return Ok(mr);
            }
        }
        ffi::Mr::new(&self.pd, len.max(64), ffi::IBV_ACCESS_LOCAL_WRITE).map_err(|e| env_err("ibv_reg_mr", e))
    }

    fn recycle(&mut self, buf: Option<ffi::Mr>) {
        if let Some(b) = buf {
            if self.pooled < POOL_MAX {
                self.pooled += 1;
                self.pool.entry(b.size()).or_default().push(b);
            }
        }
    }

    /// The connection is gone: tell the peer, report it once.
    fn go_down(&mut self) {
        if self.up {
            self.up = false;
            let _ = self.id.disconnect();
        }
        if !self.down_queued {
            self.down_queued = true;
            self.events.push_back(Event::Disconnected);
        }
    }

    fn absorb(&mut self, c: ffi::Completion) {
        let kind = c.wr_id >> KIND_SHIFT;
        let status = if kind == KIND_RECV && c.status == ffi::wc_status::LOC_QP_OP_ERR {
            // rxe completes a receive overrun by a longer Send with IBV_WC_LOC_QP_OP_ERR (its
            // copy into the receive buffer fails as a malformed WQE); hardware reports
            // IBV_WC_LOC_LEN_ERR. Either way the receive was too small.
            WcStatus::LocalLengthError
        } else {
            wc_status(c.status)
        };
        if self.trace {
            eprintln!(
                "verbs: completion kind {kind} wr {:#x} status {} ({}) opcode {} flags {:#x} len {} invalidated {:?}",
                c.wr_id,
                c.status,
                status.name(),
                c.opcode,
                c.wc_flags,
                c.byte_len,
                c.invalidated
            );
        }
        match kind {
            KIND_RECV | KIND_SEND if status == WcStatus::Flushed => {
                self.recycle(c.buf);
                self.go_down();
            }
            KIND_RECV => {
                if status == WcStatus::Success {
                    let data = c.buf.as_ref().map(|b| b.read(0, c.byte_len as usize)).unwrap_or_default();
                    if let Some(k) = c.invalidated {
                        if let Some(r) = self.regions.get_mut(&k) {
                            r.valid = false;
                        }
                    }
                    self.recycle(c.buf);
                    self.events.push_back(Event::Recv { status, data, invalidated: c.invalidated });
                } else {
                    self.recycle(c.buf);
                    self.events.push_back(Event::Recv { status, data: Vec::new(), invalidated: None });
                    self.go_down();
                }
            }
            KIND_SEND => {
                self.recycle(c.buf);
                self.events.push_back(Event::SendDone { status });
                if status != WcStatus::Success {
                    self.go_down();
                }
            }
            _ => {
                self.done.insert(c.wr_id, (status, c.buf));
                if status != WcStatus::Success {
                    self.go_down();
                }
            }
        }
    }

    /// Takes what is ready now off the CQ and the CM channel; how many things it took.
    fn take_ready(&mut self) -> Result<usize> {
        let n = self.take_completions()?;
        if n > 0 {
            // The CM channel (a system call) is read when the CQ is idle: a disconnection
            // also flushes the posted receives, so it shows on the CQ first.
            return Ok(n);
        }
        self.take_cm_events()
    }

    /// Takes the completions ready now (no system call on providers with user-mapped CQs).
    fn take_completions(&mut self) -> Result<usize> {
        let mut n = 0;
        loop {
            let got = self.id.poll_completions(32).map_err(|e| env_err("ibv_poll_cq", e))?;
            if got.is_empty() {
                return Ok(n);
            }
            n += got.len();
            for c in got {
                self.absorb(c);
            }
        }
    }

    /// Takes the CM events ready now.
    fn take_cm_events(&mut self) -> Result<usize> {
        let mut n = 0;
        let ch = self.id.channel().clone();
        while let Some(ev) = ch.try_event().map_err(|e| env_err("rdma_get_cm_event", e))? {
            n += 1;
            if self.trace {
                eprintln!("verbs: CM event {} (status {})", ev.kind, ev.status);
            }
            match ev.kind {
                ffi::cm_event::DISCONNECTED | ffi::cm_event::DEVICE_REMOVAL => {
                    // Answer the peer's DREQ (rdma_disconnect in go_down), then report.
                    self.go_down();
                }
                _ => {}
            }
        }
        Ok(n)
    }

    /// Waits until something arrives (true) or the deadline passes (false): first polling the
    /// CQ for up to `SPIN`, yielding the CPU between polls (a peer on the same CPU runs), then
    /// armed and asleep until the completion channel or the CM channel is readable. A reply
    /// within the spin costs no wake-up (measured in BENCHMARKS.md against a C client).
    fn pump(&mut self, deadline: Instant) -> Result<bool> {
        if self.take_ready()? > 0 {
            return Ok(true);
        }
        let spin_end = (Instant::now() + SPIN).min(deadline);
        while Instant::now() < spin_end {
            std::thread::yield_now();
            if self.take_completions()? > 0 {
                return Ok(true);
            }
        }
        loop {
            if self.take_ready()? > 0 {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            self.id.arm().map_err(|e| env_err("ibv_req_notify_cq", e))?;
            if self.take_ready()? > 0 {
                return Ok(true);
            }
            let mut fds = vec![self.id.channel().fd()];
            if let Some(fd) = self.id.completion_fd() {
                fds.push(fd);
            }
            ffi::wait_readable(&fds, deadline).map_err(|e| env_err("poll", e))?;
            self.id.drain_completion_events();
        }
    }

    /// Waits for the completion of our own work request `wr_id`.
    fn wait_done(&mut self, wr_id: u64, deadline: Instant) -> Result<(WcStatus, Option<ffi::Mr>)> {
        loop {
            if let Some(d) = self.done.remove(&wr_id) {
                return Ok(d);
            }
            if !self.pump(deadline)? {
                return Err(TransportError::Timeout);
            }
        }
    }

    fn post_error(&mut self, what: &str, e: std::io::Error) -> TransportError {
        if !self.up {
            TransportError::Disconnected
        } else {
            env_err(what, e)
        }
    }

    fn post_recv_inner(&mut self, size: usize, count: usize) -> Result<()> {
        let len = u32::try_from(size).map_err(|_| TransportError::Invalid("receive over 4 GiB".into()))?;
        for _ in 0..count {
            let buf = self.buffer(size)?;
            let wr = self.wr_id(KIND_RECV);
            if let Err(e) = self.id.post_recv(wr, buf, len) {
                return Err(self.post_error("ibv_post_recv", e));
            }
        }
        Ok(())
    }

    fn post_send(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<()> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let len = u32::try_from(msg.len()).map_err(|_| TransportError::Invalid("send over 4 GiB".into()))?;
        let mut buf = self.buffer(msg.len())?;
        buf.write(0, msg);
        let wr_id = self.wr_id(KIND_SEND);
        self.id
            .post_send(ffi::Post::Send { wr_id, buf, len, invalidate })
            .map_err(|e| self.post_error("ibv_post_send", e))
    }

    fn one_sided(
        &mut self,
        read: bool,
        handle: u32,
        offset: u64,
        data: &[u8],
        length: u32,
        deadline: Instant,
    ) -> Result<Vec<u8>> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let mut buf = self.buffer(length as usize)?;
        let wr_id;
        let post = if read {
            wr_id = self.wr_id(KIND_READ);
            ffi::Post::Read { wr_id, buf, len: length, rkey: handle, remote_addr: offset }
        } else {
            buf.write(0, data);
            wr_id = self.wr_id(KIND_WRITE);
            ffi::Post::Write { wr_id, buf, len: length, rkey: handle, remote_addr: offset }
        };
        self.id.post_send(post).map_err(|e| self.post_error("ibv_post_send", e))?;
        let (status, buf) = self.wait_done(wr_id, deadline)?;
        let out = match status {
            WcStatus::Success => {
                Ok(if read { buf.as_ref().map(|b| b.read(0, length as usize)).unwrap_or_default() } else { Vec::new() })
            }
            WcStatus::Flushed => Err(TransportError::Disconnected),
            s => Err(TransportError::Completion(s)),
        };
        self.recycle(buf);
        out
    }

    fn mw_access(access: Access) -> i32 {
        let mut a = 0;
        if access.remote_read {
            a |= ffi::IBV_ACCESS_REMOTE_READ;
        }
        if access.remote_write {
            a |= ffi::IBV_ACCESS_REMOTE_WRITE;
        }
        a
    }

    /// A region behind a type 2 memory window; Ok(None) when the provider has no windows.
    fn register_window(&mut self, length: u32, access: Access) -> Result<Option<(u32, ffi::Region)>> {
        let mw = match ffi::Mw::new(&self.pd) {
            Ok(mw) => mw,
            Err(_) => return Ok(None),
        };
        let mr = ffi::Mr::new(&self.pd, length as usize, ffi::IBV_ACCESS_LOCAL_WRITE | ffi::IBV_ACCESS_MW_BIND)
            .map_err(|e| env_err("ibv_reg_mr", e))?;
        // ibv_inc_rkey: a new key (low 8 bits) for every bind of a type 2 window.
        let old = mw.rkey();
        let rkey = (old & !0xff) | (old.wrapping_add(1) & 0xff);
        let region = ffi::Region { mw: Some(mw), mr };
        let wr_id = self.wr_id(KIND_BIND);
        self.id
            .post_send(ffi::Post::Bind { wr_id, region: &region, rkey, access: Self::mw_access(access) })
            .map_err(|e| self.post_error("ibv_post_send (bind window)", e))?;
        match self.wait_done(wr_id, Instant::now() + Duration::from_secs(5)) {
            Ok((WcStatus::Success, _)) => Ok(Some((rkey, region))),
            Ok((s, _)) => Err(TransportError::Environment(format!("binding a memory window failed: {}", s.name()))),
            Err(e) => {
                self.stuck.push(region);
                Err(e)
            }
        }
    }
}

impl Connection for VerbsConnection {
    fn peer_private_data(&self) -> &[u8] {
        &self.peer_private_data
    }

    fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        self.post_recv_inner(size, count)
    }

    fn send(&mut self, msg: &[u8]) -> Result<()> {
        self.post_send(msg, None)
    }

    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> Result<()> {
        self.post_send(msg, Some(handle))
    }

    fn register(&mut self, length: u32, access: Access) -> Result<Region> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        if self.windows != Some(false) {
            match self.register_window(length, access)? {
                Some((rkey, region)) => {
                    self.windows = Some(true);
                    let offset = region.mr.addr();
                    self.regions.insert(rkey, RegionEntry { region, length, valid: true });
                    return Ok(Region { handle: rkey, offset, length });
                }
                None => self.windows = Some(false),
            }
        }
        let mut flags = ffi::IBV_ACCESS_LOCAL_WRITE;
        if access.remote_read {
            flags |= ffi::IBV_ACCESS_REMOTE_READ;
        }
        if access.remote_write {
            flags |= ffi::IBV_ACCESS_REMOTE_WRITE;
        }
        let mr = ffi::Mr::new(&self.pd, length as usize, flags).map_err(|e| env_err("ibv_reg_mr", e))?;
        let (handle, offset) = (mr.rkey(), mr.addr());
        self.regions.insert(handle, RegionEntry { region: ffi::Region { mw: None, mr }, length, valid: true });
        Ok(Region { handle, offset, length })
    }

    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> Result<()> {
        let e = self
            .regions
            .get_mut(&region.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", region.handle)))?;
        let end = at as usize + data.len();
        if end > e.length as usize || !e.region.mr.write(at as usize, data) {
            return Err(TransportError::Invalid(format!("write of {end} bytes past a {}-byte region", e.length)));
        }
        Ok(())
    }

    fn read_local(&self, region: &Region) -> Result<Vec<u8>> {
        let e = self
            .regions
            .get(&region.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", region.handle)))?;
        Ok(e.region.mr.read(0, e.length as usize))
    }

    /// Verbs gives the target of an RDMA Read or Write no completion: the peer's accesses to
    /// our memory cannot be observed.
    fn accesses(&self, _region: &Region) -> Result<Vec<RemoteAccess>> {
        Err(TransportError::Environment(
            "the peer's RDMA Reads and Writes of our memory cannot be observed over verbs".into(),
        ))
    }

    fn observes_invalidation(&self) -> bool {
        self.fabric.names_invalidated_rkey()
    }

    fn is_valid(&self, region: &Region) -> bool {
        self.regions.get(&region.handle).is_some_and(|e| e.valid)
    }

    fn deregister(&mut self, region: &Region) -> Result<()> {
        self.regions.remove(&region.handle);
        Ok(())
    }

    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.one_sided(true, handle, offset, &[], length, deadline)
    }

    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: Instant) -> Result<()> {
        let len = u32::try_from(data.len()).map_err(|_| TransportError::Invalid("write over 4 GiB".into()))?;
        self.one_sided(false, handle, offset, data, len, deadline).map(|_| ())
    }

    fn poll(&mut self, deadline: Instant) -> Result<Event> {
        loop {
            if let Some(e) = self.events.pop_front() {
                if e == Event::Disconnected {
                    self.told_down = true;
                }
                return Ok(e);
            }
            if self.told_down {
                return Err(TransportError::Disconnected);
            }
            if !self.pump(deadline)? {
                return Err(TransportError::Timeout);
            }
        }
    }

    fn disconnect(&mut self) {
        self.go_down();
    }

    fn is_connected(&self) -> bool {
        // A pending CM event on an established connection is a disconnection (or device
        // removal) not yet taken by poll.
        self.up && !ffi::readable_now(self.id.channel().fd())
    }
}

impl Drop for VerbsConnection {
    fn drop(&mut self) {
        if self.up {
            self.up = false;
            let _ = self.id.disconnect();
        }
        // Windows first: a bound type 2 window holds a reference on the QP, and rxe waits
        // (and warns) when a QP is destroyed with references left. The id (and so the QP)
        // drops with the fields, after this.
        self.regions.clear();
        self.stuck.clear();
    }
}

/// The passive side: listens on an address and hands out one connection request at a time.
pub struct VerbsListener {
    lib: &'static ffi::Lib,
    ch: Arc<ffi::EventChannel>,
    _id: ffi::CmId,
    addr: SocketAddr,
}

/// A connection request, not yet accepted: post receives, then accept or reject.
pub struct PendingConnection {
    conn: VerbsConnection,
    lib: &'static ffi::Lib,
    private_data: Vec<u8>,
    responder_resources: u8,
    initiator_depth: u8,
}

impl VerbsListener {
    /// Listens on `addr` (an address of an RDMA device's netdev, or 0.0.0.0).
    pub fn bind(addr: SocketAddr) -> std::result::Result<VerbsListener, String> {
        check_environment()?;
        let lib = ffi::lib()?;
        let ch = ffi::EventChannel::new(lib).map_err(|e| format!("rdma_create_event_channel: {e}"))?;
        let id = ffi::CmId::new(&ch).map_err(|e| format!("rdma_create_id: {e}"))?;
        id.bind_addr(&addr).map_err(|e| format!("rdma_bind_addr {addr}: {e}"))?;
        id.listen(16).map_err(|e| format!("rdma_listen {addr}: {e}"))?;
        Ok(VerbsListener { lib, ch, _id: id, addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next connection request, or [`TransportError::Timeout`] at the deadline.
    pub fn next_request(&mut self, deadline: Instant) -> Result<PendingConnection> {
        loop {
            let ev = self
                .ch
                .next_event(deadline)
                .map_err(|e| env_err("rdma_get_cm_event", e))?
                .ok_or(TransportError::Timeout)?;
            let Some(mut id) = ev.new_id else { continue };
            let own = ffi::EventChannel::new(self.lib).map_err(|e| env_err("rdma_create_event_channel", e))?;
            id.migrate(&own).map_err(|e| env_err("rdma_migrate_id", e))?;
            let conn = VerbsConnection::setup(id)?;
            return Ok(PendingConnection {
                conn,
                lib: self.lib,
                private_data: ev.private_data,
                responder_resources: ev.responder_resources,
                initiator_depth: ev.initiator_depth,
            });
        }
    }
}

impl PendingConnection {
    /// The requester's private data as delivered (the zero-padded CM area).
    pub fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    /// Posts receives before accepting, so the requester's first Send finds one.
    pub fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        self.conn.post_recv_inner(size, count)
    }

    /// Accepts with our private data and waits for the connection to be established.
    pub fn accept(mut self, private_data: &[u8], deadline: Instant) -> Result<VerbsConnection> {
        let p = ffi::ConnParams {
            responder_resources: self.responder_resources,
            initiator_depth: self.initiator_depth,
            ..params()
        };
        self.conn.id.accept(private_data, p).map_err(|e| env_err("rdma_accept", e))?;
        let ch = self.conn.id.channel().clone();
        expect_event(self.lib, &ch, ffi::cm_event::ESTABLISHED, "accept", deadline)?;
        self.conn.peer_private_data = std::mem::take(&mut self.private_data);
        self.conn.up = true;
        Ok(self.conn)
    }

    /// Rejects with `private_data` (an RDMA-CM consumer reject).
    pub fn reject(self, private_data: &[u8]) -> Result<()> {
        self.conn.id.reject(private_data).map_err(|e| env_err("rdma_reject", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_mapping() {
        assert_eq!(wc_status(0), WcStatus::Success);
        assert_eq!(wc_status(1), WcStatus::LocalLengthError);
        assert_eq!(wc_status(9), WcStatus::RemoteInvalidRequest);
        assert_eq!(wc_status(13), WcStatus::ReceiverNotReady);
        assert_eq!(wc_status(5), WcStatus::Flushed);
        assert_eq!(wc_status(10), WcStatus::RemoteAccessError);
        assert_eq!(wc_status(4), WcStatus::LocalProtectionError);
        assert_eq!(wc_status(12), WcStatus::LocalProtectionError);
    }

    #[test]
    fn a_refused_or_unreachable_connect_is_the_peer() {
        let at: SocketAddr = "10.55.1.1:7499".parse().unwrap();
        for errno in [111, 104, 110, 113, 101, 112] {
            let e = connect_err(at, std::io::Error::from_raw_os_error(errno));
            assert!(matches!(e, TransportError::Unreachable(_)), "errno {errno}: {e}");
        }
        let e = connect_err(at, std::io::Error::from_raw_os_error(12)); // ENOMEM
        assert!(matches!(e, TransportError::Environment(_)), "{e}");
    }

    #[test]
    fn resolves_literals_without_dns() {
        assert_eq!(resolve("10.55.0.1", 20049).unwrap(), "10.55.0.1:20049".parse().unwrap());
        assert_eq!(resolve("fe80::1", 7).unwrap(), "[fe80::1]:7".parse().unwrap());
        assert!(resolve("localhost", 1).is_ok());
    }
}
