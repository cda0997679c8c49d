//! The NFSv4.1 forward-direction checks of RFC 8267 6.4.1 against the embedded reference
//! responder: each passes against the faithful responder, each fails under exactly the faults
//! that break its statement (and no other of the four), and each is inconclusive, never a
//! pass, when the server gives it no chance (no READ of the COMPOUND runs).

use std::time::{Duration, Instant};

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{run_check, Check, Outcome, RunOptions};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::forward::{BentConnector, Forward, Hooks};
use rpcrdma_peers::transport::{Connection, Connector, Result as TResult};

const FIRST: &str = "rfc8267/6.4.1/first-read-first-chunk";
const EMPTY: &str = "rfc8267/6.4.1/empty-chunk-read-inline";
const FAILED: &str = "rfc8267/6.4.1/failed-read-empty-chunk";
const SURPLUS: &str = "rfc8267/6.4.1/surplus-reads-inline";
const SIXTEEN: &str = "rfc8267/6.4.2/sixteen-segment-write-chunk";
const READ_LIST: &str = "rfc8267/6.4.2/sixteen-segment-read-chunks";
const EXCESS: &str = "rfc8267/6.4.2/excess-chunk-lists-answered";
const BOTH: &str = "rfc8267/6.4.2/sixteen-segment-read-and-write-chunks";

fn responder(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

fn options() -> RunOptions {
    RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(150), ..RunOptions::default() }
}

fn check(id: &str) -> &'static Check {
    catalogue::all().into_iter().find(|c| c.info.id == id).unwrap_or_else(|| panic!("no check {id}"))
}

fn outcome(id: &str, conn: &mut dyn Connector) -> Outcome {
    run_check(check(id), conn, &options()).outcome
}

