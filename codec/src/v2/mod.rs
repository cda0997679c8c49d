//! The RPC-over-RDMA Version Two transport header (draft-cel-nfsv4-rpcrdma-version-two-01
//! section 4.2; wire notes 1.5-1.7 and C1-C8), with the -00 envelope and the -02 and -04 error
//! numberings as profiles, and its optional operations.
//!
//! - [`types`]: the leaf types (rdma_proc, msg_type, chunk lists with direction, error arms).
//! - [`header`]: the header and body union, decoding, encoding, summary.
//! - `scan`: [`Message::decode`], the one-pass fast path for common RDMA2_OPTIONAL forms
//!   before the field-by-field decoder of [`header`].
//! - [`builder`]: messages from plain values, malformed on purpose when asked.
//! - [`reframe`]: Version One RDMA_MSG / RDMA_NOMSG to Version Two and back.
//! - [`check`](mod@check): the base draft's direction and payload rules.
//! - [`xcharext`], [`rtrext`]: the optional operations carried in RDMA2_OPTIONAL.
//!
//! The extensions import only the leaves ([`types`], [`crate::xdr`], [`crate::chunk`]);
//! [`header`] imports them, never the other way round.

pub mod builder;
pub mod check;
pub mod header;
mod put;
pub mod reframe;
pub mod rtrext;
mod scan;
pub mod types;
pub mod xcharext;

pub use crate::check::Violations;
pub use builder::HeaderBuilder;
pub use check::{check, rules};
pub use header::{Body, Header, Message, OptInfo, Optional};
pub use types::{field, Chunks, ErrorBody, ErrorInfo, MsgType, Proc, VERSION};

#[cfg(test)]
mod tests;
