//! Where a user-space peer crashed: the signature of the backtrace it (or a debugger) wrote,
//! so a profile can list each known crash site and a new site is a new finding (a kernel
//! peer's crash is signed by [`super::kernel_log`] instead).
//!
//! Read from the peer's own log (`fuzz --peer-log`): NFS-Ganesha's crash handler logs
//! `BACKTRACE:` and one ` #N function + 0xOFFSET [ip=...] [sp=...]` line per frame (libunwind,
//! `gsh_libunwind()`), or `stack backtrace follows:` and glibc's `backtrace_symbols_fd()`
//! lines (`/usr/lib/libntirpc.so.6.3(xdr_rdma_svc_recv+0x26b)[0x7f...]`); gdb's `bt` prints
//! `#N  0x... in function (args) at file:line`. The signature is the names of the top
//! [`FRAMES`] frames where the fault happened, innermost first, joined by ` < `: the frames of
//! the crash handler, the signal trampoline and the C library's abort path are not the site.
//! Names only: no offsets, addresses or line numbers, which change with every build.

/// Frames in a signature.
pub const FRAMES: usize = 3;

/// The crash handler's own frames (NFS-Ganesha's `crash_handler()` in `MainNFSD/nfs_init.c`
/// and the backtrace functions it calls): they and the signal trampoline after them are
/// dropped.
const HANDLER: [&str; 4] = ["gsh_libunwind", "gsh_backtrace", "crash_handler", "backtrace"];
/// The C library's way from abort() or a signal to the handler: dropped at the top.
const ABORT_PATH: [&str; 14] = [
    "raise",
    "abort",
    "gsignal",
    "pthread_kill",
    "__pthread_kill_implementation",
    "__pthread_kill_internal",
    "__GI_raise",
    "__GI_abort",
    "__assert_fail",
    "__assert_fail_base",
    "__GI___assert_fail",
    "__restore_rt",
    "killpg",
    "<signal handler called>",
];

/// A crash site: its signature and the backtrace lines it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub signature: String,
    pub trace: Vec<String>,
}

/// The function a backtrace line names, if the line is a frame.
fn frame(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix('#') {
        // libunwind or gdb: "#N ...".
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        if rest.len() == t.len() - 1 {
            return None;
        }
        let rest = rest.trim_start();
        if rest.starts_with("<signal handler called>") {
            return Some("<signal handler called>".into());
        }
        // gdb: "0x00007f... in name (args) at file:line"; "name (args) at ..." for frame 0.
        let rest = match rest.split_once(" in ") {
            Some((addr, name)) if addr.starts_with("0x") => name,
            _ => rest,
        };
        let name = rest.split([' ', '(']).next().unwrap_or("");
        return (!name.is_empty()).then(|| name.to_string());
    }
    // backtrace_symbols_fd(): "object(name+0xoff) [0xaddr]"; "object(+0xoff)" has no name.
    let (_, inner) = t.split_once('(')?;
    let (sym, tail) = inner.split_once(')')?;
    if !tail.trim_start().starts_with('[') {
        return None;
    }
    let name = sym.split('+').next().unwrap_or("");
    Some(if name.is_empty() { "??".into() } else { name.to_string() })
}

