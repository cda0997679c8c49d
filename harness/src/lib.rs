//! The harness as a library: each subcommand's implementation, and the reports (text, JSON,
//! JUnit, RoCEv2 pcap), so tests and other tools can reuse them. The binary `rpcrdma-harness`
//! is a thin command-line front end over these modules. The verbs transport (all the FFI) is
//! its own crate, `rpcrdma-verbs`, re-exported as [`verbs`]; here only the signal handlers
//! (`signals.rs`) use `unsafe`.

#![deny(unsafe_code)]

pub use rpcrdma_verbs as verbs;

pub mod args;
pub mod bench_null;
pub mod decode;
pub mod describe;
pub mod export_tree;
pub mod fuzz;
pub mod fuzz_panic;
pub mod input;
pub mod kcidb;
pub mod kernel_log;
pub mod matrix;
pub mod mount;
pub mod output;
pub mod peer;
pub mod peer_health;
pub mod peer_version;
pub mod profile_init;
pub mod replay;
pub mod replay_client;
pub mod report;
pub mod run;
pub mod serve;
pub mod serve_fuzz;
pub mod serve_kernel_log;
pub mod serve_storm;
pub mod signals;
pub mod text;
pub mod vectors_cmd;
