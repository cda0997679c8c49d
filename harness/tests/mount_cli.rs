//! Obtaining the root file handle: the harness's MOUNT client against the reference MOUNT
//! service and portmapper on loopback (`rpcrdma_peers::mountd`), against peers that never
//! answer, close, refuse or answer garbage, and `run`'s `--root-fh` plumbing. A full
//! `run --peer` needs an RDMA device; `mount::for_run` is its MOUNT step, peer address and all.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use rpcrdma_codec::rpc::{AcceptStat, AuthFlavor};
use rpcrdma_harness::mount::{self, CallError, Handle, MountArgs, RootHandle, Source, Step};
use rpcrdma_peers::mountd::{Mountd, Running};
use rpcrdma_peers::proto::mount::{MountError, MountStat3};
use rpcrdma_peers::proto::record::{Cred, ReplyError};

const T: Duration = Duration::from_secs(2);
/// The handle this test's MOUNT service gives for `/export`: its own, not the embedded tree's.
const FH: [u8; 12] = [0xfe, 0xed, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
/// `dirpath` "/export" (RFC 1813 appendix I, a string<1024>): length 7, the bytes, one pad.
const EXPORT_ARGS: [u8; 12] = [0, 0, 0, 7, b'/', b'e', b'x', b'p', b'o', b'r', b't', 0];

fn service(config: Mountd) -> Running {
    Mountd { exports: vec![("/export".into(), FH.to_vec())], ..config }.spawn().unwrap()
}

fn args(export: &str, rpcbind: u16, mount_port: Option<u16>) -> MountArgs {
    MountArgs { export: export.into(), root_fh: None, mount_port, rpcbind_port: rpcbind }
}

fn localhost() -> std::net::IpAddr {
    "127.0.0.1".parse().unwrap()
}

#[test]
fn rpcbind_then_mount_gives_the_services_handle() {
    let s = service(Mountd::default());
    let (root, at) = mount::obtain(&args("/export", s.rpcbind.port(), None), localhost(), T).unwrap();
    assert_eq!(root, RootHandle { fh: FH.to_vec(), source: Source::Mount("/export".into()) });
    assert_eq!(at, Some(s.mount));
    let seen = s.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    // PMAPPROC_GETPORT (3) of PMAP_PROG 100000 v2: mapping {100005, 3, IPPROTO_TCP 6, 0}.
    assert_eq!((seen[0].prog, seen[0].vers, seen[0].proc_), (100000, 2, 3));
    assert_eq!(seen[0].args, [0, 1, 0x86, 0xa5, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0, 0]);
    // MOUNTPROC3_MNT (1) of MOUNT_PROGRAM 100005 v3, AUTH_SYS as root.
    assert_eq!((seen[1].prog, seen[1].vers, seen[1].proc_), (100005, 3, 1));
    assert_eq!((seen[1].flavor, seen[1].uid_gid), (AuthFlavor::AUTH_SYS, Some((0, 0))));
    assert_eq!(seen[1].args, EXPORT_ARGS);
    // UMNT (3) of the same path.
    mount::umnt(s.mount, "/export", T).unwrap();
    assert_eq!((s.seen()[2].proc_, s.seen()[2].args.clone()), (3, EXPORT_ARGS.to_vec()));
}

#[test]
fn the_run_path_from_a_peer_address() {
    let s = service(Mountd::default());
    let a = args("/export", s.rpcbind.port(), None);
    let (root, _) = mount::for_run(&a, Some("127.0.0.1:20049"), T).unwrap();
    assert_eq!((root.hex(), root.source.name()), ("feed00010203040506070809".to_string(), "mount"));
    // Without --peer, the embedded tree's handle (the Linux fsid=1 export root) or the one given.
    let (root, at) = mount::for_run(&a, None, T).unwrap();
    assert_eq!((root.hex().as_str(), root.source, at), ("0100010001000000", Source::Embedded, None));
    let given = MountArgs { root_fh: Some(Handle(vec![9, 9])), ..a.clone() };
    assert_eq!(mount::for_run(&given, None, T).unwrap().0.source, Source::Option);
    // --root-fh against a peer: no MOUNT at all.
    let before = s.seen().len();
    let (root, at) = mount::for_run(&given, Some("127.0.0.1"), T).unwrap();
    assert_eq!((root.fh, at), (vec![9, 9], None));
    assert_eq!(s.seen().len(), before);
    // A failure is the environment error status.
    let e = mount::for_run(&args("/nope", s.rpcbind.port(), None), Some("127.0.0.1"), T).unwrap_err();
    assert_eq!(e.code(), 2, "{e}");
}

#[test]
fn mount_port_skips_rpcbind() {
    let s = service(Mountd { registered: false, ..Mountd::default() });
    let (root, _) = mount::obtain(&args("/export", s.rpcbind.port(), Some(s.mount.port())), localhost(), T).unwrap();
    assert_eq!(root.fh, FH);
    assert!(s.seen().iter().all(|c| c.prog == 100005), "{:?}", s.seen());
    // Through rpcbind, the unregistered service is a GETPORT of port 0.
    let f = mount::obtain(&args("/export", s.rpcbind.port(), None), localhost(), T).unwrap_err();
    assert_eq!(f.step, Step::Rpcbind);
    assert!(matches!(f.error, CallError::Protocol(MountError::NotRegistered { prog: 100005, vers: 3 })), "{f}");
    assert!(f.hint().contains("--mount-port"), "{}", f.hint());
}

#[test]
fn mount_errors_name_the_status() {
    let s = service(Mountd::default());
    let f = mount::obtain(&args("/elsewhere", s.rpcbind.port(), None), localhost(), T).unwrap_err();
    assert_eq!(f.step, Step::Mount);
    assert!(matches!(f.error, CallError::Protocol(MountError::Status(MountStat3(2)))), "{f}");
    assert!(f.to_string().contains("MNT3ERR_NOENT"), "{f}");
    let s = service(Mountd { refuse: Some(MountStat3::MNT3ERR_ACCES), ..Mountd::default() });
    let f = mount::obtain(&args("/export", s.rpcbind.port(), None), localhost(), T).unwrap_err();
    assert!(matches!(f.error, CallError::Protocol(MountError::Status(MountStat3(13)))), "{f}");
    let line = f.to_string();
    assert!(line.starts_with("MOUNT (MOUNTPROC3_MNT) at 127.0.0.1:") && line.ends_with("MNT3ERR_ACCES"), "{line}");
    assert!(f.hint().contains("--root-fh") && f.hint().contains("insecure"), "{}", f.hint());
    // AUTH_NONE, which the reference service refuses for MNT as servers do: MSG_DENIED.
    let e = mount::call(s.mount, 100005, 3, 1, Cred::None, &EXPORT_ARGS, T).unwrap_err();
    assert!(matches!(e, CallError::Protocol(MountError::Reply(ReplyError::Denied(_)))), "{e:?}");
    // The MOUNT port is rpcbind's: another program there is PROG_UNAVAIL.
    let f = mount::obtain(&args("/export", 1, Some(s.rpcbind.port())), localhost(), T).unwrap_err();
    let want = CallError::Protocol(MountError::Reply(ReplyError::NotSuccess(AcceptStat::ProgUnavail)));
    assert_eq!(format!("{:?}", f.error), format!("{want:?}"), "{f}");
}

#[test]
fn a_closed_port_is_a_connect_error() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let f = mount::obtain(&args("/export", port, None), localhost(), T).unwrap_err();
    assert_eq!(f.step, Step::Rpcbind);
    assert!(matches!(f.error, CallError::Connect(_)), "{f}");
    assert!(f.to_string().contains("cannot connect"), "{f}");
}

