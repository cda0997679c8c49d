//! The fuzzer against the embedded reference responder over the emulated fabric: from a fixed
//! seed and within a bounded number of messages it finds each crash-like fault switched on,
//! minimises it to one or two messages, and the reproducer replays against the faulty
//! responder and not against the faithful one; against the faithful responder it finds
//! nothing.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_codec::v1::Message;
use rpcrdma_codec::Profile;
use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::{self, Class, Config, Embedded, Finding, Reproducer, Target, Timing};
use rpcrdma_peers::responder::{faults, Faults};
use rpcrdma_peers::transport::Connector;

fn config(seed: u64, max_messages: u64, reply: Duration) -> Config {
    Config {
        seed,
        duration: Some(Duration::from_secs(120)),
        max_messages: Some(max_messages),
        options: RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() },
        timing: Timing { reply },
        minimise_budget: 200,
        minimise_time: Duration::from_secs(60),
        tool_version: "test".into(),
        stop_after_findings: Some(1),
        reuse_connections: true,
        ..Config::default()
    }
}

fn summary(r: &fuzz::Report) -> String {
    let f: Vec<String> = r
        .findings
        .iter()
        .map(|f| format!("  {} after {} messages: {}", f.reproducer.kind, f.after_messages, f.reproducer.observed))
        .collect();
    format!(
        "{} messages, {} cases, outcomes {:?}, classes {:?}\n{}",
        r.messages,
        r.cases,
        r.outcomes,
        r.classes,
        f.join("\n")
    )
}

#[test]
fn finds_nothing_against_the_faithful_responder() {
    let mut t = Embedded::new(Faults::default());
    let mut c = config(1, 1500, Duration::from_millis(300));
    c.stop_after_findings = None;
    let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert!(r.findings.is_empty(), "false findings: {}", summary(&r));
    assert!(r.messages >= 1500 && r.cases > 300, "{}", summary(&r));
    // It did explore: the malformed inputs cost connections, and many reply shapes were seen.
    assert!(r.outcomes["disconnected"] > 0, "{}", summary(&r));
    assert!(r.signatures > 20 && r.corpus > 20, "{} signatures, corpus {}", r.signatures, r.corpus);
}

/// The message as a peer would see it, with made-up registered coordinates.
fn decoded(r: &Reproducer, i: usize) -> Vec<u8> {
    let w = &r.messages[i];
    let bound: Vec<(u32, u64)> = (0..w.regions.len()).map(|k| (0x100 + k as u32, 0x10_0000 * (k as u64 + 1))).collect();
    w.bind(&bound)
}

/// Fuzzes the responder with `fault` on from `seed` until the first finding, which must be
/// of `class` and found within `budget` messages; its reproducer (through JSON, as in a file)
/// must replay against that responder and not against the faithful one.
fn finds(fault: &str, seed: u64, budget: u64, class: Class, reply: Duration) -> Finding {
    let mut t = Embedded::new(Faults::only(fault));
    let r = fuzz::run(&mut t, &config(seed, budget, reply), &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{fault}: {}", summary(&r));
    let f = r.findings[0].clone();
    assert_eq!(f.reproducer.kind.class, class, "{fault}: {}", summary(&r));
    assert!(f.after_messages <= budget);
    assert!(f.minimised, "{fault}: the minimised case was not confirmed");
    let json = serde_json::to_string(&f.reproducer.to_json()).unwrap();
    let back = Reproducer::from_json(&serde_json::from_str(&json).unwrap()).unwrap();
    let timing = Timing { reply };
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::only(fault)), &back, timing);
    assert!(hit, "{fault}: replay against the faulty responder found {got:?}");
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::default()), &back, timing);
    assert!(!hit && got.is_none(), "{fault}: replay against the faithful responder found {got:?}");
    f
}

fn v1(bytes: &[u8]) -> Message<'_> {
    Message::decode(bytes, &Profile::default()).expect("the minimised message decodes")
}

