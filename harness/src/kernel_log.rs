//! Following a kernel log as it grows: `/dev/kmsg` on the peer's machine (the harness runs
//! beside the Linux peer in the VM), or any text file another process appends to; or a plain
//! log file, such as a user-space server's (`run --peer-log`), its lines kept as they are.
//! Only what is logged after it is opened is read. The judging of the lines is
//! `rpcrdma_conformance::fuzz::kernel_log`.

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines kept between two drains; older ones are dropped (a flood must not grow memory).
const MAX_PENDING: usize = 4096;

/// A kernel log followed by a background thread.
#[derive(Debug, Clone)]
pub struct KernelLog {
    /// Each line with when it was read.
    pending: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl KernelLog {
    /// Opens `path` at its end and follows it.
    pub fn follow(path: &Path) -> std::io::Result<KernelLog> {
        Self::open(path, true)
    }

    /// Opens a plain log file at its end and follows it: every line kept as it is.
    pub fn follow_plain(path: &Path) -> std::io::Result<KernelLog> {
        Self::open(path, false)
    }

    fn open(path: &Path, kmsg: bool) -> std::io::Result<KernelLog> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::End(0))?;
        let pending = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&pending);
        std::thread::Builder::new().name("log-follower".into()).spawn(move || follow(file, &sink, kmsg))?;
        Ok(KernelLog { pending })
    }

    /// The lines logged since the last drain. It waits a moment first, so a report the case
    /// provoked is not left for the next case.
    pub fn drain(&self) -> Vec<String> {
        self.drain_timed().into_iter().map(|(_, l)| l).collect()
    }

    /// As [`KernelLog::drain`], each line with when it was read.
    pub fn drain_timed(&self) -> Vec<(Instant, String)> {
        std::thread::sleep(Duration::from_millis(10));
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn follow(mut file: File, sink: &Mutex<Vec<(Instant, String)>>, kmsg: bool) {
    // A /dev/kmsg read returns one whole record and needs room for it (at most 8 KiB).
    let mut buf = vec![0u8; 8192];
    let mut partial = String::new();
    loop {
        match file.read(&mut buf) {
            // End of a regular file: wait for more.
            Ok(0) => std::thread::sleep(Duration::from_millis(20)),
            Ok(n) => {
                partial.push_str(&String::from_utf8_lossy(&buf[..n]));
                while let Some(end) = partial.find('\n') {
                    let line: String = partial.drain(..=end).collect();
                    let line = line.trim_end_matches(['\n', '\r']);
                    if let Some(text) = if kmsg { message(line) } else { Some(line) } {
                        let mut p = sink.lock().unwrap_or_else(|e| e.into_inner());
                        if p.len() >= MAX_PENDING {
                            p.remove(0);
                        }
                        p.push((Instant::now(), text.to_string()));
                    }
                }
            }
            // /dev/kmsg: records were overwritten before we read them; go on with the next.
            Err(e) if e.kind() == ErrorKind::BrokenPipe || e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// A log read only when asked, without a thread or a wait (the fuzzer's, after each case):
/// whatever the kernel (or the writer of a plain file) has stored by then is read.
#[derive(Debug)]
pub struct PolledLog {
    file: File,
    kmsg: bool,
    partial: String,
}

impl PolledLog {
    /// Opens `path` (`/dev/kmsg` or a file another process appends to) at its end, its
    /// records read as [`KernelLog::follow`] reads them.
    pub fn open(path: &Path) -> std::io::Result<PolledLog> {
        Self::opened(path, true)
    }

    /// Opens a plain log file at its end: every line kept as it is.
    pub fn open_plain(path: &Path) -> std::io::Result<PolledLog> {
        Self::opened(path, false)
    }

    fn opened(path: &Path, kmsg: bool) -> std::io::Result<PolledLog> {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: a read of /dev/kmsg with no record left fails with EAGAIN at once.
        let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
        file.seek(SeekFrom::End(0))?;
        Ok(PolledLog { file, kmsg, partial: String::new() })
    }

    /// The whole lines stored since the last call, read now, without waiting.
    pub fn drain_now(&mut self) -> Vec<String> {
        let mut buf = vec![0u8; 8192];
        let mut out = Vec::new();
        loop {
            match self.file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.partial.push_str(&String::from_utf8_lossy(&buf[..n]));
                    while let Some(end) = self.partial.find('\n') {
                        let line: String = self.partial.drain(..=end).collect();
                        let line = line.trim_end_matches(['\n', '\r']);
                        if let Some(text) = if self.kmsg { message(line) } else { Some(line) } {
                            out.push(text.to_string());
                        }
                    }
                }
                // /dev/kmsg: records were overwritten before we read them; go on with the next.
                Err(e) if e.kind() == ErrorKind::BrokenPipe || e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            if out.len() > MAX_PENDING {
                out.drain(..out.len() - MAX_PENDING);
            }
        }
        out
    }
}

/// The message of one line: a `/dev/kmsg` record loses its `level,seq,time,flags;` prefix,
/// and its dictionary lines (` SUBSYSTEM=...`) are dropped; any other line is as it is.
fn message(line: &str) -> Option<&str> {
    if line.starts_with(' ') && line.contains('=') {
        return None;
    }
    match line.split_once(';') {
        Some((prefix, text))
            if prefix.split(',').count() >= 4
                && prefix.split(',').take(3).all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())) =>
        {
            Some(text)
        }
        _ => Some(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmsg_records_lose_their_prefix_and_dictionary() {
        assert_eq!(
            message("4,1520,86412345,-;WARNING: CPU: 0 PID: 1 at a.c:1 f"),
            Some("WARNING: CPU: 0 PID: 1 at a.c:1 f")
        );
        assert_eq!(message("6,7,8,c,more;text; with semicolons"), Some("text; with semicolons"));
        assert_eq!(message(" SUBSYSTEM=infiniband"), None);
        assert_eq!(message("plain line; not a record"), Some("plain line; not a record"));
    }

    #[test]
    fn only_what_is_appended_after_opening_is_read() {
        let dir = std::env::temp_dir().join(format!("rpcrdma-klog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        std::fs::write(&path, "old line\n").unwrap();
        let log = KernelLog::follow(&path).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, b"new one\nnew two\npart").unwrap();
        let mut got = Vec::new();
        for _ in 0..200 {
            got.extend(log.drain());
            if got.len() >= 2 {
                break;
            }
        }
        assert_eq!(got, ["new one", "new two"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_polled_log_gives_what_is_stored_at_once_and_keeps_a_partial_line() {
        let dir = std::env::temp_dir().join(format!("rpcrdma-polled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        std::fs::write(&path, "4,1,2,-;old line\n").unwrap();
        let mut log = PolledLog::open(&path).unwrap();
        assert!(log.drain_now().is_empty());
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, b"4,2,3,-;WARNING: one\n SUBSYSTEM=x\nplain two\npart").unwrap();
        assert_eq!(log.drain_now(), ["WARNING: one", "plain two"]);
        std::io::Write::write_all(&mut f, b"ial\n").unwrap();
        assert_eq!(log.drain_now(), ["partial"]);
        let mut plain = PolledLog::open_plain(&path).unwrap();
        std::io::Write::write_all(&mut f, b"4,3,4,-;kept whole\n").unwrap();
        assert_eq!(plain.drain_now(), ["4,3,4,-;kept whole"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
