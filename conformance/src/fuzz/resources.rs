//! The peer's resources while it is fuzzed: a peer that keeps memory for every connection
//! after the connection is gone (a leak per connection) is a finding, `resource-leak`, with
//! the numbers; and it is restarted before its machine runs out of memory, so the run goes on.
//!
//! A [`Sample`] is what the peer's machine says of the peer process (`/proc/PID/status`:
//! VmRSS, VmLck, VmPin) and of itself (`/proc/meminfo`: MemAvailable, MemTotal), read after
//! each case, once that case's connection is closed. [`Watch`] judges the samples of one life
//! of the peer (one process id): growth is *sustained* when, over at least
//! [`MIN_CONNECTIONS`] connections, the peer grew by at least [`LEAK_PER_CONNECTION_KIB`] per
//! connection overall and by at least half that rate in each half of them (a one-time
//! allocation at start-up is not a leak). Pinned memory (VmPin: what RDMA registrations hold)
//! is watched beside the resident set because a buffer freed while still registered leaves
//! VmRSS and stays in VmPin.

use std::fmt::Write as _;

/// Connections a life must have had, after its first sample, before growth can be called
/// sustained.
pub const MIN_CONNECTIONS: u64 = 16;
/// Growth per connection (KiB) that counts as a leak: a server that releases what a closed
/// connection used grows by allocator noise, far below a MiB per connection.
pub const LEAK_PER_CONNECTION_KIB: u64 = 1024;
/// Samples kept per life (thinned to every other one past this).
const MAX_SAMPLES: usize = 1024;

/// One reading of the peer process and its machine (sizes in KiB, as `/proc` gives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub pid: u32,
    /// VmRSS: resident memory.
    pub rss_kib: u64,
    /// VmLck: memory locked with mlock().
    pub locked_kib: u64,
    /// VmPin: memory pinned in place by the kernel for the process (RDMA registrations).
    pub pinned_kib: u64,
    /// MemAvailable of the machine.
    pub available_kib: u64,
    /// MemTotal of the machine.
    pub total_kib: u64,
    /// Registered memory the peer itself last reported in its log, in bytes (NFS-Ganesha's
    /// libntirpc logs `total_rdma_reg_mem N` at each registration).
    pub registered: Option<u64>,
}

impl Sample {
    /// The memory the peer holds that a restart would give back: the larger of its resident
    /// and its pinned memory (a pinned page may be resident too).
    pub fn held_kib(&self) -> u64 {
        self.rss_kib.max(self.pinned_kib)
    }

    /// The watched quantities, in a fixed order: (name as `/proc/PID/status` spells it, KiB).
    pub fn metrics(&self) -> [(&'static str, u64); 3] {
        [("VmRSS", self.rss_kib), ("VmPin", self.pinned_kib), ("VmLck", self.locked_kib)]
    }
}

/// VmRSS, VmLck and VmPin (KiB) from the text of `/proc/PID/status`; None when there is no
/// VmRSS (a kernel thread, a process already gone, not a status file). VmLck and VmPin are 0
/// when absent.
pub fn parse_status(text: &str) -> Option<(u64, u64, u64)> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    Some((field("VmRSS")?, field("VmLck").unwrap_or(0), field("VmPin").unwrap_or(0)))
}

/// MemAvailable and MemTotal (KiB) from the text of `/proc/meminfo`.
pub fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    Some((field("MemAvailable")?, field("MemTotal")?))
}

/// The last registered-memory total a peer logged among `lines` (libntirpc:
/// `xdr_rdma_reg_mr: total_rdma_reg_mem N registered, ...`), in bytes.
pub fn registered_total(lines: &[String]) -> Option<u64> {
    lines.iter().rev().find_map(|l| {
        let (_, rest) = l.split_once("total_rdma_reg_mem ")?;
        rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    })
}

/// A sustained growth of the peer, per connection: the finding's numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    pub pid: u32,
    /// Connections closed between `from` and `to`.
    pub connections: u64,
    pub from: Sample,
    pub to: Sample,
    /// The quantities that grew (names as in [`Sample::metrics`]), the most per connection
    /// first.
    pub grew: Vec<&'static str>,
}

impl Leak {
    /// The finding's detail: what grew the most per connection, e.g. `VmPin` (one name, so a
    /// profile can list it whatever else grew in a given run; the numbers of every quantity
    /// are in [`Leak::describe`]).
    pub fn detail(&self) -> String {
        self.grew.first().copied().unwrap_or("").to_string()
    }

