//! Builds Version Two messages from plain values, well-formed or malformed on purpose.

use super::header::OptInfo;
use super::types::{field, ErrorInfo, MsgType, Proc, VERSION};
use crate::chunk::{ChunkWriter, ReadSegment, Segment, READ_ENTRY_LEN, SEGMENT_LEN};
use crate::error::EncodeError;
use crate::profile::V2Envelope;
use crate::xdr::{pad4, round_up4, Writer};

#[derive(Debug, Clone, Copy)]
enum Shape<'s> {
    Lists,
    Error(ErrorInfo),
    Optional { opttype: u32, info: OptInfo<'s> },
}

/// Builds Version Two messages from plain values: well-formed by default, malformed on
/// purpose through the `raw_*` methods and [`HeaderBuilder::draft00`].
///
/// ```
/// use rpcrdma_codec::v2::{HeaderBuilder, MsgType, OptInfo};
/// let mut buf = [0u8; 64];
/// let n = HeaderBuilder::optional(7, 32, MsgType::CALL, 99, OptInfo::Raw(&[1, 2, 3]))
///     .encode(&mut buf)
///     .unwrap();
/// assert_eq!(n, 16 + 4 + 4 + 4 + 4);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HeaderBuilder<'s> {
    xid: u32,
    vers: u32,
    credit: u32,
    proc_: u32,
    shape: Shape<'s>,
    /// The rdma_direction / rdma_optdir word; None omits it (the -00 envelope).
    dir: Option<u32>,
    reads: &'s [ReadSegment],
    writes: &'s [&'s [Segment]],
    reply: Option<&'s [Segment]>,
    optinfo_len: Option<u32>,
    raw_body: Option<&'s [u8]>,
    payload: &'s [u8],
}

impl<'s> HeaderBuilder<'s> {
    fn new(xid: u32, credit: u32, proc_: Proc, dir: Option<MsgType>, shape: Shape<'s>) -> Self {
        HeaderBuilder {
            xid,
            vers: VERSION,
            credit,
            proc_: proc_.0,
            shape,
            dir: dir.map(|d| d.0),
            reads: &[],
            writes: &[],
            reply: None,
            optinfo_len: None,
            raw_body: None,
            payload: &[],
        }
    }

    /// RDMA2_MSG with no chunks.
    pub fn msg(xid: u32, credit: u32, direction: MsgType) -> Self {
        Self::new(xid, credit, Proc::RDMA2_MSG, Some(direction), Shape::Lists)
    }

    /// RDMA2_NOMSG with no chunks.
    pub fn nomsg(xid: u32, credit: u32, direction: MsgType) -> Self {
        Self::new(xid, credit, Proc::RDMA2_NOMSG, Some(direction), Shape::Lists)
    }

    /// RDMA2_ERROR (no direction field: "always Responder-to-Requester", -01 4.2.2).
    pub fn error(xid: u32, credit: u32, error: ErrorInfo) -> Self {
        Self::new(xid, credit, Proc::RDMA2_ERROR, None, Shape::Error(error))
    }

    /// RDMA2_OPTIONAL with this opttype and optinfo.
    pub fn optional(xid: u32, credit: u32, dir: MsgType, opttype: u32, info: OptInfo<'s>) -> Self {
        Self::new(xid, credit, Proc::RDMA2_OPTIONAL, Some(dir), Shape::Optional { opttype, info })
    }

    pub fn read_list(mut self, segments: &'s [ReadSegment]) -> Self {
        self.reads = segments;
        self
    }

