//! Reference peers for RPC-over-RDMA conformance testing, apart from the judge.
//!
//! - [`transport`]: what a scenario needs from an RDMA connection, modelled on verbs and
//!   RDMA-CM, and the in-process [`transport::emulated`] fabric that fails the way hardware does.
//! - [`proto`]: the vocabulary both sides speak (RPC calls, NFSv3 and the test export).
//! - [`responder`]: the reference responder (RFC 8166 / RFC 8797 to the letter, Version Two),
//!   with fault switches that each break one requirement.
//! - [`ulp`]: the upper layers behind it (NFSv3 over an in-memory tree, CCP).
//! - [`requester`]: the reference requester's workload, with its own fault switches.
//! - [`observe`]: the observation tap: what a requester did, as the responder saw it.
//! - [`mountd`]: the reference MOUNT service and portmapper (TCP), for testing MOUNT clients.
//!
//! Nothing here judges; the judge (`rpcrdma-conformance`) builds on this crate, never the
//! other way round.
#![forbid(unsafe_code)]

pub mod mountd;
pub mod observe;
pub mod proto;
pub mod requester;
pub mod responder;
pub mod rng;
pub mod switches;
pub mod transport;
pub mod ulp;

pub use rpcrdma_codec as codec;