    /// The numbers, for the finding's observation.
    pub fn describe(&self) -> String {
        let mib = |k: u64| k as f64 / 1024.0;
        let mut s = format!(
            "the peer process (pid {}) kept memory for every connection after it was closed: over {} connections",
            self.pid, self.connections
        );
        for ((name, a), (_, b)) in self.from.metrics().iter().zip(self.to.metrics()) {
            if self.grew.contains(name) {
                let per = b.saturating_sub(*a) / self.connections.max(1);
                let _ = write!(s, ", {name} {:.0} -> {:.0} MiB ({:.1} MiB per connection)", mib(*a), mib(b), mib(per));
            } else {
                let _ = write!(s, ", {name} {:.0} -> {:.0} MiB", mib(*a), mib(b));
            }
        }
        let _ = write!(
            s,
            "; the machine's MemAvailable {:.0} -> {:.0} MiB of {:.0} MiB",
            mib(self.from.available_kib),
            mib(self.to.available_kib),
            mib(self.to.total_kib)
        );
        match (self.from.registered, self.to.registered) {
            (Some(a), Some(b)) => {
                let _ = write!(s, "; the peer logged total_rdma_reg_mem {a} -> {b} bytes");
            }
            (None, Some(b)) => {
                let _ = write!(s, "; the peer logged total_rdma_reg_mem {b} bytes");
            }
            _ => {}
        }
        s
    }
}

/// The judge of one peer's samples across its lives, and when to restart it.
#[derive(Debug, Clone)]
pub struct Watch {
    /// Restart the peer when MemAvailable is below this percentage of MemTotal.
    pub floor_percent: u64,
    life: Vec<(u64, Sample)>,
    connections: u64,
    reported: bool,
    /// The latest sample.
    pub last: Option<Sample>,
    /// A leak seen and not yet taken ([`Watch::take_leak`]).
    pending: Option<Leak>,
    /// Restarts done because the machine was running out of memory.
    pub restarts: u64,
    /// The least MemAvailable seen, and the most the peer held (KiB).
    pub least_available_kib: Option<u64>,
    pub most_held_kib: u64,
    /// Times memory was low while the peer held too little for a restart to help.
    pub low_not_peer: u64,
    registered: Option<u64>,
}

impl Watch {
    pub fn new(floor_percent: u64) -> Watch {
        Watch {
            floor_percent,
            life: Vec::new(),
            connections: 0,
            reported: false,
            last: None,
            pending: None,
            restarts: 0,
            least_available_kib: None,
            most_held_kib: 0,
            low_not_peer: 0,
            registered: None,
        }
    }

    /// Notes what the peer logged: the registered total it reports, if it does.
    pub fn peer_logged(&mut self, lines: &[String]) {
        if let Some(r) = registered_total(lines) {
            self.registered = Some(r);
        }
    }

    /// Takes a sample read after `connections` more connections were opened and closed.
    /// A new process id starts a new life.
    pub fn observe(&mut self, mut s: Sample, connections: u64) {
        if self.life.first().is_some_and(|(_, f)| f.pid != s.pid) {
            // What the new process logged before this sample is its own.
            let logged = self.registered;
            self.new_life();
            self.registered = logged;
        }
        s.registered = self.registered;
        self.least_available_kib = Some(self.least_available_kib.map_or(s.available_kib, |a| a.min(s.available_kib)));
        self.most_held_kib = self.most_held_kib.max(s.held_kib());
        self.last = Some(s);
        if self.life.is_empty() {
            self.life.push((0, s));
            return;
        }
        self.connections += connections;
        self.life.push((self.connections, s));
        if self.life.len() > MAX_SAMPLES {
            // Keep the first and every other one after it.
            let mut i = 0;
            self.life.retain(|_| {
                i += 1;
                i == 1 || i % 2 == 0
            });
        }
        if !self.reported {
            if let Some(leak) = self.sustained() {
                self.reported = true;
                self.pending = Some(leak);
            }
        }
    }

    /// The peer was restarted: its next sample starts a new life (its process id may be reused).
    pub fn new_life(&mut self) {
        self.life.clear();
        self.connections = 0;
        self.reported = false;
        self.registered = None;
    }