#[test]
fn finds_a_crash_on_many_write_chunks() {
    let f = finds("crash-on-many-write-chunks", 2, 2000, Class::Crash, Duration::from_millis(300));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), 1, "{r:?}");
    let b = decoded(r, 0);
    let m = v1(&b);
    let writes = m.header.body.chunks().unwrap().writes;
    // One chunk more than the fault tolerates, and nothing else left to remove.
    assert_eq!(writes.len(), faults::CRASH_WRITE_CHUNKS + 1);
    assert!(writes.chunks().all(|c| c.segment_count() == 0), "segments left: {b:02x?}");
}

#[test]
fn finds_a_crash_on_a_far_read_position() {
    let f = finds("crash-on-far-read-position", 1, 2000, Class::Crash, Duration::from_millis(300));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), 1);
    let b = decoded(r, 0);
    let m = v1(&b);
    let reads: Vec<_> = m.header.body.chunks().unwrap().reads.segments().collect();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads[0].position > faults::CRASH_READ_POSITION, "{reads:?}");
}

#[test]
fn finds_a_crash_on_a_huge_segment_count() {
    let f = finds("crash-on-huge-segment-count", 1, 2000, Class::Crash, Duration::from_millis(300));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), 1);
    let b = decoded(r, 0);
    // The message does not decode (the count promises more than follows), so read the
    // write list by hand: the read list empty (the minimiser removes it), the write list
    // present, its first chunk's count past the fault's limit.
    let word = |at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    assert!(Message::decode(&b, &Profile::default()).is_err());
    assert_eq!((word(16), word(20)), (0, 1), "{b:02x?}");
    assert!(word(24) > faults::CRASH_SEGMENT_COUNT, "{b:02x?}");
}

#[test]
fn finds_a_write_past_the_segment() {
    let f = finds("write-past-segment", 1, 2000, Class::OobWrite, Duration::from_millis(300));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), 1);
    let b = decoded(r, 0);
    let m = v1(&b);
    let writes: Vec<Vec<_>> = m.header.body.chunks().unwrap().writes.chunks().map(|c| c.segments().collect()).collect();
    assert_eq!(writes.len(), 3, "{writes:?}");
    // The fault writes past the third chunk's first segment: that segment must remain.
    assert_eq!(writes[2].len(), 1, "{writes:?}");
    assert!(r.observed.contains("changed outside the advertised segments"), "{}", r.observed);
}

#[test]
fn finds_a_read_past_a_segment() {
    // An existing (not crash-like) fault: reads rounded up to four bytes, past the segment.
    let f = finds("read-chunk-roundup", 1, 2000, Class::OobRead, Duration::from_millis(300));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), 1);
    let b = decoded(r, 0);
    let m = v1(&b);
    let reads: Vec<_> = m.header.body.chunks().unwrap().reads.segments().collect();
    // Only a read whose length is no multiple of four can be rounded up past its end.
    assert!(reads.iter().any(|s| s.target.length % 4 != 0), "{reads:?}");
    assert!(r.observed.contains("read outside the advertised segments"), "{}", r.observed);
}

#[test]
fn finds_a_hang_on_a_zero_credit_pair() {
    let f = finds("hang-on-zero-credit-pair", 2, 2000, Class::Hang, Duration::from_millis(250));
    let r = &f.reproducer;
    assert_eq!(r.messages.len(), faults::HANG_ZERO_CREDIT_RUN as usize, "{r:?}");
    for i in 0..r.messages.len() {
        let b = decoded(r, i);
        assert_eq!(&b[8..12], &[0, 0, 0, 0], "message {i}: rdma_credit");
    }
}

/// A peer nobody listens for.
struct Nobody;

impl Connector for Nobody {
    fn connect(
        &mut self,
        _pd: &[u8],
        _deadline: std::time::Instant,
    ) -> Result<Box<dyn rpcrdma_peers::transport::Connection>, rpcrdma_peers::transport::TransportError> {
        Err(rpcrdma_peers::transport::TransportError::Unreachable("nobody listens".into()))
    }
    fn describe(&self) -> String {
        "nobody".into()
    }
    fn port(&self) -> Option<u16> {
        None
    }
    fn connect_at(
        &mut self,
        _: u16,
        _: &[u8],
        _: std::time::Instant,
    ) -> Option<Result<Box<dyn rpcrdma_peers::transport::Connection>, rpcrdma_peers::transport::TransportError>> {
        None
    }
}

