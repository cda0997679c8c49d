//! The leaf types of the Version Two header: rdma_proc, msg_type, the chunk lists with their
//! direction and the error arms. Both extensions may import these; nothing here imports them.

use crate::chunk::ChunkLists;
use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::{V2Envelope, V2ErrorNumbering};
use crate::xdr::{wire_enum, Reader, Writer};

/// Byte offsets of the fixed fields and of the -01 body fields (wire notes 1.5).
pub mod field {
    pub const XID: usize = 0;
    pub const VERS: usize = 4;
    pub const CREDIT: usize = 8;
    pub const PROC: usize = 12;
    /// First byte after the fixed fields: rdma_direction or rdma_optdir (-01), rdma_err.
    pub const BODY: usize = 16;
    /// RDMA2_OPTIONAL under -01: rdma_opttype, the optinfo length word, the optinfo data.
    pub const OPTTYPE: usize = 20;
    pub const OPTINFO_LEN: usize = 24;
    pub const OPTINFO: usize = 28;
    /// The same under -00 (no rdma_optdir).
    pub const OPTTYPE_00: usize = 16;
    pub const OPTINFO_LEN_00: usize = 20;
    pub const OPTINFO_00: usize = 24;
}

/// rdma_vers for Version Two.
pub const VERSION: u32 = 2;

/// `enum msg_type` (`rpcrdma2_msg_type`, wire notes C3): rdma_direction, rdma_optdir,
/// xmsi_dir. The RPC enum itself; decoding rejects other values (`invalid-enum`).
pub use crate::rpc::MsgType;

wire_enum! {
    /// rdma_proc (`rpcrdma2_proc`). 2 and 3 have no arm (wire notes C4).
    pub struct Proc(u32) {
        RDMA2_MSG = 0,
        RDMA2_NOMSG = 1,
        RDMA2_ERROR = 4,
        RDMA2_OPTIONAL = 5,
    }
}

/// `rpcrdma2_chunk_lists`: rdma_direction (absent under -00), then the v1 lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Chunks<'a> {
    /// `None` only in the -00 envelope, which has no direction field.
    pub direction: Option<MsgType>,
    pub lists: ChunkLists<'a>,
}

impl<'a> Chunks<'a> {
    pub fn decode(r: &mut Reader<'a>, envelope: V2Envelope) -> Result<Self, DecodeError> {
        let direction = match envelope {
            V2Envelope::Draft01 => Some(MsgType::decode(r, "rdma_direction")?),
            V2Envelope::Draft00 => None,
        };
        Ok(Chunks { direction, lists: ChunkLists::decode(r)? })
    }

    pub fn encoded_len(&self) -> usize {
        self.direction.map_or(0, |_| 4) + self.lists.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if let Some(d) = self.direction {
            w.u32(d.0)?;
        }
        self.lists.encode(w)
    }
}

/// The meaning of an RDMA2_ERROR, independent of its code's numbering (wire notes 1.6, 1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorBody {
    /// RDMA2_ERR_VERS (1 in every revision).
    Vers { low: u32, high: u32 },
    /// RDMA2_ERR_BAD_HEADER (-01: 2).
    BadHeader,
    /// RDMA2_ERR_BAD_XDR (-02 on: 2).
    BadXdr,
    /// RDMA2_ERR_CANT_REPLY (-02: 3).
    CantReply { processed: bool, segment_index: u32, length_needed: u32 },
    /// RDMA2_ERR_INVAL_PROC (-02: 4, -04: 3).
    InvalProc,
    /// RDMA2_ERR_READ_CHUNKS (-04: 4).
    ReadChunks { max_chunks: u32 },
    /// RDMA2_ERR_WRITE_CHUNKS (-04: 5).
    WriteChunks { max_chunks: u32 },
    /// RDMA2_ERR_SEGMENTS (-04: 6).
    Segments { max_segments: u32 },
    /// RDMA2_ERR_WRITE_RESOURCE (-04: 7).
    WriteResource { chunk_index: u32, length_needed: u32 },
    /// RDMA2_ERR_REPLY_RESOURCE (-04: 8).
    ReplyResource { length_needed: u32 },
    /// RDMA2_ERR_INVAL_OPTION (-01: 3, -02: 5, -04: 9).
    InvalOption,
    /// RDMA2_ERR_SYSTEM (-03: 6, -04: 10).
    System,
}