    /// A restart because the machine ran low: counted, and a new life.
    pub fn restarted_for_memory(&mut self) {
        self.restarts += 1;
        self.new_life();
        self.last = None;
    }

    /// The leak found since the last call, if any.
    pub fn take_leak(&mut self) -> Option<Leak> {
        self.pending.take()
    }

    /// Whether the peer should be restarted before the next connection: the machine's
    /// MemAvailable is below the floor and the peer holds at least an eighth of its memory
    /// (else a restart would not help; counted in `low_not_peer`).
    pub fn must_restart(&mut self) -> bool {
        let Some(s) = self.last else { return false };
        if s.total_kib == 0 || s.available_kib.saturating_mul(100) >= s.total_kib.saturating_mul(self.floor_percent) {
            return false;
        }
        if s.held_kib() >= s.total_kib / 8 {
            true
        } else {
            self.low_not_peer += 1;
            false
        }
    }

    /// Growth sustained over this life, per the module's rule.
    fn sustained(&self) -> Option<Leak> {
        let (_, first) = *self.life.first()?;
        let &(n, last) = self.life.last()?;
        if n < MIN_CONNECTIONS {
            return None;
        }
        let &(m, mid) = self.life.iter().find(|(c, _)| *c >= n / 2)?;
        let grows = |i: usize| {
            let (a, b, c) = (first.metrics()[i].1, mid.metrics()[i].1, last.metrics()[i].1);
            let overall = c.saturating_sub(a) >= LEAK_PER_CONNECTION_KIB * n;
            let halves = b.saturating_sub(a) * 2 >= LEAK_PER_CONNECTION_KIB * m
                && c.saturating_sub(b) * 2 >= LEAK_PER_CONNECTION_KIB * (n - m);
            overall && halves && m > 0 && n > m
        };
        let mut grew: Vec<usize> = (0..3).filter(|&i| grows(i)).collect();
        if grew.is_empty() {
            return None;
        }
        let growth = |i: usize| last.metrics()[i].1.saturating_sub(first.metrics()[i].1);
        grew.sort_by_key(|&i| std::cmp::Reverse(growth(i)));
        let grew = grew.into_iter().map(|i| first.metrics()[i].0).collect();
        Some(Leak { pid: last.pid, connections: n, from: first, to: last, grew })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024 * 1024;

    fn sample(pid: u32, rss: u64, pinned: u64, available: u64) -> Sample {
        Sample {
            pid,
            rss_kib: rss,
            locked_kib: 0,
            pinned_kib: pinned,
            available_kib: available,
            total_kib: 8 * GIB,
            registered: None,
        }
    }

    #[test]
    fn status_and_meminfo_are_read_in_kib() {
        let status = "Name:\tganesha.nfsd\nVmPeak:\t 1035668 kB\nVmLck:\t       0 kB\nVmPin:\t 6656000 kB\nVmRSS:\t  228768 kB\n";
        assert_eq!(parse_status(status), Some((228768, 0, 6656000)));
        // A kernel thread has no VmRSS.
        assert_eq!(parse_status("Name:\tkthreadd\nState:\tS (sleeping)\n"), None);
        // VmRSSx is not VmRSS.
        assert_eq!(parse_status("VmRSSx:\t5 kB\n"), None);
        let meminfo = "MemTotal:        8131244 kB\nMemFree:          131244 kB\nMemAvailable:     612345 kB\n";
        assert_eq!(parse_meminfo(meminfo), Some((612345, 8131244)));
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn the_last_registered_total_the_peer_logged() {
        let lines: Vec<String> = [
            "27/11/2026 06:55:51 : epoch 6b092964 : rpcrdma-peer : nfs-ganesha-403[svc_7] rpc :TIRPC :EVENT :xdr_rdma_reg_mr: total_rdma_reg_mem 1442316288 registered, registering for xprt 0x7f mr 0x7f buffer_aligned 0x7f buffer_total 524288",
            "unrelated line",
            "xdr_rdma_reg_mr: total_rdma_reg_mem 1510473728 registered, registering for xprt 0x7f",
            "no number: total_rdma_reg_mem registered",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(registered_total(&lines), Some(1510473728));
        assert_eq!(registered_total(&lines[1..2]), None);
    }

    /// NFS-Ganesha's numbers: 65 MiB pinned per connection, never released.
    #[test]
    fn growth_per_connection_is_a_leak_once_sustained() {
        let mut w = Watch::new(25);
        let per = 66560; // KiB
        for i in 0..MIN_CONNECTIONS {
            w.observe(sample(40, 200_000, 100_000 + i * per, 7 * GIB - i * per), 1);
            assert!(w.take_leak().is_none(), "after {i} connections");
        }
        w.observe(sample(40, 200_000, 100_000 + MIN_CONNECTIONS * per, 7 * GIB - MIN_CONNECTIONS * per), 1);
        let leak = w.take_leak().expect("a leak after 16 connections of 65 MiB each");
        assert_eq!(leak.detail(), "VmPin");
        assert_eq!(leak.connections, MIN_CONNECTIONS);
        let text = leak.describe();
        assert!(text.contains("VmPin 98 -> 1138 MiB (65.0 MiB per connection)"), "{text}");
        assert!(text.contains("over 16 connections"), "{text}");
        // Reported once per life.
        w.observe(sample(40, 200_000, 100_000 + 40 * per, GIB), 1);
        assert!(w.take_leak().is_none());
        // A new life (a new process) is judged afresh.
        for i in 0..=MIN_CONNECTIONS {
            w.observe(sample(41, 200_000 + i * per, 0, 7 * GIB), 1);
        }
        assert_eq!(w.take_leak().map(|l| l.detail()), Some("VmRSS".to_string()));
        // Both grow (NFS-Ganesha's data buffers are resident too): the detail names the larger.
        let mut w = Watch::new(25);
        for i in 0..=MIN_CONNECTIONS {
            w.observe(sample(50, 100_000 + i * 20_000, i * per, 6 * GIB), 1);
        }
        let leak = w.take_leak().unwrap();
        assert_eq!(leak.grew, ["VmPin", "VmRSS"]);
        assert_eq!(leak.detail(), "VmPin");
        assert!(leak.describe().contains("VmRSS 98 -> 410 MiB (19.5 MiB per connection)"), "{}", leak.describe());
    }

    #[test]
    fn a_one_time_allocation_or_noise_is_not_a_leak() {
        let mut w = Watch::new(25);
        // 900 MiB at the first connections, then flat but for a few KiB of noise.
        for i in 0..200u64 {
            let rss = if i < 3 { 100_000 + i * 300_000 } else { 1_000_000 + (i % 7) * 50 };
            w.observe(sample(7, rss, 0, 6 * GIB), 1);
        }
        assert!(w.take_leak().is_none());
        // Growth just under a MiB per connection is not one either.
        let mut w = Watch::new(25);
        for i in 0..100u64 {
            w.observe(sample(8, 100_000 + i * (LEAK_PER_CONNECTION_KIB - 100), 0, 6 * GIB), 1);
        }
        assert!(w.take_leak().is_none());
        // Growth only in the second half (a peer that started leaking late) is not yet
        // sustained over the whole window.
        let mut w = Watch::new(25);
        for i in 0..=MIN_CONNECTIONS {
            let rss = if i <= MIN_CONNECTIONS / 2 { 100_000 } else { 100_000 + (i - 8) * 4 * LEAK_PER_CONNECTION_KIB };
            w.observe(sample(9, rss, 0, 6 * GIB), 1);
        }
        assert!(w.take_leak().is_none());
    }

    #[test]
    fn restart_only_when_memory_is_low_and_the_peer_holds_it() {
        let mut w = Watch::new(25);
        assert!(!w.must_restart(), "no sample yet");
        w.observe(sample(3, 200_000, 6 * GIB, 3 * GIB), 1);
        assert!(!w.must_restart(), "3 of 8 GiB available is above a 25% floor");
        w.observe(sample(3, 200_000, 6 * GIB, 2 * GIB - 1), 1);
        assert!(w.must_restart(), "below 2 GiB with the peer holding 6 GiB pinned");
        w.restarted_for_memory();
        assert_eq!(w.restarts, 1);
        assert!(!w.must_restart(), "nothing known of the new life yet");
        // Low, but the peer holds little: restarting it would not help.
        w.observe(sample(4, 300_000, 0, GIB), 1);
        assert!(!w.must_restart());
        assert_eq!(w.low_not_peer, 1);
        assert_eq!(w.least_available_kib, Some(GIB));
        assert_eq!(w.most_held_kib, 6 * GIB);
    }
}