#[test]
fn each_check_fails_under_the_faults_that_break_its_statement_and_only_those() {
    use Outcome::{Fail, Inconclusive, Pass, PassLax};
    // What each fault does to the four scenarios (two READs, of 5 and 40 bytes):
    // - ddp-into-last-write-chunk puts the first READ's data in the last chunk: wrong with two
    //   chunks (first-read, empty-chunk, failed-read), faithful with one (surplus);
    // - later-items-inline keeps the second READ inline although its chunk is non-empty:
    //   wrong where the second READ has a chunk and succeeds (first-read, empty-chunk);
    // - drop-unused-write-chunks leaves out chunks returned without data: the empty first
    //   chunk, the failed READ's chunk;
    // - surplus-items-reduced loses the data of a READ with no chunk: only surplus has one;
    // - write-chunk-over-eight-segments refuses only the sixteen-segment chunk (the others
    //   offer one segment a chunk).
    // - empty-write-chunk-refused refuses the empty chunk, while two non-empty ones are taken.
    // The two WRITEs in Long calls (sixteen-segment read chunks; thirty-two data segments)
    // offer no write chunk, so only the read-list faults touch them:
    // - read-chunk-over-eight-segments refuses both with ERR_CHUNK: a failure within 6.4.2's
    //   prescriptions, a good answer beyond them;
    // - drop-excess-chunk-lists leaves the thirty-two-segment call unanswered (a SHOULD).
    // The inline COMPOUND of a WRITE (sixteen-segment Read chunk) and a READ (sixteen-segment
    // Write chunk) meets both segment-count faults, and read-and-write-lists-refused, which
    // refuses only a call with both lists: no other check sends one.
    // read-fails-in-sixteen-segment-chunk fails a READ whose write chunk has sixteen segments:
    // after the WRITE of the same bytes succeeded, a failure; alone, the READ of `big` might
    // fail for the export's sake (inconclusive).
    let table: [(&str, [Outcome; 8]); 11] = [
        ("", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
        ("ddp-into-last-write-chunk", [Fail, Fail, Fail, Pass, Pass, Pass, Pass, Pass]),
        ("later-items-inline", [Fail, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
        ("drop-unused-write-chunks", [Pass, Fail, Fail, Pass, Pass, Pass, Pass, Pass]),
        ("surplus-items-reduced", [Pass, Pass, Pass, Fail, Pass, Pass, Pass, Pass]),
        ("write-chunk-over-eight-segments", [Pass, Pass, Pass, Pass, Fail, Pass, Pass, Fail]),
        ("empty-write-chunk-refused", [Pass, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
        ("read-chunk-over-eight-segments", [Pass, Pass, Pass, Pass, Pass, Fail, Pass, Fail]),
        ("drop-excess-chunk-lists", [Pass, Pass, Pass, Pass, Pass, Pass, PassLax, Pass]),
        ("read-and-write-lists-refused", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Fail]),
        ("read-fails-in-sixteen-segment-chunk", [Pass, Pass, Pass, Pass, Inconclusive, Pass, Pass, Fail]),
    ];
    let mut wrong = Vec::new();
    for (fault, want) in table {
        let faults = if fault.is_empty() { Faults::default() } else { Faults::only(fault) };
        for (id, want) in [FIRST, EMPTY, FAILED, SURPLUS, SIXTEEN, READ_LIST, EXCESS, BOTH].into_iter().zip(want) {
            let r = run_check(check(id), &mut responder(faults.clone()), &options());
            if r.outcome != want {
                wrong.push(format!("{id} under {fault:?}: {} (want {}): {}", r.outcome.name(), want.name(), r.actual));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Renames `five` to `fivx` and `big` to `bug` in every call we send (XDR strings: the
/// length, the name, its pad): the LOOKUP before the first READ fails, so the COMPOUND ends
/// before any READ.
#[derive(Clone)]
struct NoRead;

impl Hooks for NoRead {
    fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> TResult<()> {
        let mut msg = msg.to_vec();
        for (name, at, to) in [(&b"\0\0\0\x04five"[..], 7, b'x'), (&b"\0\0\0\x03big\0"[..], 5, b'u')] {
            if let Some(p) = msg.windows(name.len()).position(|w| w == name) {
                msg[p + at] = to;
            }
        }
        inner.send(&msg)
    }
}

/// The reference responder behind [`NoRead`].
struct NoChance(EmulatedConnector<Responder>);

impl Connector for NoChance {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> TResult<Box<dyn Connection>> {
        Ok(Forward::boxed(self.0.connect(private_data, deadline)?, NoRead))
    }

    fn describe(&self) -> String {
        format!("{}, the READs' files renamed", self.0.describe())
    }

    /// No ports, on purpose: the well-known-port check's branch for such a transport.
    fn port(&self) -> Option<u16> {
        None
    }

    fn connect_at(&mut self, _: u16, _: &[u8], _: Instant) -> Option<TResult<Box<dyn Connection>>> {
        None
    }
}

#[test]
fn with_no_read_each_check_is_inconclusive_even_under_its_faults() {
    for id in [FIRST, EMPTY, FAILED, SURPLUS, SIXTEEN] {
        let c = check(id);
        assert!(c.info.precondition.is_some(), "{id} declares no precondition");
        // A server that refuses the write list shows it with no READ run: those faults are
        // judged below.
        let refusals = ["write-chunk-over-eight-segments", "empty-write-chunk-refused"];
        let faults = c.info.broken_by.iter().map(|(f, _)| *f).filter(|f| !refusals.contains(f));
        for fault in std::iter::once("").chain(faults) {
            let faults = if fault.is_empty() { Faults::default() } else { Faults::only(fault) };
            let r = run_check(c, &mut NoChance(responder(faults.clone())), &options());
            assert_eq!(r.outcome, Outcome::Inconclusive, "{id} under {fault:?} with no READ: {}", r.actual);
            let want = if fault.is_empty() { Outcome::Pass } else { Outcome::Fail };
            assert_eq!(outcome(id, &mut responder(faults)), want, "{id} under {fault:?} given the chance");
        }
    }
}

#[test]
fn the_checks_judge_every_statement_of_6_4_1_from_the_server_side() {
    let judged: Vec<&str> =
        [FIRST, EMPTY, FAILED, SURPLUS].iter().flat_map(|id| check(id).info.judges.iter().copied()).collect();
    for n in 1..=5 {
        let id = format!("rfc8267/6.4.1#{n}");
        assert!(judged.contains(&id.as_str()), "{id} judged by none of the four");
        let proved = Faults::NAMES.iter().any(|f| Faults::breaks(f).contains(&id.as_str()));
        assert!(proved, "{id}: no fault of the reference responder declares it breaks it");
    }
}

#[test]
fn a_refused_write_list_within_the_prescriptions_fails_with_or_without_a_read() {
    for (id, fault) in [(SIXTEEN, "write-chunk-over-eight-segments"), (EMPTY, "empty-write-chunk-refused")] {
        let r = run_check(check(id), &mut NoChance(responder(Faults::only(fault))), &options());
        assert_eq!(r.outcome, Outcome::Fail, "{id} under {fault} with no READ: {}", r.actual);
        assert!(r.actual.to_string().contains("ERR_CHUNK"), "{id} under {fault}: {}", r.actual);
    }
}

/// Renames `scratch` to `xcratch` in every call we send: the LOOKUP before the WRITE fails,
/// so neither the WRITE nor the READ of the COMPOUND runs.
#[derive(Clone)]
struct NoScratch;

impl Hooks for NoScratch {
    fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> TResult<()> {
        let mut msg = msg.to_vec();
        let name = b"\0\0\0\x07scratch";
        if let Some(p) = msg.windows(name.len()).position(|w| w == name) {
            msg[p + 4] = b'x';
        }
        inner.send(&msg)
    }
}

/// The reference responder behind [`NoScratch`].
fn no_write(inner: EmulatedConnector<Responder>) -> BentConnector<EmulatedConnector<Responder>, NoScratch> {
    let describe = format!("{}, `scratch` renamed", inner.describe());
    BentConnector::new(inner, NoScratch, describe)
}

#[test]
fn both_lists_at_once_is_inconclusive_with_no_write_and_fails_on_a_refusal_either_way() {
    // No WRITE run (the LOOKUP fails): nothing to judge, however faithful the server.
    let r = run_check(check(BOTH), &mut no_write(responder(Faults::default())), &options());
    assert_eq!(r.outcome, Outcome::Inconclusive, "faithful, no WRITE: {}", r.actual);
    // A refusal of the two lists shows before any operation runs: a failure either way, and
    // the one-segment control tells the two lists together (refused too) from the segment
    // count (processed).
    for (fault, control) in [
        ("read-and-write-lists-refused", "refused too (ERR_CHUNK)"),
        ("read-chunk-over-eight-segments", "WRITE Some((0, Some(64)))"),
        ("write-chunk-over-eight-segments", "WRITE Some((0, Some(64)))"),
    ] {
        for with_write in [true, false] {
            let r = if with_write {
                run_check(check(BOTH), &mut responder(Faults::only(fault)), &options())
            } else {
                run_check(check(BOTH), &mut no_write(responder(Faults::only(fault))), &options())
            };
            assert_eq!(r.outcome, Outcome::Fail, "{fault}, WRITE possible {with_write}: {}", r.actual);
            let actual = r.actual.to_string();
            assert!(actual.starts_with("ERR_CHUNK"), "{fault}: {actual}");
            if with_write {
                assert!(actual.ends_with(control), "{fault}: {actual}");
            }
        }
    }
}

#[test]
fn a_read_that_fails_after_the_write_succeeded_fails_both_lists_at_once() {
    const FAULT: &str = "read-fails-in-sixteen-segment-chunk";
    let r = run_check(check(BOTH), &mut responder(Faults::only(FAULT)), &options());
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.actual);
    let actual = r.actual.to_string();
    assert!(actual.contains("READ result Some((10006, None)) after WRITE NFS4_OK count 64"), "{actual}");
    // No WRITE done (the LOOKUP fails): the READ's failure proves nothing.
    let r = run_check(check(BOTH), &mut no_write(responder(Faults::only(FAULT))), &options());
    assert_eq!(r.outcome, Outcome::Inconclusive, "{}", r.actual);
}

#[test]
fn the_well_known_port_is_judged_where_the_transport_has_ports() {
    const PORT: &str = "rfc8267/6.3/well-known-port";
    let r = run_check(check(PORT), &mut responder(Faults::default()), &options());
    assert_eq!(r.outcome, Outcome::Pass, "{}", r.actual);
    assert!(r.actual.to_string().contains("given at port 20049 already"), "{}", r.actual);
    // The responder listening at 20050: nobody at 20049.
    let r = run_check(check(PORT), &mut responder(Faults::only("not-well-known-port")), &options());
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.actual);
    assert!(r.actual.to_string().contains("given at port 20050"), "{}", r.actual);
    // The other faults leave the port alone.
    for fault in ["read-and-write-lists-refused", "read-chunk-over-eight-segments", "drop-excess-chunk-lists"] {
        assert_eq!(outcome(PORT, &mut responder(Faults::only(fault))), Outcome::Pass, "{fault}");
    }
    // A connector that cannot address a port (the test wrapper says it has none).
    let r = run_check(check(PORT), &mut NoChance(responder(Faults::default())), &options());
    assert_eq!(r.outcome, Outcome::Unsupported, "{}", r.actual);
}

/// A host with two RPC-over-RDMA services on the emulated fabric: the one the run is given,
/// at `given`, and another at 20049; each a reference responder serving `programs` (NFSv3
/// and NFSv4, or NFSv3 alone). Any other port has nobody listening.
struct TwoPorts {
    given: u16,
    at_given: EmulatedConnector<Responder>,
    at_well_known: EmulatedConnector<Responder>,
}

/// The reference responder serving NFS version 3 alone: NFSv4 calls get PROG_MISMATCH (3, 3).
fn nfs3_only() -> EmulatedConnector<Responder> {
    use rpcrdma_peers::proto::nfs3::NFS_PROGRAM;
    use rpcrdma_peers::ulp::{Nfs3Server, Programs, UpperLayer};
    let ulp: rpcrdma_peers::responder::UlpFactory = std::sync::Arc::new(|| {
        Box::new(Programs::new().with(NFS_PROGRAM, Box::new(Nfs3Server::new()))) as Box<dyn UpperLayer>
    });
    EmulatedConnector::new(Responder::new(Config::default(), ulp))
}

impl TwoPorts {
    fn new(given: u16, v4_at_given: bool) -> Self {
        let at_given = if v4_at_given { responder(Faults::default()) } else { nfs3_only() };
        TwoPorts { given, at_given, at_well_known: nfs3_only() }
    }
}

impl Connector for TwoPorts {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> TResult<Box<dyn Connection>> {
        self.at_given.connect(private_data, deadline)
    }

    fn describe(&self) -> String {
        format!("emulated, port {} and an NFSv3-only service at 20049", self.given)
    }

    fn port(&self) -> Option<u16> {
        Some(self.given)
    }

    fn connect_at(
        &mut self,
        port: u16,
        private_data: &[u8],
        deadline: Instant,
    ) -> Option<TResult<Box<dyn Connection>>> {
        Some(match port {
            p if p == self.given => self.at_given.connect(private_data, deadline),
            20049 => self.at_well_known.connect(private_data, deadline),
            p => Err(rpcrdma_peers::transport::TransportError::Unreachable(format!("nobody listens at port {p}"))),
        })
    }
}

#[test]
fn no_nfs4_at_the_well_known_port_fails_while_the_port_given_serves_it() {
    const PORT: &str = "rfc8267/6.3/well-known-port";
    // 20049 answers, but not NFSv4 (PROG_MISMATCH), while the port given serves it: the
    // server is not where an NFSv4 client looks.
    let r = run_check(check(PORT), &mut TwoPorts::new(20050, true), &options());
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.actual);
    let actual = r.actual.to_string();
    assert!(actual.contains("PROG_MISMATCH or PROG_UNAVAIL for NFSv4 at port 20049"), "{actual}");
    assert!(actual.contains("given at port 20050 answers NFSv4 NULL"), "{actual}");
    // Neither port serves NFSv4: a server without NFSv4 over RDMA, not one at the wrong port.
    let r = run_check(check(PORT), &mut TwoPorts::new(20050, false), &options());
    assert_eq!(r.outcome, Outcome::Unsupported, "{}", r.actual);
    assert!(r.actual.to_string().contains("given at port 20050"), "{}", r.actual);
}