impl Target for Nobody {
    fn connector(&mut self) -> &mut dyn Connector {
        self
    }
    fn restart(&mut self) -> bool {
        false
    }
    fn can_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "nobody".into()
    }
}

#[test]
fn an_unreachable_peer_ends_the_run_before_any_case() {
    let r = fuzz::run(&mut Nobody, &config(1, 100, Duration::from_millis(100)), &AtomicBool::new(false), |_| {});
    assert_eq!(r.ended, fuzz::Ended::Unreachable);
    assert_eq!((r.cases, r.messages, r.findings.len()), (0, 0, 0));
}

/// The embedded responder as if it were remote: it cannot be restarted.
struct Unrestartable(Embedded);

impl Target for Unrestartable {
    fn connector(&mut self) -> &mut dyn Connector {
        self.0.connector()
    }
    fn restart(&mut self) -> bool {
        false
    }
    fn can_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "unrestartable".into()
    }
}

#[test]
fn a_crash_ends_the_run_when_the_peer_cannot_be_restarted() {
    let mut t = Unrestartable(Embedded::new(Faults::only("crash-on-many-write-chunks")));
    let mut c = config(2, 2000, Duration::from_millis(300));
    c.stop_after_findings = None;
    let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert_eq!(r.ended, fuzz::Ended::PeerDown, "{}", summary(&r));
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    let f = &r.findings[0];
    assert_eq!(f.reproducer.kind.class, Class::Crash);
    // Not minimised (no fresh peer per trial): the case as it was sent.
    assert!(!f.minimised);
    let n = f.reproducer.messages.len();
    assert!(n >= 1 && n <= f.reproducer.original_messages, "{n} of {}", f.reproducer.original_messages);
    assert!(r.messages < 2000, "the run stopped at the crash");
}

/// Without `reuse_connections` (`fuzz --fresh-connections`) every case has a connection of its
/// own and a NULL after it: nothing goes on across cases.
#[test]
fn without_reuse_every_case_opens_its_own_connection_and_is_probed_by_a_null() {
    let mut c = config(7, 120, Duration::from_millis(300));
    (c.stop_after_findings, c.reuse_connections) = (None, false);
    let r = fuzz::run(&mut Embedded::new(Faults::default()), &c, &AtomicBool::new(false), |_| {});
    assert!(r.cases > 20, "{}", summary(&r));
    assert_eq!((r.reused, r.own_probes), (0, 0), "{}", summary(&r));
    assert!(r.connections >= r.cases, "{} connections for {} cases", r.connections, r.cases);
    // The same seed with reuse: connections go on across cases.
    c.reuse_connections = true;
    let r = fuzz::run(&mut Embedded::new(Faults::default()), &c, &AtomicBool::new(false), |_| {});
    assert!(r.reused > 0 && r.connections < r.cases, "{}", summary(&r));
}

