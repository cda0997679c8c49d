//! Conformance scenario catalogue and engine for RPC-over-RDMA peers.
//!
//! The engine and catalogue are being built; see the project README.
#![forbid(unsafe_code)]

pub use rpcrdma_codec as codec;
