//! The export's root file handle, obtained as an NFS client obtains it before its first NFS
//! call: the MOUNT service's port from the portmapper (RFC 1833 3, PMAPPROC_GETPORT over TCP
//! port 111), then MOUNTPROC3_MNT of the export path (RFC 1813 appendix I) with AUTH_SYS as
//! root. Each is one call on its own TCP connection, bounded by a deadline: a peer that never
//! answers ends with an error naming the step. `--root-fh` skips both; `--mount-port` skips
//! the portmapper (Linux's `mountport=`).

use std::fmt;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::hex::Hex;
use rpcrdma_peers::proto::mount::{
    decode_getport, decode_mountres3, dirpath_args, Mapping, MountError, MountStat3, FHSIZE3, MOUNTPROC3_MNT,
    MOUNTPROC3_UMNT, MOUNT_PROGRAM, MOUNT_V3, PMAPPROC_GETPORT, PMAP_PORT, PMAP_PROG, PMAP_VERS,
};
use rpcrdma_peers::proto::nfs3::ROOT_FH;
use rpcrdma_peers::proto::record::{call_record, parse_record, reply_results, Cred, ReplyError, MAX_RECORD};

use crate::exit::HarnessError;

/// How `run` obtains the root handle from a `--peer`.
#[derive(Debug, Clone, Args)]
pub struct MountArgs {
    /// The export the checks use, asked of the peer's MOUNT service for its root file handle.
    #[arg(long, value_name = "PATH", default_value = "/export")]
    pub export: String,
    /// The export's root file handle, in hex (at most 64 bytes): no MOUNT. Without --peer, the
    /// embedded reference responder is given this handle instead of its own.
    #[arg(long, value_name = "HEX", value_parser = root_fh)]
    pub root_fh: Option<Handle>,
    /// The peer's MOUNT service port: no portmapper (rpcbind) query, as Linux's `mountport=`.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub mount_port: Option<u16>,
    /// The peer's portmapper port (for tests).
    #[arg(long, value_name = "PORT", default_value_t = PMAP_PORT, hide = true)]
    pub rpcbind_port: u16,
}

/// A file handle given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handle(pub Vec<u8>);

/// `--root-fh`: an even number of hex digits, 1 to FHSIZE3 (64) bytes (RFC 1813 appendix I).
pub fn root_fh(s: &str) -> Result<Handle, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("an empty handle: give its bytes in hex".into());
    }
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{s:?} is not hex"));
    }
    if s.len() % 2 != 0 {
        return Err(format!("{} hex digits: a handle is whole bytes, two digits each", s.len()));
    }
    if s.len() / 2 > FHSIZE3 as usize {
        return Err(format!("{} bytes: a file handle is at most {FHSIZE3} (FHSIZE3, RFC 1813)", s.len() / 2));
    }
    let digit = |b: u8| (b as char).to_digit(16).expect("checked") as u8;
    Ok(Handle(s.as_bytes().chunks(2).map(|p| digit(p[0]) << 4 | digit(p[1])).collect()))
}

/// Where the root handle came from (the JSON report's `root_fh.source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The peer's MOUNT service, for this export path.
    Mount(String),
    /// `--root-fh`.
    Option,
    /// The embedded reference responder's own.
    Embedded,
}

impl Source {
    pub fn name(&self) -> &'static str {
        match self {
            Source::Mount(_) => "mount",
            Source::Option => "option",
            Source::Embedded => "embedded",
        }
    }
}

/// The root handle the checks use, and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootHandle {
    pub fh: Vec<u8>,
    pub source: Source,
}

impl RootHandle {
    pub fn hex(&self) -> String {
        Hex(&self.fh).to_string()
    }

    /// For the text header: `0100010001000000 by MOUNT of /export`.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::Mount(path) => format!("{} by MOUNT of {path}", self.hex()),
            Source::Option => format!("{} from --root-fh", self.hex()),
            Source::Embedded => format!("{} (embedded)", self.hex()),
        }
    }
}

/// The step that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// PMAPPROC_GETPORT of MOUNT v3 over TCP.
    Rpcbind,
    /// MOUNTPROC3_MNT.
    Mount,
    /// MOUNTPROC3_UMNT.
    Unmount,
}

/// Why one call got no usable answer.
#[derive(Debug)]
pub enum CallError {
    /// The TCP connection was not established (refused, unreachable).
    Connect(std::io::Error),
    /// No whole reply by the deadline.
    TimedOut(Duration),
    /// The peer closed the connection before a whole reply.
    Closed,
    /// Sending or receiving failed.
    Io(std::io::Error),
    /// A reply, but not the answer asked for.
    Protocol(MountError),
}