/// Cases go on over one connection while the peer keeps it healthy, and a seed and a case
/// number still name what was sent: a run resumed with `skip_cases` (no feedback) sends, case
/// for case, the same messages as the run it resumes, its first case on a fresh connection.
#[test]
fn a_resumed_run_sends_the_same_cases_though_connections_went_on_across_cases() {
    let dir = std::env::temp_dir().join(format!("rpcrdma-fuzz-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let journal = |name: &str| {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        (path.clone(), std::sync::Arc::new(fuzz::Journal::open(&path).unwrap()))
    };
    let run = |skip: u64, budget: u64, j: std::sync::Arc<fuzz::Journal>| {
        let mut c = config(7, budget, Duration::from_millis(300));
        (c.stop_after_findings, c.feedback, c.skip_cases, c.journal) = (None, false, skip, Some(j));
        fuzz::run(&mut Embedded::new(Faults::default()), &c, &AtomicBool::new(false), |_| {})
    };
    // Each case's line: its number, its messages, the cases before it on its connection.
    let cases = |path: &std::path::Path| -> Vec<(u64, serde_json::Value, Vec<u64>)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["journal"]["sent"].as_str().is_some_and(|s| s.starts_with("case ")))
            .map(|v| {
                let after = v["journal"]["after"]
                    .as_array()
                    .map_or(Vec::new(), |a| a.iter().map(|n| n.as_u64().unwrap()).collect());
                (v["case"].as_u64().unwrap(), v["messages"].clone(), after)
            })
            .collect()
    };
    let (whole_path, whole_journal) = journal("whole");
    let whole = run(0, 120, whole_journal);
    assert!(whole.reused * 2 > whole.cases, "most cases went on over a kept connection: {}", summary(&whole));
    assert!(whole.connections < whole.cases, "{} connections for {} cases", whole.connections, whole.cases);
    let whole = cases(&whole_path);
    // The case resumed from went on over the connection of the cases before it.
    let from = whole.iter().find(|(n, _, after)| *n > 5 && !after.is_empty()).expect("a reused case").0;
    let (resumed_path, resumed_journal) = journal("resumed");
    let resumed = run(from - 1, 40, resumed_journal);
    assert_eq!(resumed.skipped, from - 1);
    let resumed = cases(&resumed_path);
    assert!(resumed.len() > 5, "{} cases", resumed.len());
    assert_eq!(resumed[0].0, from);
    assert!(resumed[0].2.is_empty(), "the first resumed case opens a fresh connection: {:?}", resumed[0].2);
    for (n, messages, _) in &resumed {
        let Some((_, before, _)) = whole.iter().find(|(m, _, _)| m == n) else { break };
        assert_eq!(messages, before, "case {n} differs when resumed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A finding that needs the cases before it on its connection: the zero-credit hang takes
/// two zero-credit messages in a row, and the run sent them in two cases one after the other.
/// On a peer that cannot be restarted (no trials) the reproducer carries the case before; it
/// replays against the faulty responder, not against the faithful one, and not without it.
#[test]
fn a_finding_that_needs_the_cases_before_it_replays_with_them() {
    let fault = "hang-on-zero-credit-pair";
    let mut t = Unrestartable(Embedded::new(Faults::only(fault)));
    let r = fuzz::run(&mut t, &config(2, 2000, Duration::from_millis(250)), &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    let repro = &r.findings[0].reproducer;
    assert_eq!(repro.kind.class, Class::Hang, "{}", summary(&r));
    assert!(!repro.preceding.is_empty(), "found within one case: {repro:?}");
    let back = Reproducer::from_json(&serde_json::from_str(&repro.to_json().to_string()).unwrap()).unwrap();
    assert_eq!(&back, repro);
    let timing = Timing { reply: Duration::from_millis(250) };
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::only(fault)), &back, timing);
    assert!(hit, "replay against the faulty responder found {got:?}");
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::default()), &back, timing);
    assert!(!hit && got.is_none(), "replay against the faithful responder found {got:?}");
    let alone = Reproducer { preceding: Vec::new(), ..back };
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::only(fault)), &alone, timing);
    assert!(!hit, "the case alone shows it ({got:?}): this test needs a finding that takes the case before");
}

