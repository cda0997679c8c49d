//! The root file handle is the run's, not a constant: with another handle in the run options
//! every check sends that one and never the embedded responder's `ROOT_FH`, and the checks
//! that look files up in it meet the responder's NFS3ERR_BADHANDLE.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{run_checks, Direction, Outcome, RunOptions};
use rpcrdma_peers::proto::nfs3::ROOT_FH;
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;

/// `fh` as an XDR variable-length opaque (RFC 4506 4.10): length word, bytes, pad to 4.
fn as_opaque(fh: &[u8]) -> Vec<u8> {
    let mut v = (fh.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(fh);
    v.resize(4 + fh.len().div_ceil(4) * 4, 0);
    v
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn every_check_uses_the_runs_root_handle() {
    // 12 bytes: a length the reference tree knows no handle of (NFS3ERR_BADHANDLE).
    let given: Vec<u8> = (0xa0..0xac).collect();
    let options = RunOptions {
        timeout: Duration::from_secs(2),
        silence: Duration::from_millis(100),
        root_fh: given.clone(),
        ..RunOptions::default()
    };
    let mut conn = EmulatedConnector::new(Responder::reference(Config::default()));
    let checks = catalogue::all();
    let results = run_checks(&checks, &mut conn, &options, &AtomicBool::new(false), |_| {});
    let (ours, constant) = (as_opaque(&given), as_opaque(&ROOT_FH));
    let mut sent_given = 0;
    for r in &results {
        let sent: Vec<&[u8]> =
            r.transcript.iter().filter(|e| e.direction == Direction::Sent).map(|e| e.bytes.as_slice()).collect();
        assert!(!sent.iter().any(|b| contains(b, &constant)), "{} sent the constant ROOT_FH", r.check.id);
        if sent.iter().any(|b| contains(b, &ours)) {
            sent_given += 1;
        }
    }
    // LOOKUPs of the test files (most chunk checks), GETATTR and READDIR of the root.
    assert!(sent_given >= 40, "only {sent_given} checks sent the given root handle");
    let badhandle: Vec<_> =
        results.iter().filter(|r| r.outcome == Outcome::Fail && r.actual.to_string().contains("10001")).collect();
    assert!(badhandle.len() >= 10, "{} checks met NFS3ERR_BADHANDLE", badhandle.len());
}