impl From<ReplyError> for CallError {
    fn from(e: ReplyError) -> Self {
        CallError::Protocol(MountError::Reply(e))
    }
}

/// A step that failed, where, and why.
#[derive(Debug)]
pub struct Failure {
    pub step: Step,
    pub addr: SocketAddr,
    pub error: CallError,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            Step::Rpcbind => "rpcbind (PMAPPROC_GETPORT of MOUNT v3 over TCP)",
            Step::Mount => "MOUNT (MOUNTPROC3_MNT)",
            Step::Unmount => "MOUNT (MOUNTPROC3_UMNT)",
        };
        write!(f, "{step} at {}: ", self.addr)?;
        match &self.error {
            CallError::Connect(e) => write!(f, "cannot connect: {e}"),
            CallError::TimedOut(d) => write!(f, "no reply within {} s", d.as_secs_f64()),
            CallError::Closed => f.write_str("the connection closed before a whole reply"),
            CallError::Io(e) => e.fmt(f),
            CallError::Protocol(e) => e.fmt(f),
        }
    }
}

impl Failure {
    /// What to do about it, for the one-line error.
    pub fn hint(&self) -> &'static str {
        match (self.step, &self.error) {
            (Step::Rpcbind, _) => "give --mount-port PORT to skip rpcbind, or --root-fh HEX to skip MOUNT",
            (_, CallError::Protocol(MountError::Status(MountStat3::MNT3ERR_ACCES))) => {
                "the peer refuses this client (Linux's mountd refuses an unprivileged source port unless the \
                 export has `insecure`, as RPC-over-RDMA from the harness needs too), or give --root-fh HEX to skip MOUNT"
            }
            (_, CallError::Protocol(MountError::Status(_))) => {
                "check --export against the peer's exports, or give --root-fh HEX to skip MOUNT"
            }
            _ => "check --mount-port, or give --root-fh HEX to skip MOUNT",
        }
    }
}

/// A transaction ID for a call: the clock's nanoseconds, never the same twice in a row.
fn xid() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    seed ^ NEXT.fetch_add(0x9e37_79b9, Ordering::Relaxed)
}

/// The time left before `deadline`, or the timeout error when none is.
fn left(deadline: Instant, timeout: Duration) -> Result<Duration, CallError> {
    deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()).ok_or(CallError::TimedOut(timeout))
}

/// One call of `prog`/`vers`/`proc_` to `addr` over a TCP connection of its own; the reply's
/// results, all within `timeout`.
pub fn call(
    addr: SocketAddr,
    prog: u32,
    vers: u32,
    proc_: u32,
    cred: Cred,
    args: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, CallError> {
    let deadline = Instant::now() + timeout;
    let timed_out =
        |e: &std::io::Error| matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut);
    let mut stream = TcpStream::connect_timeout(&addr, left(deadline, timeout)?).map_err(|e| {
        if timed_out(&e) {
            CallError::TimedOut(timeout)
        } else {
            CallError::Connect(e)
        }
    })?;
    let io = |e: std::io::Error| if timed_out(&e) { CallError::TimedOut(timeout) } else { CallError::Io(e) };
    let xid = xid();
    stream.set_write_timeout(Some(left(deadline, timeout)?)).map_err(io)?;
    stream.write_all(&call_record(xid, prog, vers, proc_, cred, args)).map_err(io)?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let msg = loop {
        if let Some((msg, _)) = parse_record(&buf, MAX_RECORD)? {
            break msg;
        }
        stream.set_read_timeout(Some(left(deadline, timeout)?)).map_err(io)?;
        match stream.read(&mut chunk).map_err(io)? {
            0 => return Err(CallError::Closed),
            n => buf.extend_from_slice(&chunk[..n]),
        }
    };
    Ok(reply_results(&msg, xid)?.to_vec())
}

/// The TCP port of the MOUNT v3 service on `host`, from the portmapper at `rpcbind_port`.
pub fn getport(host: IpAddr, rpcbind_port: u16, timeout: Duration) -> Result<u16, Failure> {
    let addr = SocketAddr::new(host, rpcbind_port);
    let asked = Mapping::tcp(MOUNT_PROGRAM, MOUNT_V3);
    let fail = |error| Failure { step: Step::Rpcbind, addr, error };
    let results =
        call(addr, PMAP_PROG, PMAP_VERS, PMAPPROC_GETPORT, Cred::None, &asked.encode(), timeout).map_err(fail)?;
    decode_getport(&results, &asked).map_err(|e| fail(CallError::Protocol(e)))
}

