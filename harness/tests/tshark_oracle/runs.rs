//! Whole runs of the catalogue against the reference responder: over the emulated fabric,
//! which shows the peer's one-sided operations, and over a transport that, like verbs, cannot
//! (the transcript then reconstructs them).

use std::collections::BTreeMap;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::ctx::{Direction, RdmaOp, Wire};
use rpcrdma_conformance::engine::{run_check, CheckResult, RunOptions};
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::forward::{BentConnector, Hooks};
use rpcrdma_peers::transport::{
    Connection, Connector, Region, RemoteAccess, RemoteOp, Result as TResult, TransportError,
};

/// A connector whose connections, like verbs, cannot show the peer's one-sided operations on
/// our memory: the transcript must reconstruct them.
/// Its ports too, as verbs has them: a check connecting elsewhere (RFC 8267 6.3) connects in
/// both runs, which keeps the fabric's handles (drawn per connection) the same.
pub fn blind<C: Connector>(inner: C) -> BentConnector<C, BlindHooks> {
    let describe = format!("{} (blind to remote accesses)", inner.describe());
    BentConnector::new(inner, BlindHooks, describe)
}

/// Hides what the peer did to our memory, as verbs does.
#[derive(Clone)]
pub struct BlindHooks;

impl Hooks for BlindHooks {
    fn accesses(&self, _: &dyn Connection, _: &Region) -> TResult<Vec<RemoteAccess>> {
        Err(TransportError::Environment("a target does not see one-sided operations".into()))
    }
}

pub fn reference() -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config::default()))
}

/// Every check of the catalogue against the reference responder.
pub fn run_all(connector: &mut dyn Connector) -> Vec<CheckResult> {
    catalogue::all().into_iter().map(|c| run_check(c, connector, &RunOptions::default())).collect()
}

pub fn rdma_ops(r: &CheckResult) -> Vec<&RdmaOp> {
    r.transcript
        .iter()
        .filter_map(|e| match &e.wire {
            Wire::Rdma(o) => Some(o),
            _ => None,
        })
        .collect()
}

/// Checks whose peer operations a blind transport cannot reconstruct, and why.
const RECONSTRUCTION_CANNOT_SEE: &[(&str, &str)] = &[
    (
        "rfc8166/6.1/ddp-ineligible-argument",
        "the peer RDMA-Reads the read chunk and then refuses the call: a refusal says nothing of \
         what was read before it",
    ),
    (
        "v2-01/5.3/nomsg-call-same-version",
        "reconstruction reads Version One call headers; this position-zero read chunk travels \
         in an RDMA2_NOMSG",
    ),
];

/// Checks whose Read chunk data is a pattern seeded by an XID the check draws but sends in no
/// message (so that a server's read-back shows this run's WRITE, not an earlier run's): the
/// two runs' data differ where the XID map cannot rename them; the operations' kinds,
/// handles, offsets and lengths must still match.
const DATA_SEEDED_BY_AN_UNSENT_XID: &[&str] = &[
    "rfc8267/6.4.2/sixteen-segment-read-chunks",
    "rfc8267/6.4.2/excess-chunk-lists-answered",
    "rfc8267/6.4.2/sixteen-segment-read-and-write-chunks",
];

#[test]
fn reconstructed_one_sided_operations_match_the_fabric() {
    let seen = run_all(&mut reference());
    let rebuilt = run_all(&mut blind(reference()));
    let mut problems = Vec::new();
    let mut compared = 0;
    for (s, b) in seen.iter().zip(&rebuilt) {
        let id = s.check.id;
        if RECONSTRUCTION_CANNOT_SEE.iter().any(|(c, _)| *c == id) {
            // Listed limitations must stay true: the fabric saw operations the blind run lacks.
            assert_ne!(rdma_ops(s).len(), rdma_ops(b).len(), "{id} is listed but now reconstructs: unlist it");
            continue;
        }
        // XIDs differ from run to run: the reconstructed data is compared with the run's XIDs
        // (the first word of each call, in order) mapped to the fabric's.
        let xids = |r: &CheckResult| -> Vec<[u8; 4]> {
            r.transcript
                .iter()
                .filter(|e| e.direction == Direction::Sent && e.bytes.len() >= 4)
                .map(|e| e.bytes[..4].try_into().unwrap())
                .collect()
        };
        let map: BTreeMap<[u8; 4], [u8; 4]> = xids(b).into_iter().zip(xids(s)).collect();
        let seeded = DATA_SEEDED_BY_AN_UNSENT_XID.contains(&id);
        let key = |o: &&RdmaOp| {
            let data = if seeded { o.data.len().to_be_bytes().to_vec() } else { o.data.clone() };
            (o.op == RemoteOp::Write, o.handle, o.offset, data)
        };
        let (mut so, mut bo) = (rdma_ops(s), rdma_ops(b));
        let renamed: Vec<RdmaOp> = bo
            .iter()
            .map(|o| {
                let mut o = (*o).clone();
                for w in o.data.chunks_exact_mut(4) {
                    if let Some(x) = map.get(&<[u8; 4]>::try_from(&*w).unwrap()) {
                        w.copy_from_slice(x);
                    }
                }
                o
            })
            .collect();
        bo = renamed.iter().collect();
        assert!(
            so.iter().all(|o| !o.reconstructed && !o.by_us),
            "{id}: the fabric's operations are observed, by the peer"
        );
        assert!(bo.iter().all(|o| o.reconstructed && !o.by_us), "{id}: blind operations are reconstructions");
        so.sort_by_key(key);
        bo.sort_by_key(key);
        if so.iter().map(key).eq(bo.iter().map(key)) {
            compared += so.len();
        } else {
            problems.push(format!(
                "{id}: the fabric saw {:?}\n  reconstructed {:?}",
                so.iter().map(|o| (o.op, o.handle, o.offset, o.data.len())).collect::<Vec<_>>(),
                bo.iter().map(|o| (o.op, o.handle, o.offset, o.data.len())).collect::<Vec<_>>()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared > 10, "only {compared} one-sided operations compared");
}
