//! The verbs transport's only module with `unsafe` code: librdmacm and libibverbs (Debian 12,
//! rdma-core 44) loaded at run time with dlopen, their structures as `#[repr(C)]` mirrors
//! checked against the C headers at compile time, and small owning wrappers whose safe methods
//! the rest of `verbs` composes. (The harness's signal handlers are in `signals.rs`.)
//!
//! Layouts: every size and offset asserted below was printed by a C program compiled against
//! /usr/include/infiniband/verbs.h and /usr/include/rdma/rdma_cma.h of rdma-core 44 on x86-64
//! (`sizeof`/`offsetof` of each field used). rdma-core keeps these structures ABI-stable
//! (they are part of the libibverbs.so.1 / librdmacm.so.1 ABI).
//!
//! Soundness rules the wrappers keep:
//! - Every resource holds an `Arc` to what it was created from (a QP its CQ and PD, a CQ its
//!   completion channel, an MR its PD, an id its event channel), so nothing is destroyed while
//!   something created from it lives.
//! - A buffer handed to the device (a posted receive, send or RDMA Read/Write target) is owned
//!   by the queue pair's in-flight table (or, for the requester's slots, by the queue pair's
//!   slot regions) until its completion comes back or the queue pair is destroyed; a
//!   registered buffer is freed only after a successful `ibv_dereg_mr` (after a failed one it
//!   is leaked, never freed while the device may still write it).
//! - Static-inline verbs (`ibv_post_send`, `ibv_post_recv`, `ibv_poll_cq`,
//!   `ibv_req_notify_cq`, `ibv_alloc_mw`, `ibv_dealloc_mw`) go through the context's ops table,
//!   as verbs.h itself does.

#![allow(unsafe_code)]

mod abi;
mod cm;
mod loading;
mod resources;
mod slots;

pub use abi::*;
pub use cm::*;
pub use loading::*;
pub use resources::*;
