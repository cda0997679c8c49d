//! The reference MOUNT service and portmapper, over TCP on loopback, for testing the
//! harness's MOUNT client: a portmapper answering PMAPPROC_GETPORT (RFC 1833 3) with the
//! MOUNT service's port, and a MOUNT v3 service answering MOUNTPROC3_MNT (RFC 1813 appendix
//! I) with the embedded tree's root handle for `/export` and MNT3ERR_NOENT for anything
//! else. Like servers that refuse AUTH_NONE for MNT, it answers such a call AUTH_ERROR
//! (AUTH_TOOWEAK). Every call either listener receives is recorded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rpcrdma_codec::rpc::{AcceptStat, AuthFlavor, AuthStat, Rejected, RpcHeader, RpcMessage};

use crate::proto::mount::{
    decode_dirpath, mountres3_err, mountres3_ok, Mapping, MountStat3, IPPROTO_TCP, MOUNTPROC3_MNT, MOUNTPROC3_NULL,
    MOUNTPROC3_UMNT, MOUNT_PROGRAM, MOUNT_V3, PMAPPROC_GETPORT, PMAP_PROG, PMAP_VERS,
};
use crate::proto::nfs3::ROOT_FH;
use crate::proto::record::{accepted_record, denied_record, parse_record, MAX_RECORD};

/// The export path the reference tree is served under.
pub const EXPORT: &str = "/export";

/// How the service answers.
#[derive(Debug, Clone)]
pub struct Mountd {
    /// Export paths and their root handles.
    pub exports: Vec<(String, Vec<u8>)>,
    /// Answer every MNT with this status instead (MNT3ERR_ACCES: a client not allowed).
    pub refuse: Option<MountStat3>,
    /// Whether the portmapper knows the MOUNT service (GETPORT answers 0 otherwise).
    pub registered: bool,
}

impl Default for Mountd {
    fn default() -> Self {
        Mountd { exports: vec![(EXPORT.into(), ROOT_FH.to_vec())], refuse: None, registered: true }
    }
}

/// A call one of the listeners received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub flavor: AuthFlavor,
    /// AUTH_SYS's uid and gid, when the credential is AUTH_SYS.
    pub uid_gid: Option<(u32, u32)>,
    pub args: Vec<u8>,
}

/// The running service: its two addresses, the calls seen; dropping it stops both listeners.
#[derive(Debug)]
pub struct Running {
    pub rpcbind: SocketAddr,
    pub mount: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Running {
    /// Every call received so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("no thread panics holding it").clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl Mountd {
    /// Starts the portmapper and the MOUNT service on loopback, each on an ephemeral port.
    pub fn spawn(self) -> std::io::Result<Running> {
        let pmap = TcpListener::bind("127.0.0.1:0")?;
        let mount = TcpListener::bind("127.0.0.1:0")?;
        let running = Running {
            rpcbind: pmap.local_addr()?,
            mount: mount.local_addr()?,
            seen: Arc::default(),
            stop: Arc::default(),
        };
        let config = Arc::new(self);
        for (listener, program) in [(pmap, PMAP_PROG), (mount, MOUNT_PROGRAM)] {
            listener.set_nonblocking(true)?;
            let (config, seen, stop) = (config.clone(), running.seen.clone(), running.stop.clone());
            let mount_port = running.mount.port();
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (config, seen, stop) = (config.clone(), seen.clone(), stop.clone());
                            std::thread::spawn(move || serve(stream, program, mount_port, &config, &seen, &stop));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Ok(running)
    }

    /// The reply record to the call `msg` (one record's data) on the listener of `program`;
    /// None for a message that is no call (dropped, as RFC 5531 lets a server do).
    fn answer(&self, msg: &[u8], program: u32, mount_port: u16, seen: &Mutex<Vec<Seen>>) -> Option<Vec<u8>> {
        let m = RpcMessage::decode(msg).ok()?;
        let RpcHeader::Call(call) = m.header else { return None };
        let uid_gid = call.cred.auth_sys().and_then(Result::ok).map(|a| (a.uid, a.gid));
        let flavor = call.cred.flavor;
        let record =
            Seen { prog: call.prog, vers: call.vers, proc_: call.proc_, flavor, uid_gid, args: m.body.to_vec() };
        seen.lock().expect("no thread panics holding it").push(record);
        let xid = call.xid;
        if call.prog != program {
            return Some(accepted_record(xid, AcceptStat::ProgUnavail, &[]));
        }
        let (low, high) = if program == PMAP_PROG { (PMAP_VERS, PMAP_VERS) } else { (MOUNT_V3, MOUNT_V3) };
        if call.vers != low {
            return Some(accepted_record(xid, AcceptStat::ProgMismatch { low, high }, &[]));
        }
        let garbage = || accepted_record(xid, AcceptStat::GarbageArgs, &[]);
        let ok = |results: &[u8]| accepted_record(xid, AcceptStat::Success, results);
        Some(match (program, call.proc_) {
            // PMAPPROC_NULL is 0 too.
            (_, MOUNTPROC3_NULL) => ok(&[]),
            (PMAP_PROG, PMAPPROC_GETPORT) => match Mapping::decode(m.body) {
                Ok(q) => {
                    let known =
                        self.registered && q.prog == MOUNT_PROGRAM && q.vers == MOUNT_V3 && q.prot == IPPROTO_TCP;
                    ok(&u32::from(if known { mount_port } else { 0 }).to_be_bytes())
                }
                Err(_) => garbage(),
            },
            (MOUNT_PROGRAM, MOUNTPROC3_MNT) if flavor != AuthFlavor::AUTH_SYS => {
                denied_record(xid, Rejected::AuthError { stat: AuthStat::AUTH_TOOWEAK })
            }
            (MOUNT_PROGRAM, MOUNTPROC3_MNT) => match decode_dirpath(m.body) {
                Ok(path) => match (self.refuse, self.exports.iter().find(|(p, _)| *p == path)) {
                    (Some(status), _) => ok(&mountres3_err(status)),
                    (None, Some((_, fh))) => ok(&mountres3_ok(fh, &[AuthFlavor::AUTH_SYS.0])),
                    (None, None) => ok(&mountres3_err(MountStat3::MNT3ERR_NOENT)),
                },
                Err(_) => garbage(),
            },
            (MOUNT_PROGRAM, MOUNTPROC3_UMNT) => ok(&[]),
            _ => accepted_record(xid, AcceptStat::ProcUnavail, &[]),
        })
    }
}

/// Answers the calls on one connection until it closes, a record is too long, or the
/// service stops.
fn serve(
    mut stream: TcpStream,
    program: u32,
    mount_port: u16,
    config: &Mountd,
    seen: &Mutex<Vec<Seen>>,
    stop: &AtomicBool,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        match parse_record(&buf, MAX_RECORD) {
            Ok(Some((msg, used))) => {
                buf.drain(..used);
                if let Some(reply) = config.answer(&msg, program, mount_port, seen) {
                    if stream.write_all(&reply).is_err() {
                        return;
                    }
                }
                continue;
            }
            Ok(None) => {}
            Err(_) => return,
        }
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}