impl ErrorBody {
    /// The rdma_err value of this error under `numbering`, if it has one there.
    pub fn code(&self, numbering: V2ErrorNumbering) -> Option<u32> {
        use ErrorBody as E;
        use V2ErrorNumbering as N;
        Some(match (numbering, self) {
            (_, E::Vers { .. }) => 1,
            (N::Draft01, E::BadHeader) => 2,
            (N::Draft01, E::InvalOption) => 3,
            (N::Draft02 | N::Draft04, E::BadXdr) => 2,
            (N::Draft02, E::CantReply { .. }) => 3,
            (N::Draft02, E::InvalProc) => 4,
            (N::Draft02, E::InvalOption) => 5,
            (N::Draft02, E::System) => 6,
            (N::Draft04, E::InvalProc) => 3,
            (N::Draft04, E::ReadChunks { .. }) => 4,
            (N::Draft04, E::WriteChunks { .. }) => 5,
            (N::Draft04, E::Segments { .. }) => 6,
            (N::Draft04, E::WriteResource { .. }) => 7,
            (N::Draft04, E::ReplyResource { .. }) => 8,
            (N::Draft04, E::InvalOption) => 9,
            (N::Draft04, E::System) => 10,
            _ => return None,
        })
    }

    /// The error for a transport header that cannot be parsed: RDMA2_ERR_BAD_HEADER under
    /// -00/-01 (4.2.3), RDMA2_ERR_BAD_XDR from -02 on (wire notes 1.6: "If a receiver
    /// recognizes the value in the rdma_proc field but the incoming RPC-over-RDMA transport
    /// header cannot be parsed, it MUST send RDMA2_ERR_BAD_XDR").
    pub fn unparsable(numbering: V2ErrorNumbering) -> ErrorBody {
        match numbering {
            V2ErrorNumbering::Draft01 => ErrorBody::BadHeader,
            V2ErrorNumbering::Draft02 | V2ErrorNumbering::Draft04 => ErrorBody::BadXdr,
        }
    }

    /// The error for an rdma_proc value the receiver does not recognize: RDMA2_ERR_BAD_HEADER
    /// under -00/-01, RDMA2_ERR_INVAL_PROC from -02 on (wire notes 1.6: "it does not
    /// recognize the value in the rdma_proc field, it MUST send RDMA2_ERR_INVAL_PROC").
    pub fn unknown_proc(numbering: V2ErrorNumbering) -> ErrorBody {
        match numbering {
            V2ErrorNumbering::Draft01 => ErrorBody::BadHeader,
            V2ErrorNumbering::Draft02 | V2ErrorNumbering::Draft04 => ErrorBody::InvalProc,
        }
    }

