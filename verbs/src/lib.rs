//! The real RDMA transport: RDMA-CM (librdmacm) and verbs (libibverbs) from rdma-core,
//! loaded at run time so the harness builds and runs its embedded default where rdma-core is
//! missing. Implements the engine's [`Connector`] / [`Connection`] with the semantics of the
//! emulated transport (`rpcrdma_peers::transport::emulated`).
//!
//! The toolkit's only FFI, behind a crate wall: the harness and the rest of the toolkit
//! forbid `unsafe` (but for the harness's signal handlers). In this crate it is all in
//! [`ffi`]: `forbid(unsafe_code)` cannot be scoped like that (a child module cannot lift it),
//! so the crate says `deny(unsafe_code)` and only `ffi` allows it.
//!
//! Design:
//! - One connection = one RDMA-CM event channel, one cm_id, a PD, a completion channel, one
//!   CQ for both send and receive completions, and an RC queue pair. No threads: every call
//!   runs on the caller's thread.
//! - Waiting: the CQ polled for up to `SPIN` (2 ms), yielding the CPU between polls; then
//!   `poll(2)` on the completion channel's fd and the CM event channel's fd together, with the
//!   caller's deadline as the timeout (the CQ is re-armed and re-polled before each wait, so no
//!   completion is missed). The CM channel is read whenever the CQ is found idle.
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
//!   [`Event::Disconnected`] once, then [`TransportError::Disconnected`]. Before that, every
//!   receive posted is taken off the CQ (for at most [`DRAIN`]): a message the peer sent
//!   before it disconnected is reported, even when the CM's DISCONNECTED event was read
//!   before its completion (the CM channel and the CQ are read one after the other, and a
//!   message and a disconnection can land between the two reads). Flushed receives
//!   are not reported one by one (the emulated fabric drops them too). We call
//!   `rdma_disconnect` so the peer learns of it.
//! - Provider quirks handled (soft-RoCE, rxe, kernel 6.1 / rdma-core 44): a receive
//!   overrun by a longer Send completes with IBV_WC_LOC_QP_OP_ERR (reported as
//!   [`WcStatus::LocalLengthError`]); remote invalidation is flagged with the kernel's
//!   IB_WC_WITH_INVALIDATE bit (accepted as well as IBV_WC_WITH_INV).
//! - A requester's lean path beside [`Connection`](rpcrdma_peers::transport::Connection)
//!   (`bench-null`'s): [`VerbsConnection::open_slots`] registers one region of receive slots
//!   and one of send slots; [`VerbsConnection::send_in_slot`] copies a call into the next free
//!   send slot and asks for a completion on one Send in 16 (`SIGNAL_EVERY`), and
//!   [`VerbsConnection::take_messages`] hands the messages that arrived over in place,
//!   reposting their slots as one chain: no buffer moves, no work-request table.
//! - `RPCRDMA_VERBS_TRACE=1` prints every completion and CM event to stderr.
//! - What verbs cannot do: observe the peer's RDMA Reads and Writes of our memory
//!   ([`Connection::accesses`] returns [`TransportError::Environment`]).

#![deny(unsafe_code)]

mod fabric;
mod ffi;

pub use fabric::Fabric;

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_codec::hex::Hex;
use rpcrdma_peers::transport::{Result, TransportError, WcStatus};

/// Where rdma-core exposes devices.
const SYSFS_DEVICES: &str = "/sys/class/infiniband";

const CQ_ENTRIES: i32 = 4096;
const MAX_SEND_WR: u32 = 512;
const MAX_RECV_WR: u32 = 2048;
/// How long an iWARP connection is left alone after ESTABLISHED before our first Send (see
/// VerbsConnector::connect).
const IWARP_SETTLE: Duration = Duration::from_millis(20);
/// How long a connection that went down waits for the completions of its posted receives
/// (messages that arrived before it went down, then the flushed rest) before it reports the
/// disconnection.
const DRAIN: Duration = Duration::from_millis(500);
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
/// The requester's slots ([`VerbsConnection::open_slots`]): a receive slot, a Send.
const KIND_SLOT_RECV: u64 = 6;
const KIND_SLOT_SEND: u64 = 7;
/// One in this many of [`VerbsConnection::send_in_slot`]'s Sends asks for a completion.
const SIGNAL_EVERY: u64 = 16;

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
            format!(", private data {}", Hex(&ev.private_data))
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

mod connection;
mod connector;
mod listener;
mod pump;
mod requester;

pub use connection::VerbsConnection;
pub use connector::VerbsConnector;
pub use listener::{PendingConnection, VerbsListener};

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
