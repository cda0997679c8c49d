//! What the checks cover of the requirements matrix: coverage per specification and side, as
//! the tables claim it and as proven (a fault that breaks a statement makes a citing check
//! fail, [`crate::proof`]), and the matrix as JSON with each statement's proofs (for `list
//! --requirements --json`). It reads the matrix ([`crate::requirements`]) and the proofs;
//! neither reads it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::proof::{self, Side};
use crate::requirements::{all, Normative, Requirement};

impl Requirement {
    /// The statement as JSON: its columns, and per side whether it is judgeable, judged, and
    /// by which proofs.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "spec": self.spec,
            "section": self.section,
            "key_word": self.key_word,
            "normative": self.normative.name(),
            "binds": self.binds.name(),
            "observable": self.observable.name(),
            "checks": self.checks.iter().filter(|c| !c.partial).map(|c| c.id.as_str()).collect::<Vec<_>>(),
            "partial_checks": self.checks.iter().filter(|c| c.partial).map(|c| c.id.as_str()).collect::<Vec<_>>(),
            "reason": self.reason,
            "text": self.text,
            // Per side: judged (a proof exists), and each proof: the check, its
            // precondition, and the fault that breaks this statement under which it fails.
            "proven": {
                "server": proofs_json(self, Side::Server),
                "client": proofs_json(self, Side::Client),
            },
        })
    }
}

/// One side's proofs of a statement, for the JSON.
fn proofs_json(r: &Requirement, side: Side) -> Value {
    let proofs: Vec<Value> = proof::proofs(r, side)
        .iter()
        .map(|p| json!({"check": p.check, "precondition": p.precondition, "fault": p.fault, "outcome": p.outcome.name()}))
        .collect();
    json!({"judgeable": proof::judgeable(r, side), "judged": !proofs.is_empty(), "proofs": proofs})
}

/// Coverage of one side of one specification: observable statements, and those judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub judged: usize,
    pub total: usize,
}

impl Coverage {
    /// Judged over total, in percent; None when there is nothing to judge.
    pub fn percent(self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.judged as f64 / self.total as f64)
    }
}

/// Coverage for a specification: the server side (statements a harness acting as requester
/// can observe, judged by a `run` check) and the client side (acting as responder, judged by
/// a `serve` check: any cited check that is not a server check).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpecCoverage {
    pub server: Coverage,
    pub client: Coverage,
}

/// Coverage per specification, `judged` deciding whether a side judges a statement. Statements
/// that are not normative (lowercase key words under RFC 8174) are left out, and so is a
/// permission on the side that holds it ([`proof::judgeable`]).
pub fn coverage_by(
    reqs: &[Requirement],
    judged: impl Fn(&Requirement, Side) -> bool,
) -> BTreeMap<String, SpecCoverage> {
    let mut out: BTreeMap<String, SpecCoverage> = BTreeMap::new();
    for r in reqs {
        let e = out.entry(r.spec.clone()).or_default();
        if r.normative == Normative::No {
            continue;
        }
        for (side, observable, c) in
            [(Side::Server, r.observable.server(), &mut e.server), (Side::Client, r.observable.client(), &mut e.client)]
        {
            if observable && proof::judgeable(r, side) {
                c.total += 1;
                c.judged += usize::from(judged(r, side));
            }
        }
    }
    out
}

/// What the tables claim: a side judges a statement when one of its checks is cited in full
/// (`server_checks` names the server side's; any other cited check is a client check).
pub fn coverage_of(reqs: &[Requirement], server_checks: &[&str]) -> BTreeMap<String, SpecCoverage> {
    coverage_by(reqs, |r, side| match side {
        Side::Server => r.judged_by().any(|c| server_checks.contains(&c)),
        Side::Client => r.judged_by().any(|c| !server_checks.contains(&c)),
    })
}

/// What the checks really judge: a statement counts on a side only with a proof (a fault that
/// breaks it making a citing check fail, [`proof::proofs`]).
pub fn coverage_proven(reqs: &[Requirement]) -> BTreeMap<String, SpecCoverage> {
    coverage_by(reqs, proof::judged)
}

/// Coverage per specification of the vendored tables against the catalogue, as proven.
pub fn coverage() -> BTreeMap<String, SpecCoverage> {
    coverage_proven(all())
}

/// The whole matrix as JSON: requirements and coverage (for `list --requirements --json`).
pub fn to_json() -> Value {
    let cov: serde_json::Map<String, Value> = coverage()
        .into_iter()
        .map(|(spec, c)| {
            (
                spec,
                json!({
                    "server": {"judged": c.server.judged, "total": c.server.total},
                    "client": {"judged": c.client.judged, "total": c.client.total},
                }),
            )
        })
        .collect();
    json!({
        "requirements": all().iter().map(Requirement::to_json).collect::<Vec<_>>(),
        "coverage": cov,
    })
}