    /// The XDR enum name.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorBody::Vers { .. } => "RDMA2_ERR_VERS",
            ErrorBody::BadHeader => "RDMA2_ERR_BAD_HEADER",
            ErrorBody::BadXdr => "RDMA2_ERR_BAD_XDR",
            ErrorBody::CantReply { .. } => "RDMA2_ERR_CANT_REPLY",
            ErrorBody::InvalProc => "RDMA2_ERR_INVAL_PROC",
            ErrorBody::ReadChunks { .. } => "RDMA2_ERR_READ_CHUNKS",
            ErrorBody::WriteChunks { .. } => "RDMA2_ERR_WRITE_CHUNKS",
            ErrorBody::Segments { .. } => "RDMA2_ERR_SEGMENTS",
            ErrorBody::WriteResource { .. } => "RDMA2_ERR_WRITE_RESOURCE",
            ErrorBody::ReplyResource { .. } => "RDMA2_ERR_REPLY_RESOURCE",
            ErrorBody::InvalOption => "RDMA2_ERR_INVAL_OPTION",
            ErrorBody::System => "RDMA2_ERR_SYSTEM",
        }
    }

    /// Bytes of the arm after rdma_err.
    pub fn body_len(&self) -> usize {
        match self {
            ErrorBody::Vers { .. } | ErrorBody::WriteResource { .. } => 8,
            ErrorBody::CantReply { .. } => 12,
            ErrorBody::ReadChunks { .. }
            | ErrorBody::WriteChunks { .. }
            | ErrorBody::Segments { .. }
            | ErrorBody::ReplyResource { .. } => 4,
            _ => 0,
        }
    }

    fn encode_arm(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match *self {
            ErrorBody::Vers { low, high } => {
                w.u32(low)?;
                w.u32(high)
            }
            ErrorBody::CantReply { processed, segment_index, length_needed } => {
                w.bool(processed)?;
                w.u32(segment_index)?;
                w.u32(length_needed)
            }
            ErrorBody::ReadChunks { max_chunks } | ErrorBody::WriteChunks { max_chunks } => w.u32(max_chunks),
            ErrorBody::Segments { max_segments } => w.u32(max_segments),
            ErrorBody::WriteResource { chunk_index, length_needed } => {
                w.u32(chunk_index)?;
                w.u32(length_needed)
            }
            ErrorBody::ReplyResource { length_needed } => w.u32(length_needed),
            _ => Ok(()),
        }
    }
}

/// `rpcrdma2_error`: the rdma_err word as sent and what it means under the decoding profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorInfo {
    pub code: u32,
    pub body: ErrorBody,
}

impl ErrorInfo {
    /// `body` with its code under `numbering`; None when that numbering lacks it.
    pub fn new(body: ErrorBody, numbering: V2ErrorNumbering) -> Option<ErrorInfo> {
        Some(ErrorInfo { code: body.code(numbering)?, body })
    }

    /// Decodes rdma_err and its arm; a code with no arm is `unknown-error-code`.
    pub fn decode(r: &mut Reader<'_>, numbering: V2ErrorNumbering) -> Result<ErrorInfo, DecodeError> {
        use ErrorBody as E;
        use V2ErrorNumbering as N;
        let at = r.offset();
        let code = r.u32("rdma_err")?;
        let body = match (numbering, code) {
            (_, 1) => E::Vers { low: r.u32("rdma_vers_low")?, high: r.u32("rdma_vers_high")? },
            (N::Draft01, 2) => E::BadHeader,
            (N::Draft01, 3) => E::InvalOption,
            (N::Draft02 | N::Draft04, 2) => E::BadXdr,
            (N::Draft02, 3) => E::CantReply {
                processed: r.bool("rdma_processed")?,
                segment_index: r.u32("rdma_segment_index")?,
                length_needed: r.u32("rdma_length_needed")?,
            },
            (N::Draft02, 4) | (N::Draft04, 3) => E::InvalProc,
            (N::Draft02, 5) | (N::Draft04, 9) => E::InvalOption,
            (N::Draft02, 6) | (N::Draft04, 10) => E::System,
            (N::Draft04, 4) => E::ReadChunks { max_chunks: r.u32("rdma_max_chunks")? },
            (N::Draft04, 5) => E::WriteChunks { max_chunks: r.u32("rdma_max_chunks")? },
            (N::Draft04, 6) => E::Segments { max_segments: r.u32("rdma_max_segments")? },
            (N::Draft04, 7) => E::WriteResource {
                chunk_index: r.u32("rdma_chunk_index")?,
                length_needed: r.u32("rdma_length_needed")?,
            },
            (N::Draft04, 8) => E::ReplyResource { length_needed: r.u32("rdma_length_needed")? },
            (_, value) => return Err(DecodeError::new("rdma_err", at, ErrorKind::UnknownErrorCode { value })),
        };
        Ok(ErrorInfo { code, body })
    }

    pub fn encoded_len(&self) -> usize {
        4 + self.body.body_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.code)?;
        self.body.encode_arm(w)
    }
}
