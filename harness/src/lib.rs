//! The harness as a library: each subcommand's implementation ([`cmd`], one module per
//! command, none importing another) over one floor of shared services (the other modules:
//! exit status, selection, profiles, the root file handle, opening a peer, finishing a run, the
//! reports), so tests and other tools can reuse them. The binary `rpcrdma-harness` is a thin
//! command-line front end over these modules. The verbs transport (all the FFI) is its own
//! crate, `rpcrdma-verbs`, re-exported as [`verbs`]; here only the signal handlers
//! (`signals.rs`) use `unsafe`.

#![deny(unsafe_code)]

pub use rpcrdma_verbs as verbs;

pub mod cmd;

pub mod args;
pub mod build_info;
pub mod client_finding;
pub mod clock;
pub mod describe;
pub mod exit;
pub mod finish;
pub mod fuzz_target;
pub mod input;
pub mod kernel_log;
pub mod mount;
pub mod output;
pub mod peer;
pub mod peer_health;
pub mod peer_version;
pub mod profiles;
pub mod report;
pub mod select;
pub mod signals;
pub mod text;
pub mod wire_profile;
