//! The leaf types of the Version One header: the fixed fields' offsets, rdma_proc, rdma_err,
//! and the ERR_VERS reply every version shares (RFC 8166 4.2, 4.5, 7).

use crate::error::DecodeError;
use crate::xdr::{wire_enum, Reader};

/// Byte offsets of the four fixed fields, the same in every version (RFC 8166 4.2, 7).
pub mod field {
    pub const XID: usize = 0;
    pub const VERS: usize = 4;
    pub const CREDIT: usize = 8;
    pub const PROC: usize = 12;
    /// First byte after the fixed fields.
    pub const BODY: usize = 16;
}

/// rdma_vers for Version One (RFC 8166 4.2.2).
pub const VERSION: u32 = 1;
/// "a minimal size RPC-over-RDMA header (28 bytes)" (RFC 8166 4.5).
pub const MIN_HEADER_LEN: usize = 28;
/// RFC 5666 4.3 `rdma_extra[8]`: bytes after an unknown error code.
pub const RFC5666_EXTRA_LEN: usize = 32;

wire_enum! {
    /// rdma_proc (RFC 8166 4.2.4).
    pub struct Proc(u32) {
        RDMA_MSG = 0,
        RDMA_NOMSG = 1,
        /// Not to be used (RFC 8166 4.6.1).
        RDMA_MSGP = 2,
        /// Not to be used (RFC 8166 4.6.2).
        RDMA_DONE = 3,
        RDMA_ERROR = 4,
    }
}

wire_enum! {
    /// rdma_err (RFC 8166 4.5).
    pub struct ErrorCode(u32) {
        ERR_VERS = 1,
        ERR_CHUNK = 2,
    }
}

/// The four fixed fields, readable from any version's header (RFC 8166 4.2, 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedFields {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    /// The raw rdma_proc word: its meaning depends on the version.
    pub proc_: u32,
}

impl FixedFields {
    /// Reads the fixed fields without interpreting the version.
    pub fn decode(buf: &[u8]) -> Result<FixedFields, DecodeError> {
        let mut r = Reader::new(buf);
        Ok(FixedFields {
            xid: r.u32("rdma_xid")?,
            vers: r.u32("rdma_vers")?,
            credit: r.u32("rdma_credit")?,
            proc_: r.u32("rdma_proc")?,
        })
    }
}

/// An ERR_VERS reply of any version: RFC 8166 7 fixes the position of rdma_proc, the value of
/// ERR_VERS and the layout of `rpc_rdma_errvers` for all versions, so it decodes whatever
/// rdma_vers says (a responder echoes the requester's unsupported version, RFC 8166 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrVers {
    pub fixed: FixedFields,
    pub low: u32,
    pub high: u32,
}

impl ErrVers {
    /// Decodes an RDMA_ERROR / ERR_VERS message; None when it is some other message.
    pub fn decode(buf: &[u8]) -> Result<Option<ErrVers>, DecodeError> {
        let fixed = FixedFields::decode(buf)?;
        if Proc(fixed.proc_) != Proc::RDMA_ERROR {
            return Ok(None);
        }
        let mut r = Reader::with_base(&buf[field::BODY..], field::BODY);
        if ErrorCode(r.u32("rdma_err")?) != ErrorCode::ERR_VERS {
            return Ok(None);
        }
        Ok(Some(ErrVers { fixed, low: r.u32("rdma_vers_low")?, high: r.u32("rdma_vers_high")? }))
    }
}
