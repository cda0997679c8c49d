//! The RPC-over-RDMA Version One transport header (RFC 8166 4.1.2, 4.2; RFC 5666 4.3).
//!
//! - [`types`]: the fixed fields' offsets, rdma_proc, rdma_err, the ERR_VERS reply of any version.
//! - [`header`]: the header and body union: decoding (a fast scan, then the precise decoder),
//!   encoding, the summary.
//! - [`builder`]: headers from plain values, malformed on purpose when asked.
//! - [`header_mut`]: a header's fields edited by name in place.

pub mod builder;
pub mod header;
pub mod header_mut;
pub mod types;

pub use builder::HeaderBuilder;
pub use header::{Body, ErrorBody, Header, Message};
pub use header_mut::HeaderMut;
pub use types::{field, ErrVers, ErrorCode, FixedFields, Proc, MIN_HEADER_LEN, RFC5666_EXTRA_LEN, VERSION};

#[cfg(test)]
mod tests;
