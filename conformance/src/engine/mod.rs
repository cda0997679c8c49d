//! The engine: runs checks (scripted scenarios) against a peer through a [`Connector`] and
//! turns each into a [`CheckResult`]. A peer that hangs, disconnects or sends garbage ends a
//! check with a verdict; it never hangs or crashes the run.
//!
//! [`check`] says what a check is and how it ends, [`result`] what a run records of it,
//! [`options`] the run-wide settings, [`ctx`] the context a scenario talks to the peer
//! through, [`expect`] the matchers over what it received, [`run`] the loop, and [`health`]
//! the probe and restart of a peer that went down.
//!
//! [`Connector`]: rpcrdma_peers::transport::Connector

pub mod check;
pub mod ctx;
pub mod expect;
pub mod health;
pub mod mismatch;
pub mod options;
pub mod result;
pub mod run;

pub use check::{Actual, Check, CheckInfo, Judged, OrFail, Outcome, Verdict};
pub use ctx::{CmExchange, Ctx, Direction, RdmaOp, Received, TranscriptEntry, Wire};
pub use mismatch::{Mismatch, NoMessage};
pub use options::RunOptions;
pub use result::{CheckResult, DownKind, PeerDown, PeerState};
pub use run::{run_check, run_checks, run_watched, Step};