    pub fn write_list(mut self, chunks: &'s [&'s [Segment]]) -> Self {
        self.writes = chunks;
        self
    }

    pub fn reply_chunk(mut self, segments: &'s [Segment]) -> Self {
        self.reply = Some(segments);
        self
    }

    /// Bytes written after the header (the RPC payload).
    pub fn payload(mut self, payload: &'s [u8]) -> Self {
        self.payload = payload;
        self
    }

    /// Omits rdma_direction / rdma_optdir: the -00 envelope.
    pub fn draft00(mut self) -> Self {
        self.dir = None;
        self
    }

    /// The envelope of `envelope`: unchanged under -01, [`HeaderBuilder::draft00`] under -00
    /// (a profile's [`V2Envelope`] choice).
    pub fn envelope(self, envelope: V2Envelope) -> Self {
        match envelope {
            V2Envelope::Draft01 => self,
            V2Envelope::Draft00 => self.draft00(),
        }
    }

    /// Any rdma_direction / rdma_optdir word (e.g. 2).
    pub fn raw_direction(mut self, dir: u32) -> Self {
        self.dir = Some(dir);
        self
    }

    pub fn raw_vers(mut self, vers: u32) -> Self {
        self.vers = vers;
        self
    }

    /// Any rdma_proc word; the body written stays the constructor's.
    pub fn raw_proc(mut self, proc_: u32) -> Self {
        self.proc_ = proc_;
        self
    }

    /// Any rdma_err word for an RDMA2_ERROR (the arm written stays the body's).
    pub fn raw_error_code(mut self, code: u32) -> Self {
        if let Shape::Error(e) = &mut self.shape {
            e.code = code;
        }
        self
    }

    /// An rdma_optinfo length word that differs from the data written (pad follows the data).
    pub fn raw_optinfo_length(mut self, len: u32) -> Self {
        self.optinfo_len = Some(len);
        self
    }

    /// Replaces everything after the fixed fields (payload included) with these bytes.
    pub fn raw_body(mut self, body: &'s [u8]) -> Self {
        self.raw_body = Some(body);
        self
    }

    /// The exact length [`HeaderBuilder::encode`] writes, payload included.
    pub fn encoded_len(&self) -> usize {
        let dir = self.dir.map_or(0, |_| 4);
        field::BODY
            + match (self.raw_body, self.shape) {
                (Some(raw), _) => return field::BODY + raw.len(),
                (None, Shape::Lists) => {
                    let writes: usize = self.writes.iter().map(|c| 8 + SEGMENT_LEN * c.len()).sum();
                    let reply = self.reply.map_or(0, |c| 4 + SEGMENT_LEN * c.len());
                    dir + READ_ENTRY_LEN * self.reads.len() + 4 + writes + 4 + 4 + reply
                }
                (None, Shape::Error(e)) => e.encoded_len(),
                (None, Shape::Optional { info, .. }) => dir + 8 + round_up4(info.data_len()),
            }
            + self.payload.len()
    }

    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.vers)?;
        w.u32(self.credit)?;
        w.u32(self.proc_)?;
        if let Some(raw) = self.raw_body {
            return w.bytes(raw);
        }
        match self.shape {
            Shape::Lists => {
                if let Some(d) = self.dir {
                    w.u32(d)?;
                }
                ChunkWriter::read_list(w, self.reads.iter().copied())?;
                ChunkWriter::write_list(w, self.writes)?;
                ChunkWriter::reply_chunk(w, self.reply)?;
            }
            Shape::Error(e) => e.encode(w)?,
            Shape::Optional { opttype, info } => {
                if let Some(d) = self.dir {
                    w.u32(d)?;
                }
                w.u32(opttype)?;
                let at = w.reserve_u32()?;
                info.encode_data(w)?;
                let n = w.len() - at - 4;
                w.patch_u32(at, self.optinfo_len.unwrap_or(n as u32));
                w.zeros(pad4(n))?;
            }
        }
        w.bytes(self.payload)
    }

    /// Writes the message into `buf`; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        if let (None, None, Some(dir), Shape::Optional { opttype, info }) =
            (self.raw_body, self.optinfo_len, self.dir, &self.shape)
        {
            let fixed = [self.xid, self.vers, self.credit, self.proc_, dir, *opttype];
            if let Some(n) = super::put::optional(buf, fixed, info, self.payload) {
                return Ok(n);
            }
        }
        let mut w = Writer::new(buf);
        self.write(&mut w)?;
        Ok(w.len())
    }
}

crate::xdr::impl_encode! {
    HeaderBuilder<'_> => write, fast encode;
}
