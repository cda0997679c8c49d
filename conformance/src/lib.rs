//! Conformance scenario catalogue and engine for RPC-over-RDMA peers.
//!
//! Data flows one way: a [`transport`] moves bytes, the codec decodes them, the [`engine`]
//! runs the [`catalogue`]'s checks and judges what came back, and a report reads the
//! finished results. The [`responder`] (with its [`ulp`]) is the embedded reference peer.
#![forbid(unsafe_code)]

pub mod catalogue;
pub mod engine;
pub mod expectations;
pub mod requester;
pub mod requirements;
pub mod responder;
pub mod transport;
pub mod ulp;

pub use rpcrdma_codec as codec;