/// MOUNTPROC3_MNT of `export` at `addr`: the export's root handle.
pub fn mnt(addr: SocketAddr, export: &str, timeout: Duration) -> Result<Vec<u8>, Failure> {
    let fail = |error| Failure { step: Step::Mount, addr, error };
    let args = dirpath_args(export).map_err(|e| fail(CallError::Protocol(e)))?;
    let results = call(addr, MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_MNT, Cred::SysRoot, &args, timeout).map_err(fail)?;
    decode_mountres3(&results).map(|ok| ok.fhandle).map_err(|e| fail(CallError::Protocol(e)))
}

/// MOUNTPROC3_UMNT of `export` at `addr`: the server forgets the mount (RFC 1813 appendix I).
pub fn umnt(addr: SocketAddr, export: &str, timeout: Duration) -> Result<(), Failure> {
    let fail = |error| Failure { step: Step::Unmount, addr, error };
    let args = dirpath_args(export).map_err(|e| fail(CallError::Protocol(e)))?;
    call(addr, MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_UMNT, Cred::SysRoot, &args, timeout).map_err(fail)?;
    Ok(())
}

/// The root handle of `args.export` on `host`: given, or by MOUNT at `--mount-port` or at the
/// port the portmapper gives; with the MOUNT service's address when MOUNT was done.
pub fn obtain(args: &MountArgs, host: IpAddr, timeout: Duration) -> Result<(RootHandle, Option<SocketAddr>), Failure> {
    if let Some(Handle(fh)) = &args.root_fh {
        return Ok((RootHandle { fh: fh.clone(), source: Source::Option }, None));
    }
    let port = match args.mount_port {
        Some(p) => p,
        None => getport(host, args.rpcbind_port, timeout)?,
    };
    let addr = SocketAddr::new(host, port);
    let fh = mnt(addr, &args.export, timeout)?;
    Ok((RootHandle { fh, source: Source::Mount(args.export.clone()) }, Some(addr)))
}

/// What `run` needs: the root handle for `peer` (None: the embedded reference responder,
/// whose handle is [`ROOT_FH`] unless `--root-fh` says otherwise), and the MOUNT service to
/// unmount from at the end. A failure is one line, naming the step: an environment error.
pub fn for_run(
    args: &MountArgs,
    peer: Option<&str>,
    timeout: Duration,
) -> Result<(RootHandle, Option<SocketAddr>), HarnessError> {
    let Some(peer) = peer else {
        return Ok(match &args.root_fh {
            Some(Handle(fh)) => (RootHandle { fh: fh.clone(), source: Source::Option }, None),
            None => (RootHandle { fh: ROOT_FH.to_vec(), source: Source::Embedded }, None),
        });
    };
    let host = crate::peer::parse_addr(peer).and_then(|(host, port)| crate::peer::resolve(&host, port))?.ip();
    obtain(args, host, timeout).map_err(|f| {
        HarnessError::Environment(format!("cannot obtain the root file handle of {}: {f}; {}", args.export, f.hint()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_fh_hex() {
        assert_eq!(root_fh("0100010001000000").unwrap(), Handle(vec![1, 0, 1, 0, 1, 0, 0, 0]));
        assert_eq!(root_fh("aBcD").unwrap(), Handle(vec![0xab, 0xcd]));
        assert_eq!(root_fh(&"ff".repeat(64)).unwrap().0.len(), 64);
        for (bad, says) in [
            ("", "empty"),
            ("abc", "3 hex digits"),
            (&"ff".repeat(65), "65 bytes"),
            ("zz", "not hex"),
            ("+a+b", "not hex"),
            ("0x0100", "not hex"),
            ("aé0b", "not hex"),
        ] {
            let e = root_fh(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn sources_and_descriptions() {
        let r = RootHandle { fh: vec![0xab, 1], source: Source::Mount("/x".into()) };
        assert_eq!((r.hex().as_str(), r.source.name()), ("ab01", "mount"));
        assert_eq!(r.describe(), "ab01 by MOUNT of /x");
        assert_eq!(Source::Option.name(), "option");
        assert_eq!(Source::Embedded.name(), "embedded");
    }
}