/// A reproducer says how the run that found it probed liveness (`reuse_connections`), and
/// replay probes so even when the finding shows alone on a fresh connection: by the reply to
/// the case's own last call (a well-formed NULL here), not by a NULL of replay's own; a
/// reproducer from a run without reuse gets the NULL after its case.
#[test]
fn replay_probes_liveness_as_the_run_that_found_it() {
    let call = fuzz::generate::null_call(0x00c0_ffee, 32).encode();
    let reproducer = |reuse_connections: bool| Reproducer {
        tool_version: "test".into(),
        seed: 1,
        case: 1,
        peer: "embedded reference responder".into(),
        receive_size: 4096,
        send_size: 4096,
        credits: 32,
        kind: fuzz::Kind { class: Class::Violation, detail: "none".into() },
        observed: String::new(),
        original_messages: 1,
        messages: vec![call.clone()],
        preceding: Vec::new(),
        reuse_connections,
        profile: Profile::default(),
        cut_short: None,
    };
    let timing = Timing { reply: Duration::from_millis(300) };
    let (_, _, reused) = fuzz::replay(&mut Embedded::new(Faults::default()), &reproducer(true), timing);
    assert!(reused.own_probe && reused.null_xid == 0, "{reused:?}");
    let (_, _, fresh) = fuzz::replay(&mut Embedded::new(Faults::default()), &reproducer(false), timing);
    assert!(!fresh.own_probe && fresh.null_xid != 0, "{fresh:?}");
}

