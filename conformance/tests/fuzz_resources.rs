//! The fuzzer and a peer that keeps memory for every connection (issue 26): against the
//! embedded responder behind a fake machine whose memory each connection takes and never
//! gives back (as NFS-Ganesha 6.5's libntirpc keeps 65 MiB pinned per connection), the run
//! reports a `resource-leak` with the numbers, restarts the peer before the machine runs out,
//! and goes on to its message budget; against a peer that gives memory back, nothing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::resources::Sample;
use rpcrdma_conformance::fuzz::{self, Class, Config, Embedded, Ended, Reproducer, Target, Timing};
use rpcrdma_peers::responder::Faults;
use rpcrdma_peers::transport::{Connection, Connector, Result};

const TOTAL_KIB: u64 = 8 * 1024 * 1024;
const BASE_KIB: u64 = 200 * 1024;
const PER_CONNECTION_KIB: u64 = 65 * 1024;

/// Counts the connections opened through it.
struct Counting {
    inner: Embedded,
    connections: Arc<AtomicU64>,
}

impl Connector for Counting {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
        self.connections.fetch_add(1, Ordering::SeqCst);
        self.inner.connector().connect(private_data, deadline)
    }
    fn describe(&self) -> String {
        "counting".into()
    }
    // No ports: the fuzzer connects only to the peer's own address.
    fn port(&self) -> Option<u16> {
        None
    }
    fn connect_at(&mut self, _: u16, _: &[u8], _: Instant) -> Option<Result<Box<dyn Connection>>> {
        None
    }
}

/// The embedded responder on a machine of 8 GiB: each connection pins `per_connection` KiB
/// that only a restart gives back; `ran_out` when the machine would have had none left.
struct Machine {
    conn: Counting,
    per_connection: u64,
    pid: u32,
    restarts: u64,
    ran_out: bool,
    least_available: u64,
}

impl Machine {
    fn new(per_connection: u64) -> Machine {
        Machine {
            conn: Counting { inner: Embedded::new(Faults::default()), connections: Arc::new(AtomicU64::new(0)) },
            per_connection,
            pid: 100,
            restarts: 0,
            ran_out: false,
            least_available: TOTAL_KIB,
        }
    }
    fn held(&self) -> u64 {
        self.conn.connections.load(Ordering::SeqCst) * self.per_connection
    }
}

impl Target for Machine {
    fn connector(&mut self) -> &mut dyn Connector {
        &mut self.conn
    }
    fn restart(&mut self) -> bool {
        self.conn.connections.store(0, Ordering::SeqCst);
        self.pid += 1;
        self.restarts += 1;
        self.conn.inner.restart()
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "leaky machine".into()
    }
    fn resources(&mut self) -> Option<Sample> {
        let used = BASE_KIB + self.held();
        let available = (TOTAL_KIB - TOTAL_KIB / 16).saturating_sub(used);
        self.ran_out |= available == 0;
        self.least_available = self.least_available.min(available);
        Some(Sample {
            pid: self.pid,
            rss_kib: BASE_KIB,
            locked_kib: 0,
            pinned_kib: self.held(),
            available_kib: available,
            total_kib: TOTAL_KIB,
            registered: None,
        })
    }
}

fn config(max_messages: u64) -> Config {
    Config {
        seed: 1,
        duration: Some(Duration::from_secs(120)),
        max_messages: Some(max_messages),
        options: RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() },
        timing: Timing { reply: Duration::from_millis(300) },
        tool_version: "test".into(),
        reuse_connections: true,
        ..Config::default()
    }
}

#[test]
fn a_peer_keeping_memory_per_connection_is_a_finding_and_is_restarted_before_the_machine_runs_out() {
    let mut m = Machine::new(PER_CONNECTION_KIB);
    // Cases go on over one connection while it stays up (fuzz::CASES_PER_CONNECTION at most):
    // the budget that opens the hundred-odd connections that would run the machine out.
    let r = fuzz::run(&mut m, &config(20_000), &AtomicBool::new(false), |_| {});
    assert_eq!(r.ended, Ended::Messages, "the run reached its budget: {:?}", r.ended);
    assert!(!m.ran_out, "the machine ran out of memory (least available {} KiB)", m.least_available);
    let leaks: Vec<_> = r.findings.iter().filter(|f| f.reproducer.kind.class == Class::ResourceLeak).collect();
    assert_eq!(leaks.len(), 1, "{:?}", r.findings.iter().map(|f| f.reproducer.kind.to_string()).collect::<Vec<_>>());
    let leak = &leaks[0].reproducer;
    assert_eq!(leak.kind.to_string(), "resource-leak: VmPin");
    assert!(leak.observed.contains("(65.0 MiB per connection)"), "{}", leak.observed);
    assert!(!leak.observed.contains("VmRSS 200 -> 200 MiB ("), "VmRSS did not grow: {}", leak.observed);
    // Restarted each time the machine fell below a quarter free, never far below it.
    let memory = r.memory.as_ref().expect("the memory was watched");
    assert!(memory.restarts >= 2, "{} restarts", memory.restarts);
    assert!(m.least_available + 4 * PER_CONNECTION_KIB >= TOTAL_KIB / 4, "least available {}", m.least_available);
    assert_eq!(memory.least_available_kib, Some(m.least_available));
    // The reproducer is one bare connection, as a file round trip keeps it.
    assert!(leak.messages.is_empty());
    let json = serde_json::to_value(leak.to_json()).unwrap();
    let back = Reproducer::from_json(&json).unwrap();
    assert_eq!(back.kind, leak.kind);
    // Replayed against the same kind of machine it reproduces; against a sound one it does not.
    let (hit, got, _) =
        fuzz::replay(&mut Machine::new(PER_CONNECTION_KIB), &back, Timing { reply: Duration::from_millis(300) });
    assert!(hit, "{got:?}");
    let (hit, got, _) = fuzz::replay(&mut Machine::new(0), &back, Timing { reply: Duration::from_millis(300) });
    assert!(!hit, "{got:?}");
}

#[test]
fn a_peer_giving_memory_back_is_no_finding_and_is_never_restarted() {
    let mut m = Machine::new(0);
    let r = fuzz::run(&mut m, &config(1500), &AtomicBool::new(false), |_| {});
    assert_eq!(r.ended, Ended::Messages);
    assert!(
        r.findings.is_empty(),
        "{:?}",
        r.findings.iter().map(|f| f.reproducer.kind.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(r.memory.as_ref().unwrap().restarts, 0);
    assert_eq!(m.restarts, 0);
}