/// A TCP server that accepts, reads the call, and does `then` with the connection.
fn peer(then: impl FnOnce(&mut std::net::TcpStream) + Send + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut buf = [0u8; 512];
        let _ = c.read(&mut buf);
        then(&mut c);
    });
    at
}

#[test]
fn a_peer_that_never_answers_times_out() {
    // Accepted by the kernel, never read or answered.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let started = Instant::now();
    let f = mount::mnt(l.local_addr().unwrap(), "/export", Duration::from_millis(300)).unwrap_err();
    assert!(matches!(f.error, CallError::TimedOut(_)), "{f}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(f.to_string().contains("no reply within 0.3 s"), "{f}");
    // One that dribbles a fragment header and nothing more.
    let at = peer(|c| {
        c.write_all(&[0x80, 0, 0, 40]).unwrap();
        std::thread::sleep(Duration::from_secs(3));
    });
    let f = mount::mnt(at, "/export", Duration::from_millis(300)).unwrap_err();
    assert!(matches!(f.error, CallError::TimedOut(_)), "{f}");
}

#[test]
fn hostile_replies_are_errors() {
    // Closed without a reply.
    let f = mount::mnt(peer(|_| {}), "/export", T).unwrap_err();
    assert!(matches!(f.error, CallError::Closed | CallError::Io(_)), "{f}");
    // A record announcing 2 GiB: refused on its header.
    let at = peer(|c| {
        let _ = c.write_all(&[0xff, 0xff, 0xff, 0xff]);
        std::thread::sleep(Duration::from_millis(500));
    });
    let f = mount::mnt(at, "/export", T).unwrap_err();
    assert!(matches!(f.error, CallError::Protocol(MountError::Reply(ReplyError::RecordTooLong { .. }))), "{f}");
    // A whole record of garbage: 8 bytes of 0xff.
    let at = peer(|c| {
        let _ = c.write_all(&[0x80, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    });
    let f = mount::mnt(at, "/export", T).unwrap_err();
    assert!(matches!(f.error, CallError::Protocol(MountError::Reply(ReplyError::Garbled(_)))), "{f}");
}

#[test]
fn run_records_the_root_handle() {
    // The default: the embedded tree's handle, in the header and the JSON report.
    let out = common::harness().args(["run", "rfc8166/4.2.4/null-call", "--json", "-"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["root_fh"], serde_json::json!({"hex": "0100010001000000", "source": "embedded", "export": null}));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().next().unwrap().contains("root handle 0100010001000000 (embedded)"), "{err}");
    let out = common::harness().args(["run", "rfc8166/4.2.4/null-call", "--junit", "-"]).output().unwrap();
    let xml = String::from_utf8_lossy(&out.stdout);
    assert!(xml.contains(r#"<property name="root_fh" value="0100010001000000"/>"#), "{xml}");
    assert!(xml.contains(r#"<property name="root_fh.source" value="embedded"/>"#), "{xml}");
    // A handle given: the checks use it, and the embedded responder knows no such handle.
    let given = "a0a1a2a3a4a5a6a7a8a9aaab";
    let out = common::harness()
        .args(["run", "rfc8166/4.3.1/reply-read-list-empty", "--root-fh", given, "--json", "-"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["root_fh"]["hex"], given);
    assert_eq!(v["root_fh"]["source"], "option");
    assert_eq!(v["checks"][0]["status"], "fail", "{}", v["checks"][0]["actual"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn bad_root_handles_are_usage_errors() {
    for (bad, says) in [("abc", "3 hex digits"), (&"00".repeat(65)[..], "65 bytes"), ("xy", "not hex")] {
        let out = common::harness().args(["run", "--root-fh", bad]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--root-fh") && err.contains(says), "{bad}: {err}");
    }
    let out = common::harness().args(["run", "--mount-port", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
