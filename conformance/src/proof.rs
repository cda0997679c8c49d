//! When a statement of the requirements matrix counts as judged on a side: some check of that
//! side cites it, and a fault of the reference peer that breaks exactly that statement (the
//! fault declares it: `Faults::BREAKS`, `RequesterFaults::BREAKS`) makes that check fail, or
//! pass-lax for a SHOULD-class statement (the engine tests prove each check's `broken_by`
//! outcome). A check whose only fault breaks a neighbouring rule judges the statement in part.
//!
//! A permission (MAY, OPTIONAL) is judged only on the side that must cope with it: a
//! requester's MAY from the server side (the responder must interoperate, RFC 2119 section 5),
//! a responder's MAY from the client side; the side holding it cannot break it.

use rpcrdma_peers::requester::RequesterFaults;
use rpcrdma_peers::responder::Faults;

use crate::catalogue;
use crate::engine::{CheckInfo, Outcome};
use crate::requirements::{Binds, Requirement};

/// The harness's two roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `run`: the harness is the requester, judging a responder.
    Server,
    /// `serve`: the harness is the responder, judging a requester.
    Client,
}

/// One proof: the check that fails, and the fault that breaks the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proof {
    pub check: &'static str,
    pub fault: &'static str,
    /// The check's verdict under the fault: fail, or pass-lax for a SHOULD-class statement.
    pub outcome: Outcome,
    /// The event that gives the peer its chance, as the check declares it.
    pub precondition: Option<&'static str>,
}

/// Whether a statement is a permission.
pub fn is_permission(r: &Requirement) -> bool {
    matches!(r.key_word.to_ascii_uppercase().as_str(), "MAY" | "OPTIONAL")
}

/// Whether a statement's violation is a SHOULD-class one (judged pass-lax, failing under
/// `--strict`).
fn should_class(r: &Requirement) -> bool {
    matches!(r.key_word.to_ascii_uppercase().as_str(), "SHOULD" | "SHOULD NOT" | "RECOMMENDED" | "NOT RECOMMENDED")
}

/// Whether `side` can judge the statement at all: a permission only from the side that must
/// cope with it.
pub fn judgeable(r: &Requirement, side: Side) -> bool {
    if !is_permission(r) {
        return true;
    }
    match r.binds {
        Binds::Requester | Binds::UpperLayer => side == Side::Server,
        Binds::Responder => side == Side::Client,
        _ => true,
    }
}

/// The checks of one side with the faults that break them.
fn checks(side: Side) -> Vec<&'static CheckInfo> {
    match side {
        Side::Server => catalogue::all().into_iter().map(|c| &c.info).collect(),
        Side::Client => catalogue::client::all().map(|c| &c.info).collect(),
    }
}

fn breaks(side: Side, fault: &str) -> &'static [&'static str] {
    match side {
        Side::Server => Faults::breaks(fault),
        Side::Client => RequesterFaults::breaks(fault),
    }
}

/// Every proof that `side` judges the statement: a check of that side citing it in full,
/// failing (pass-lax for SHOULD-class) under a fault that breaks it. Empty for a permission
/// the side holds.
pub fn proofs(r: &Requirement, side: Side) -> Vec<Proof> {
    if !judgeable(r, side) {
        return Vec::new();
    }
    let decisive = if should_class(r) { Outcome::PassLax } else { Outcome::Fail };
    let mut out = Vec::new();
    for c in checks(side).into_iter().filter(|c| r.judged_by().any(|id| id == c.id)) {
        for &(fault, outcome) in c.broken_by {
            if (outcome == Outcome::Fail || outcome == decisive) && breaks(side, fault).contains(&r.id.as_str()) {
                out.push(Proof { check: c.id, fault, outcome, precondition: c.precondition });
            }
        }
    }
    out
}

/// Whether `side` judges the statement (at least one proof).
pub fn judged(r: &Requirement, side: Side) -> bool {
    !proofs(r, side).is_empty()
}