/// The crash site of the last backtrace among `lines`, if there is one.
pub fn crash_site(lines: &[String]) -> Option<Site> {
    let marker = |l: &String| l.ends_with("BACKTRACE:") || l.ends_with("stack backtrace follows:");
    // From the last marker; without one (gdb's output), from the last frame #0.
    let start = match lines.iter().rposition(marker) {
        Some(i) => i + 1,
        None => lines.iter().rposition(|l| l.trim_start().starts_with("#0 ") && frame(l).is_some())?,
    };
    let mut trace = Vec::new();
    let mut names = Vec::new();
    for l in &lines[start..] {
        match frame(l) {
            Some(n) => {
                trace.push(l.clone());
                names.push(n);
            }
            None if names.is_empty() => continue,
            None => break,
        }
    }
    if names.is_empty() {
        return None;
    }
    // Past the handler and the trampoline frame that follows it.
    let mut from = match names.iter().rposition(|n| HANDLER.contains(&n.as_str())) {
        Some(i) => i + 2,
        None => 0,
    };
    while names.get(from).is_some_and(|n| ABORT_PATH.contains(&n.as_str())) {
        from += 1;
    }
    let top: Vec<&str> = names.iter().skip(from).take(FRAMES).map(String::as_str).collect();
    if top.is_empty() {
        return None;
    }
    Some(Site { signature: top.join(" < "), trace })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    /// NFS-Ganesha 6.5's crash handler, as it logged the write list crash in the peer VM.
    const GANESHA: &str = "\
27/11/2026 06:53:33 : epoch 6b0928d7 : rpcrdma-peer : nfs-ganesha-129[svc_18] rpc :TIRPC :EVENT :xdr_rdma_svc_recv() something
27/11/2026 06:53:33 : epoch 6b0928d7 : rpcrdma-peer : nfs-ganesha-129[svc_18] gsh_libunwind :NFS STARTUP :MAJ :BACKTRACE:
 #0 gsh_libunwind + 0x29 [ip=0x7f5a210bb9f9] [sp=0x7f59fb7fbce0]
 #1 crash_handler + 0x18 [ip=0x7f5a2109a728] [sp=0x7f59fb7fc730]
 #2 __sigaction + 0x40 [ip=0x7f5a20ea3050] [sp=0x7f59fb7fc740]
 #3 xdr_rdma_svc_recv + 0x26b [ip=0x7f5a20e4dd1b] [sp=0x7f59fb7fd410]
 #4 svc_rdma_decode + 0x47 [ip=0x7f5a20e4a8d7] [sp=0x7f59fb7fd4e0]
 #5 svc_request + 0x2c [ip=0x7f5a20e3b05c] [sp=0x7f59fb7fd500]
 #6 xdr_rdma_wrap_callback + 0x26 [ip=0x7f5a20e4be56] [sp=0x7f59fb7fd520]
@@GANESHA start up=33.40";

    #[test]
    fn ganesha_libunwind_backtrace_signs_by_the_faulting_frames() {
        let site = crash_site(&lines(GANESHA)).expect("a backtrace");
        assert_eq!(site.signature, "xdr_rdma_svc_recv < svc_rdma_decode < svc_request");
        assert_eq!(site.trace.len(), 7);
        // The same crash in another build: other offsets and addresses, the same signature.
        let other = GANESHA.replace("0x26b", "0x301").replace("0x7f5a", "0x7fcc");
        assert_eq!(crash_site(&lines(&other)).unwrap().signature, site.signature);
        // Another site is another signature.
        let moved = GANESHA.replace("xdr_rdma_svc_recv + ", "xdr_rdma_svc_reply + ");
        assert_eq!(crash_site(&lines(&moved)).unwrap().signature, "xdr_rdma_svc_reply < svc_rdma_decode < svc_request");
    }

    #[test]
    fn an_assertion_is_signed_past_the_abort_path() {
        let log = "x :MAJ :BACKTRACE:\n #0 gsh_libunwind + 0x29 [ip=0x1] [sp=0x2]\n #1 crash_handler + 0x18 [ip=0x1] [sp=0x2]\n #2 killpg + 0x40 [ip=0x1] [sp=0x2]\n #3 __pthread_kill_implementation + 0x11c [ip=0x1] [sp=0x2]\n #4 raise + 0x12 [ip=0x1] [sp=0x2]\n #5 abort + 0xd3 [ip=0x1] [sp=0x2]\n #6 __assert_fail_base + 0x72 [ip=0x1] [sp=0x2]\n #7 __assert_fail + 0x42 [ip=0x1] [sp=0x2]\n #8 xdr_rdma_buf_pool_destroy_locked + 0x1a [ip=0x1] [sp=0x2]\n #9 rdma_destroy_io_bufs + 0x8 [ip=0x1] [sp=0x2]";
        let site = crash_site(&lines(log)).unwrap();
        assert_eq!(site.signature, "xdr_rdma_buf_pool_destroy_locked < rdma_destroy_io_bufs");
    }

    #[test]
    fn gdb_and_glibc_backtraces() {
        let gdb = "Core was generated by `ganesha.nfsd'.\nProgram terminated with signal SIGSEGV, Segmentation fault.\n#0  xdr_rdma_skip_reply_array (p=0x7f4) at /build/src/libntirpc/src/xdr_rdma.c:805\n#1  0x00007f30b88d7d1b in xdr_rdma_svc_recv (cbc=0x5) at /build/src/libntirpc/src/xdr_rdma.c:1555\n#2  0x00007f30b88d48d7 in svc_rdma_decode (req=0x1) at /build/src/libntirpc/src/svc_rdma.c:210\n#3  0x00007f30b88c505c in svc_request (xprt=0x2, xdrs=0x3) at svc_rqst.c:1200\n(gdb) quit";
        assert_eq!(
            crash_site(&lines(gdb)).unwrap().signature,
            "xdr_rdma_skip_reply_array < xdr_rdma_svc_recv < svc_rdma_decode"
        );
        let glibc = "x :MAJ :stack backtrace follows:\n/usr/bin/ganesha.nfsd(gsh_backtrace+0x3e)[0x55e1]\n/usr/bin/ganesha.nfsd(crash_handler+0x18)[0x55e2]\n/lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f01]\n/usr/lib/libntirpc.so.6.3(xdr_rdma_svc_recv+0x26b)[0x7f02]\n/usr/lib/libntirpc.so.6.3(svc_rdma_decode+0x47)[0x7f03]\nnext log line";
        assert_eq!(crash_site(&lines(glibc)).unwrap().signature, "xdr_rdma_svc_recv < svc_rdma_decode");
    }

    #[test]
    fn no_backtrace_no_site() {
        assert_eq!(crash_site(&lines("a line\nanother (with parens) here\n#define X 1")), None);
        assert_eq!(crash_site(&[]), None);
        // A marker with no frames after it.
        assert_eq!(crash_site(&lines("x :MAJ :BACKTRACE:\n@@GANESHA start up=3")), None);
    }
}
