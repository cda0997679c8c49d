//! Zero-copy, allocation-free codec for RPC-over-RDMA.
//!
//! Decoding borrows from the input and validates once; lists are then iterated over the
//! borrowed bytes. Encoding writes into the caller's buffer. Hostile input gets a typed
//! [`DecodeError`] naming the field and byte offset, never a panic or an allocation.
//!
//! Modules follow the specs' contents:
//! - [`xdr`]: RFC 4506 primitives: reader, writer, counted arrays, open wire enums.
//! - [`chunk`]: segments, the read list, write list and reply chunk (RFC 8166 3.4, 4.3).
//! - [`v1`]: the Version One transport header and every body (RFC 8166 4.1.2, RFC 5666 4.3).
//! - [`check`]: RFC 8166 semantic rules over a decoded header.
//! - [`reassembly`]: XDR stream reassembly with read-chunk roundup (RFC 8166 3.4.5).
//! - [`rpc`]: ONC RPC call and reply headers (RFC 5531).
//! - [`msgp`]: RDMA_MSGP padding (RFC 5666 3.9).
//! - [`ccp`]: the Connection Configuration Protocol (RFC 5666 6).
//! - [`private_data`]: RDMA-CM private data (RFC 8797, cm-pvt-data drafts).
//! - [`v2`]: Version Two, with its optional operations [`v2::xcharext`] and [`v2::rtrext`].
//! - [`profile`]: the spec choices left open, as one options value.
//! - [`named_enum!`]: closed enums with a name per variant (reports, profiles, tables).
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod ccp;
pub mod check;
pub mod chunk;
pub mod error;
pub mod hex;
pub mod msgp;
#[doc(hidden)]
pub mod named_enum;
pub mod private_data;
pub mod profile;
pub mod reassembly;
pub mod rpc;
pub mod v1;
pub mod v2;
pub mod xdr;

pub use error::{DecodeError, EncodeError, ErrorKind, Field};
pub use profile::Profile;
/// The Version Two extensions, also at the crate root.
pub use v2::{rtrext, xcharext};
pub use xdr::Encode;