/// The report accounts for the cases' time phase by phase: within the fuzzing time, the
/// journal's share there only when there is a journal, and the waits for replies counted.
#[test]
fn the_report_says_where_the_cases_time_went() {
    let dir = std::env::temp_dir().join(format!("rpcrdma-fuzz-spent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |journal: Option<std::sync::Arc<fuzz::Journal>>| {
        let c = Config { stop_after_findings: None, journal, ..config(3, 300, Duration::from_millis(300)) };
        fuzz::run(&mut Embedded::new(Faults::default()), &c, &AtomicBool::new(false), |_| {})
    };
    let without = run(None);
    let with = run(Some(std::sync::Arc::new(fuzz::Journal::open(&dir.join("journal")).unwrap())));
    for r in [&without, &with] {
        let counted: Duration = r.spent.named().iter().map(|(_, d)| *d).sum();
        assert!(counted <= r.elapsed - r.minimising, "{:?} of {:?}", r.spent, r.elapsed);
        assert!(!r.spent.wait.is_zero() && !r.spent.send.is_zero() && !r.spent.connect.is_zero(), "{:?}", r.spent);
    }
    assert!(without.spent.journal.is_zero() && !with.spent.journal.is_zero(), "{:?} {:?}", without.spent, with.spent);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The embedded responder with its logs' settling counted.
struct Settling(Embedded, u64);

impl Target for Settling {
    fn connector(&mut self) -> &mut dyn Connector {
        self.0.connector()
    }
    fn restart(&mut self) -> bool {
        self.0.restart()
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "settling".into()
    }
    fn settle_logs(&mut self) {
        self.1 += 1;
    }
}

/// The peer's logs are given a moment after a case that left the peer unwell and only then:
/// a case it answered costs no wait (with and without connection reuse).
#[test]
fn the_logs_settle_after_the_cases_that_left_the_peer_unwell_only() {
    for reuse_connections in [false, true] {
        let mut t = Settling(Embedded::new(Faults::default()), 0);
        let c = Config { stop_after_findings: None, reuse_connections, ..config(4, 400, Duration::from_millis(300)) };
        let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
        let unwell: u64 = r.outcomes.iter().filter(|(k, _)| **k != "answered").map(|(_, n)| n).sum();
        assert!(unwell > 0 && r.outcomes["answered"] > 0, "{}", summary(&r));
        assert!(r.findings.is_empty(), "{}", summary(&r));
        assert_eq!(t.1, unwell, "{}", summary(&r));
    }
}

/// The embedded responder as a peer whose restart is costly (a server restarted by a command),
/// its restarts counted.
struct Costly(Embedded, u64);

impl Target for Costly {
    fn connector(&mut self) -> &mut dyn Connector {
        self.0.connector()
    }
    fn restart(&mut self) -> bool {
        self.1 += 1;
        self.0.restart()
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn cheap_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "costly".into()
    }
}

/// A finding that leaves the peer answering (a violation in its replies) costs no restart
/// where restarts are costly: not between minimisation trials, not after the finding; one
/// that leaves it down (a crash) is restarted after, and the run goes on.
#[test]
fn a_costly_peer_is_restarted_only_when_a_case_left_it_unwell() {
    let mut t = Costly(Embedded::new(Faults::only("zero-credit")), 0);
    let c = Config { reuse_connections: false, ..config(1, 2000, Duration::from_millis(300)) };
    let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    assert_eq!(r.findings[0].reproducer.kind.class, Class::Violation, "{}", summary(&r));
    assert!(r.findings[0].minimised, "{}", summary(&r));
    assert_eq!(t.1, 0, "restarts for a peer left well: {}", summary(&r));
    let mut t = Costly(Embedded::new(Faults::only("crash-on-many-write-chunks")), 0);
    let c = Config { stop_after_findings: Some(1), ..config(2, 2000, Duration::from_millis(300)) };
    let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    assert_eq!(r.findings[0].reproducer.kind.class, Class::Crash, "{}", summary(&r));
    assert!(t.1 >= 2, "a trial and the run after the crash need restarts: {} ({})", t.1, summary(&r));
}

/// How a restart of [`Reviving`] goes.
#[derive(Clone, Copy)]
enum Restart {
    /// The command fails: the peer stays as it is (down after a crash).
    Fails,
    /// The command exits 0 but the peer stays down (nfsd left without threads).
    LeavesItDown,
}

/// The embedded responder restarted by a command that does not bring it back, its restarts
/// counted.
struct Reviving(Embedded, Restart, u64);

impl Target for Reviving {
    fn connector(&mut self) -> &mut dyn Connector {
        self.0.connector()
    }
    fn restart(&mut self) -> bool {
        self.restart_within(None).is_ok()
    }
    fn restart_within(&mut self, _limit: Option<Duration>) -> Result<(), String> {
        self.2 += 1;
        match self.1 {
            Restart::Fails => Err("the restart command failed (exit 1): false".into()),
            Restart::LeavesItDown => Ok(()),
        }
    }
    fn restart_bound(&self) -> Option<Duration> {
        Some(Duration::from_secs(120))
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn cheap_restart(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "reviving".into()
    }
}

/// A crash whose restart fails (or leaves the peer down, its liveness probe unanswered) ends
/// the run at once: one restart, no trial sent into the dead peer (each would "reproduce" the
/// crash, a refused connection, whatever it held), the finding kept as the case that showed
/// it, its reproducer saying minimising was cut short and why, the report saying the peer is
/// down.
#[test]
fn a_restart_that_does_not_bring_the_peer_back_ends_the_run_at_once() {
    let fault = "crash-on-many-write-chunks";
    for (how, why) in [
        (Restart::Fails, "the restart command failed (exit 1)"),
        (Restart::LeavesItDown, "did not answer a NULL on a fresh connection after the restart"),
    ] {
        let mut t = Reviving(Embedded::new(Faults::only(fault)), how, 0);
        let c = Config {
            stop_after_findings: None,
            reuse_connections: false,
            ..config(2, 2000, Duration::from_millis(300))
        };
        let started = std::time::Instant::now();
        let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
        assert_eq!(r.ended, fuzz::Ended::PeerDown, "{}", summary(&r));
        assert!(r.down.as_deref().is_some_and(|d| d.contains(why)), "{:?}", r.down);
        assert_eq!(t.2, 1, "one restart, then the run ends: {}", summary(&r));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(r.findings.len(), 1, "{}", summary(&r));
        let f = &r.findings[0];
        assert_eq!(f.reproducer.kind.class, Class::Crash);
        assert!(!f.minimised, "not confirmed");
        assert!(f.reproducer.cut_short.as_deref().is_some_and(|d| d.contains(why)), "{:?}", f.reproducer.cut_short);
        assert_eq!(f.reproducer.messages.len(), f.reproducer.original_messages, "the case as it showed the crash");
        // It is the case that crashed the peer: it crashes a fresh faulty responder, not a
        // faithful one.
        let timing = Timing { reply: Duration::from_millis(300) };
        let (hit, _, _) = fuzz::replay(&mut Embedded::new(Faults::only(fault)), &f.reproducer, timing);
        assert!(hit, "{}", summary(&r));
        let (hit, _, _) = fuzz::replay(&mut Embedded::new(Faults::default()), &f.reproducer, timing);
        assert!(!hit, "{}", summary(&r));
        let json = f.reproducer.to_json();
        assert!(json["minimisation_cut_short"].as_str().is_some_and(|d| d.contains(why)), "{json}");
    }
}

/// The minimiser's time limit bounds a trial's waits too, not only the gaps between trials:
/// a trial of a hang (its NULL unanswered: 1 + 4 s of liveness waits at this reply wait, a
/// fresh connection then answering) started near the limit is cut at it, and the minimisation
/// ends within the limit and the one confirming run after it (before, a trial started within
/// the limit ran its 5 s: 10 s in all).
#[test]
fn a_trial_ends_by_the_minimisers_time_limit() {
    let mut t = Embedded::new(Faults::only("hang-on-zero-credit-pair"));
    let c = Config {
        minimise_time: Duration::from_secs(1),
        reuse_connections: false,
        ..config(1, 2000, Duration::from_secs(1))
    };
    let r = fuzz::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    assert_eq!(r.findings[0].reproducer.kind.class, Class::Hang, "{}", summary(&r));
    assert!(r.findings[0].reproducer.cut_short.is_none(), "a peer that comes back is not cut short");
    // The limit, then the confirmation: at most one hang's waits (5 s) and a margin.
    assert!(r.minimising < Duration::from_millis(1000 + 5000 + 1500), "{:?}: {}", r.minimising, summary(&r));
}

/// Each journal line of a run: what it sent (`journal.sent`), its case number and messages.
fn journal_lines(path: &std::path::Path) -> Vec<(String, u64, serde_json::Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| {
            let sent = v["journal"]["sent"].as_str()?.to_string();
            Some((sent, v["case"].as_u64()?, v["messages"].clone()))
        })
        .collect()
}

/// A run over kept connections with `fault` on, journalled; its report and journal lines.
fn journalled_run(faults: Faults, c: Config, name: &str) -> (fuzz::Report, Vec<(String, u64, serde_json::Value)>) {
    let path = std::env::temp_dir().join(format!("rpcrdma-fuzz-recheck-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let c = Config { journal: Some(std::sync::Arc::new(fuzz::Journal::open(&path).unwrap())), ..c };
    let r = fuzz::run(&mut Embedded::new(faults), &c, &AtomicBool::new(false), |_| {});
    let lines = journal_lines(&path);
    let _ = std::fs::remove_file(&path);
    (r, lines)
}

/// The journal's re-check lines: each names its case, and sends exactly that case's messages
/// (those it sent before the connection dropped) again, as a reproducer would replay them.
fn rechecks(lines: &[(String, u64, serde_json::Value)]) -> Vec<u64> {
    let mut out = Vec::new();
    for (sent, n, messages) in lines.iter().filter(|(s, _, _)| s.starts_with("the re-check alone")) {
        assert!(sent.ends_with(&format!("of case {n}")), "{sent}");
        let (_, _, case) = lines.iter().find(|(s, m, _)| m == n && s == &format!("case {n}")).expect("its case's line");
        let (again, case) = (messages.as_array().unwrap(), case.as_array().unwrap());
        assert!(!again.is_empty() && case.starts_with(again), "case {n} re-checked with other messages");
        out.push(*n);
    }
    out
}

/// The run's one finding was found from its case's re-check alone, minimised to that case
/// alone on a fresh connection, and replays against the responder with `faults`, not against
/// the faithful one.
fn found_from_the_re_check(
    r: &fuzz::Report,
    lines: &[(String, u64, serde_json::Value)],
    faults: Faults,
    reply: Duration,
) {
    let f = &r.findings[0];
    assert!(
        rechecks(lines).contains(&f.reproducer.case),
        "case {} was not re-checked: {}",
        f.reproducer.case,
        summary(r)
    );
    assert!(f.minimised && f.reproducer.preceding.is_empty(), "{}", summary(r));
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(faults), &f.reproducer, Timing { reply });
    assert!(hit, "replay against the faulty responder found {got:?}");
    let (hit, got, _) = fuzz::replay(&mut Embedded::new(Faults::default()), &f.reproducer, Timing { reply });
    assert!(!hit && got.is_none(), "replay against the faithful responder found {got:?}");
}

/// A peer that drops a kept connection over a well-formed call only after an earlier message
/// on it had a bad header (`disconnect-after-bad-header`): each such drop is re-checked alone on a
/// fresh connection, does not repeat there, and is counted, not a finding.
#[test]
fn a_disconnect_that_earlier_cases_caused_is_re_checked_alone_and_counted() {
    let c = Config { stop_after_findings: None, ..config(3, 1500, Duration::from_millis(300)) };
    let (r, lines) = journalled_run(Faults::only("disconnect-after-bad-header"), c, "after-bad-header");
    assert!(r.disconnects_rechecked > 0, "{}", summary(&r));
    assert_eq!(r.disconnects_not_reproduced_alone, r.disconnects_rechecked, "{}", summary(&r));
    assert!(r.disconnects_worse_alone.is_empty(), "{}", summary(&r));
    assert!(r.findings.iter().all(|f| f.reproducer.kind.class != Class::Disconnect), "{}", summary(&r));
    assert_eq!(rechecks(&lines).len() as u64, r.disconnects_rechecked);
}

/// A peer that drops the connection over every Long Call (`disconnect-on-long-call`) is found
/// on a kept connection whose earlier cases sent malformed messages: the case, re-checked
/// alone on a fresh connection, drops it again. Its reproducer replays against the faulty
/// responder and not against the faithful one. With fresh connections nothing is re-checked.
#[test]
fn a_disconnect_after_malformed_cases_is_a_finding_when_it_repeats_alone() {
    let fault = "disconnect-on-long-call";
    let reply = Duration::from_millis(300);
    let (r, lines) = journalled_run(Faults::only(fault), config(2, 1500, reply), "long-call");
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    assert_eq!(r.findings[0].reproducer.kind.class, Class::Disconnect, "{}", summary(&r));
    assert!(r.disconnects_rechecked > r.disconnects_not_reproduced_alone, "{}", summary(&r));
    found_from_the_re_check(&r, &lines, Faults::only(fault), reply);
    let fresh = Config { reuse_connections: false, ..config(2, 300, reply) };
    let r = fuzz::run(&mut Embedded::new(Faults::only(fault)), &fresh, &AtomicBool::new(false), |_| {});
    assert_eq!(r.disconnects_rechecked, 0, "{}", summary(&r));
}

/// A peer that drops a kept connection over a call with chunks after a bad header on it, and
/// writes out of bounds on a call with three write chunks (`disconnect-after-bad-header` and
/// `write-past-segment`): a case that dropped a connection an earlier case had sent a bad
/// header on writes out of bounds when re-checked alone. That worse finding is the case's,
/// found from its re-check and minimised from there (from seed 7, at case 4), and the drop
/// is not counted as not reproduced alone.
#[test]
fn a_re_check_alone_that_does_worse_than_a_disconnect_is_the_case_s_finding() {
    let reply = Duration::from_millis(300);
    let mut faults = Faults::only("disconnect-after-bad-header");
    faults.write_past_segment = true;
    let (r, lines) = journalled_run(faults.clone(), config(7, 3000, reply), "worse");
    assert_eq!(r.findings.len(), 1, "{}", summary(&r));
    assert_eq!(r.findings[0].reproducer.kind.class, Class::OobWrite, "{}", summary(&r));
    assert_eq!(r.disconnects_rechecked, r.disconnects_not_reproduced_alone + 1, "{}", summary(&r));
    assert_eq!(r.disconnects_worse_alone, [("oob-write", 1)].into(), "{}", summary(&r));
    found_from_the_re_check(&r, &lines, faults, reply);
}
