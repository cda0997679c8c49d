//! The judge of RPC-over-RDMA conformance: the checks, the engine that runs them, and the
//! expectation profiles that hold a peer's reviewed divergences.
//!
//! Data flows one way: a transport (from `rpcrdma-peers`, or the harness's verbs) moves
//! bytes; each received message is decoded once into a [`frame::Frame`]; the [`engine`] runs
//! the [`catalogue`]'s checks over frames and turns them into verdicts; [`expectations`]
//! weigh verdicts against a peer's profile; a report reads the finished results. The
//! [`requirements`] matrix traces every normative statement of the specs to the checks
//! that judge it. The
//! reference peers the checks are proven against live in `rpcrdma-peers`, which knows
//! nothing of the judge.
#![forbid(unsafe_code)]

pub mod catalogue;
pub mod coverage;
pub mod engine;
pub mod expectations;
pub mod frame;
pub mod fuzz;
pub mod proof;
pub mod requirements;

pub use rpcrdma_codec as codec;
pub use rpcrdma_peers as peers;
