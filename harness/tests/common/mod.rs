//! Running the binary as a user would, with what assert_cmd does not give: the child's peak
//! memory (wait4's rusage), a deadline, a standard output whose reader has gone away, and
//! real signals.

#![allow(dead_code)]

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test: `RPCRDMA_HARNESS_BIN` when set (to run these tests against another
/// build, e.g. an older one, and see them fail), else the one cargo built.
pub fn bin() -> PathBuf {
    std::env::var_os("RPCRDMA_HARNESS_BIN")
        .map_or_else(|| assert_cmd::cargo::cargo_bin("rpcrdma-harness"), PathBuf::from)
}

/// An assert_cmd command for the binary under test.
pub fn harness() -> assert_cmd::Command {
    assert_cmd::Command::new(bin())
}

pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Exit(i32),
    Signal(i32),
    /// Still running at the deadline (then killed).
    TimedOut,
}

#[derive(Debug)]
pub struct Finished {
    pub end: End,
    /// Peak resident set size in KiB (ru_maxrss).
    pub max_rss_kib: i64,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Finished {
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        match self.end {
            End::Exit(c) => Some(c),
            _ => None,
        }
    }
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Waits for `child` with wait4 (its rusage, which `Child::wait` drops), killing it at `limit`.
pub fn wait(mut child: Child, limit: Duration) -> Finished {
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    let (status, usage) = loop {
        let mut status = 0;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if Instant::now() > deadline && !timed_out {
            timed_out = true;
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The child is reaped: keep std from waiting for it again.
    std::mem::forget(child);
    let end = if timed_out {
        End::TimedOut
    } else if libc::WIFEXITED(status) {
        End::Exit(libc::WEXITSTATUS(status))
    } else {
        End::Signal(libc::WTERMSIG(status))
    };
    Finished {
        end,
        max_rss_kib: usage.ru_maxrss,
        stdout: out.map(|h| h.join().unwrap()).unwrap_or_default(),
        stderr: err.map(|h| h.join().unwrap()).unwrap_or_default(),
    }
}

/// Runs the harness with `args`, standard input from `stdin` (a path) or empty.
pub fn run(args: &[&str], stdin: Option<&Path>, limit: Duration) -> Finished {
    let child = Command::new(bin())
        .args(args)
        .stdin(match stdin {
            Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, limit)
}

/// A pipe whose read end is already closed: every write to the other end fails with EPIPE.
pub fn reader_gone() -> Stdio {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[0]) };
    Stdio::from(unsafe { OwnedFd::from_raw_fd(fds[1]) })
}

/// Runs the harness with standard output into a pipe nobody reads.
pub fn run_into_closed_pipe(args: &[&str], dir: &Path) -> Finished {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(reader_gone())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, Duration::from_secs(60))
}

/// Asserts the child neither panicked nor died of a signal.
pub fn assert_no_crash(f: &Finished, what: &str) {
    assert!(!matches!(f.end, End::Signal(_) | End::TimedOut), "{what}: {:?}\n{}", f.end, f.stderr());
    assert_ne!(f.code(), Some(101), "{what}: panicked\n{}", f.stderr());
    assert!(!f.stderr().contains("panicked"), "{what}: {}", f.stderr());
}
