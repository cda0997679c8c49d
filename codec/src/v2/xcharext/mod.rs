//! Transport characteristics: draft-dnoveck-nfsv4-rpcrdma-xcharext-02, carried in
//! RDMA2_OPTIONAL (opttypes ROPT_INITXCH..ROPT_UPDXCH = 1..4, section 4 Table 2), with the
//! corrected XDR (wire notes X1-X14) and the property-id tables of wire notes R11.
//!
//! An `xcharval` whose id is known is typed and checked while decoding (section 2.1: too
//! short, too long or invalid data is an XDR error, named `xchv_data`); unknown ids are kept
//! as raw bytes and skipped.

use core::ops::RangeInclusive;

use super::rtrext::XmrbsBuf;
use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::profile::{Profile, PropertyIds, RtrextOpttypes};
use crate::xdr::{round_up4, wire_enum, Array, ArrayIter, Item, Reader, Writer};

mod subset;
pub use subset::{bit_mask, set_bit, SetBits, XcharSubset};

/// Characteristic ids of xcharext-02 section 3 (Table 1).
pub const XCHAR_RBSIZ: u32 = 1;
pub const XCHAR_REQREMINV: u32 = 2;
pub const XCHAR_BRS: u32 = 3;
/// V2 -03 property id of Backward Request Support (`RDMA2_PROPID_BRS`, wire notes 1.7).
pub const RDMA2_PROPID_BRS: u32 = 2;
/// Ids reserved for experimental use (section 6.2: 4,294,967,040 to 4,294,967,295).
pub const EXPERIMENTAL_IDS: RangeInclusive<u32> = 0xFFFF_FF00..=0xFFFF_FFFF;

/// Opttypes of section 4 (Table 2).
pub const ROPT_INITXCH: u32 = 1;
pub const ROPT_REQXCH: u32 = 2;
pub const ROPT_RESPXCH: u32 = 3;
pub const ROPT_UPDXCH: u32 = 4;

const DATA: Field = "xchv_data";

/// Whether `id` is in the experimental range (section 6.2).
pub fn is_experimental(id: u32) -> bool {
    EXPERIMENTAL_IDS.contains(&id)
}

wire_enum! {
    /// `enum bkreqsup` (section 3.3).
    pub struct BkReqSup(u32) {
        BKREQSUP_NONE = 0,
        BKREQSUP_INLINE = 1,
        BKREQSUP_GENL = 2,
    }
}

/// The characteristics (properties) this codec can type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Known {
    /// Receive Buffer Size, uint32 (xcharext 3.1).
    RbSiz,
    /// Requester Remote Invalidation, bool (xcharext 3.2; not in V2 -03).
    ReqRemInv,
    /// Backward Request Support, enum bkreqsup (xcharext 3.3).
    Brs,
    /// rtrext-03 8.2-8.5 (V2 -03 ids only, wire notes R11).
    RtrSupp,
    RbStruct,
    ReqRxLim,
    RespSxLim,
}

impl Known {
    /// The characteristic with id `id` under the id table `ids`.
    pub fn from_id(id: u32, ids: PropertyIds) -> Option<Known> {
        Some(match (ids, id) {
            (_, 1) => Known::RbSiz,
            (PropertyIds::Xcharext02, 2) => Known::ReqRemInv,
            (PropertyIds::Xcharext02, 3) => Known::Brs,
            (PropertyIds::V2Draft03, 2) => Known::Brs,
            (PropertyIds::V2Draft03, 3) => Known::RtrSupp,
            (PropertyIds::V2Draft03, 4) => Known::RbStruct,
            (PropertyIds::V2Draft03, 5) => Known::ReqRxLim,
            (PropertyIds::V2Draft03, 6) => Known::RespSxLim,
            _ => return None,
        })
    }

    /// Its id under `ids`, if that table has it.
    pub fn id(self, ids: PropertyIds) -> Option<u32> {
        (1..=6).find(|&id| Known::from_id(id, ids) == Some(self))
    }

    /// The constant's name without prefix (`XCHAR_RBSIZ` -> `RBSIZ`, `XPROP_RTRSUPP` -> `RTRSUPP`).
    pub fn name(self) -> &'static str {
        match self {
            Known::RbSiz => "RBSIZ",
            Known::ReqRemInv => "REQREMINV",
            Known::Brs => "BRS",
            Known::RtrSupp => "RTRSUPP",
            Known::RbStruct => "RBSTRUCT",
            Known::ReqRxLim => "REQRXLIM",
            Known::RespSxLim => "RESPSXLIM",
        }
    }
}

/// A typed characteristic value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Characteristic<'a> {
    RbSiz(u32),
    ReqRemInv(bool),
    Brs(BkReqSup),
    /// `xpr_rtrs`: RTRS_XREQ | RTRS_XRESP | RTRS_XCONT bits.
    RtrSupp(u32),
    RbStruct(XmrbsBuf<'a>),
    ReqRxLim(u32),
    RespSxLim(u32),
    /// An id in the experimental range: not interpreted.
    Experimental {
        id: u32,
        data: &'a [u8],
    },
    /// Any other unknown id: "not processed" (section 2.1).
    Unknown {
        id: u32,
        data: &'a [u8],
    },
}

impl<'a> Characteristic<'a> {
    pub fn known(&self) -> Option<Known> {
        Some(match self {
            Characteristic::RbSiz(_) => Known::RbSiz,
            Characteristic::ReqRemInv(_) => Known::ReqRemInv,
            Characteristic::Brs(_) => Known::Brs,
            Characteristic::RtrSupp(_) => Known::RtrSupp,
            Characteristic::RbStruct(_) => Known::RbStruct,
            Characteristic::ReqRxLim(_) => Known::ReqRxLim,
            Characteristic::RespSxLim(_) => Known::RespSxLim,
            _ => return None,
        })
    }

    /// `RBSIZ` .. `RESPSXLIM`, `experimental` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Characteristic::Experimental { .. } => "experimental",
            Characteristic::Unknown { .. } => "unknown",
            c => c.known().map_or("unknown", Known::name),
        }
    }

    /// Length of the XDR value that goes in xchv_data.
    pub fn data_len(&self) -> usize {
        match self {
            Characteristic::RbStruct(b) => b.encoded_len(),
            Characteristic::Experimental { data, .. } | Characteristic::Unknown { data, .. } => data.len(),
            _ => 4,
        }
    }

    /// Writes the XDR value that goes in xchv_data.
    pub fn encode_data(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match *self {
            Characteristic::RbSiz(v)
            | Characteristic::RtrSupp(v)
            | Characteristic::ReqRxLim(v)
            | Characteristic::RespSxLim(v) => w.u32(v),
            Characteristic::ReqRemInv(b) => w.bool(b),
            Characteristic::Brs(b) => w.u32(b.0),
            Characteristic::RbStruct(b) => b.encode(w),
            Characteristic::Experimental { data, .. } | Characteristic::Unknown { data, .. } => w.bytes(data),
        }
    }
}

/// `struct xcharval` (section 2.1): an id and its nominally opaque value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct XcharVal<'a> {
    pub which: u32,
    pub data: &'a [u8],
}

impl<'a> XcharVal<'a> {
    pub const fn new(which: u32, data: &'a [u8]) -> Self {
        XcharVal { which, data }
    }

    /// Decodes an xcharval and, when its id is known under `ids`, checks its value.
    pub fn decode_checked(r: &mut Reader<'a>, ids: PropertyIds) -> Result<Self, DecodeError> {
        // The common case in one step: a one-word value (id, length 4, the word) that is valid.
        let rest = r.rest();
        if let Some(b) = rest.first_chunk::<12>() {
            let which = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let data = &rest[8..12];
            if b[4..8] == [0, 0, 0, 4] && one_word_value_is_valid(which, data, ids) {
                r.advance(12);
                return Ok(XcharVal { which, data });
            }
        }
        let which = r.u32("xchv_which")?;
        let base = r.offset() + 4;
        let data = r.opaque(DATA, u32::MAX)?;
        if !one_word_value_is_valid(which, data, ids) {
            typed(which, data, base, ids)?;
        }
        Ok(XcharVal { which, data })
    }

    /// The typed value under `ids` (decoded values were checked, so this cannot fail for them).
    pub fn characteristic(&self, ids: PropertyIds) -> Result<Characteristic<'a>, DecodeError> {
        typed(self.which, self.data, 0, ids)
    }

    /// Whether the id is in the experimental range (section 6.2).
    pub fn is_experimental(&self) -> bool {
        is_experimental(self.which)
    }
}

/// The common case of [`typed`] without building the value: a known one-word characteristic
/// whose word is valid. False sends the value to [`typed`], which checks it field by field.
#[inline]
pub(crate) fn one_word_value_is_valid(which: u32, data: &[u8], ids: PropertyIds) -> bool {
    let Ok(w) = <[u8; 4]>::try_from(data) else { return false };
    let v = u32::from_be_bytes(w);
    match Known::from_id(which, ids) {
        Some(Known::RbSiz | Known::RtrSupp | Known::ReqRxLim | Known::RespSxLim) => true,
        Some(Known::ReqRemInv) => v <= 1,
        Some(Known::Brs) => BkReqSup(v).is_known(),
        Some(Known::RbStruct) | None => false,
    }
}

/// Types `data` (first byte at absolute offset `base`) for the characteristic `which`.
fn typed<'a>(which: u32, data: &'a [u8], base: usize, ids: PropertyIds) -> Result<Characteristic<'a>, DecodeError> {
    let Some(known) = Known::from_id(which, ids) else {
        return Ok(if is_experimental(which) {
            Characteristic::Experimental { id: which, data }
        } else {
            Characteristic::Unknown { id: which, data }
        });
    };
    let mut r = Reader::with_base(data, base);
    let c = match known {
        Known::RbSiz => Characteristic::RbSiz(r.u32(DATA)?),
        Known::ReqRemInv => Characteristic::ReqRemInv(r.bool(DATA)?),
        Known::Brs => {
            let at = r.offset();
            let value = r.u32(DATA)?;
            let b = BkReqSup(value);
            if !b.is_known() {
                return Err(DecodeError::new(DATA, at, ErrorKind::InvalidEnum { value }));
            }
            Characteristic::Brs(b)
        }
        Known::RtrSupp => Characteristic::RtrSupp(r.u32(DATA)?),
        Known::RbStruct => {
            Characteristic::RbStruct(XmrbsBuf::decode(&mut r).map_err(|e| DecodeError::new(DATA, e.offset, e.kind))?)
        }
        Known::ReqRxLim => Characteristic::ReqRxLim(r.u32(DATA)?),
        Known::RespSxLim => Characteristic::RespSxLim(r.u32(DATA)?),
    };
    r.expect_empty(DATA)?;
    Ok(c)
}

impl<'a> Item<'a> for XcharVal<'a> {
    const MIN_LEN: usize = 8;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(XcharVal { which: r.u32("xchv_which")?, data: r.opaque(DATA, u32::MAX)? })
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.which)?;
        w.opaque(self.data)
    }
    fn encoded_len(&self) -> usize {
        8 + round_up4(self.data.len())
    }
}

/// `xcharspec` (`xcharval<>`, wire notes X2): validated once, then iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XcharSpec<'a> {
    vals: Array<'a, XcharVal<'a>>,
    ids: PropertyIds,
}

impl<'a> XcharSpec<'a> {
    /// A spec of plain values, typed under `ids`.
    pub const fn new(vals: &'a [XcharVal<'a>], ids: PropertyIds) -> Self {
        XcharSpec { vals: Array::from_slice(vals), ids }
    }

    /// Values already validated by a scan of the whole message.
    #[inline(always)]
    pub(crate) const fn from_wire(vals: Array<'a, XcharVal<'a>>, ids: PropertyIds) -> Self {
        XcharSpec { vals, ids }
    }

    /// The array of values, for the encoder's fast path.
    #[inline(always)]
    pub(crate) fn values(&self) -> &Array<'a, XcharVal<'a>> {
        &self.vals
    }

    /// Decodes the array (count in `field`) and checks every known value.
    pub fn decode(r: &mut Reader<'a>, field: Field, ids: PropertyIds) -> Result<Self, DecodeError> {
        Ok(XcharSpec { vals: Array::decode_with(r, field, |r| XcharVal::decode_checked(r, ids))?, ids })
    }

    pub fn len(&self) -> usize {
        self.vals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    /// The id table the values are typed with.
    pub fn ids(&self) -> PropertyIds {
        self.ids
    }

    pub fn iter(&self) -> ArrayIter<'a, XcharVal<'a>> {
        self.vals.iter()
    }

    /// Each value, typed (unknown and experimental ids included, as raw bytes).
    pub fn characteristics(&self) -> impl Iterator<Item = Result<Characteristic<'a>, DecodeError>> + 'a {
        let ids = self.ids;
        self.vals.iter().map(move |v| v.characteristic(ids))
    }

    pub fn encoded_len(&self) -> usize {
        self.vals.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.vals.encode(w)
    }
}

/// `xcharsubset` (`uint32<>`): a bit per position in an earlier xcharspec, "bit number N mod
/// `optinfo_initxch` (section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitXch<'a> {
    pub start: XcharSpec<'a>,
    pub nochg: XcharSubset<'a>,
}

/// `optinfo_reqxch` (section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReqXch<'a> {
    pub want: XcharSpec<'a>,
}

/// `optinfo_respxch` (section 4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RespXch<'a> {
    pub done: XcharSubset<'a>,
    pub rej: XcharSubset<'a>,
    pub pend: XcharSubset<'a>,
}

/// `optinfo_updxch` (section 4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdXch<'a> {
    pub now: XcharVal<'a>,
    pub pendclr: bool,
}

/// An xcharext operation: the structure overlaying rdma_optinfo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    InitXch(InitXch<'a>),
    ReqXch(ReqXch<'a>),
    RespXch(RespXch<'a>),
    UpdXch(UpdXch<'a>),
}

/// Whether `opttype` is an xcharext operation under `profile` (the rtrext-alone numbering
/// gives 1..4 to rtrext, wire notes R10).
pub fn is_opttype(opttype: u32, profile: &Profile) -> bool {
    profile.rtrext_opttypes == RtrextOpttypes::Combined && (ROPT_INITXCH..=ROPT_UPDXCH).contains(&opttype)
}

impl<'a> Op<'a> {
    /// Decodes the operation for `opttype`, or returns None when it is not an xcharext one.
    #[inline]
    pub fn decode(opttype: u32, r: &mut Reader<'a>, profile: &Profile) -> Result<Option<Self>, DecodeError> {
        if !is_opttype(opttype, profile) {
            return Ok(None);
        }
        let (ids, order) = (profile.property_ids, profile.subset_bit_order);
        Ok(Some(match opttype {
            ROPT_INITXCH => Op::InitXch(InitXch {
                start: XcharSpec::decode(r, "optixch_start", ids)?,
                nochg: XcharSubset::decode(r, "optixch_nochg", order)?,
            }),
            ROPT_REQXCH => Op::ReqXch(ReqXch { want: XcharSpec::decode(r, "optreqxch_want", ids)? }),
            ROPT_RESPXCH => Op::RespXch(RespXch {
                done: XcharSubset::decode(r, "optrespxch_done", order)?,
                rej: XcharSubset::decode(r, "optrespxch_rej", order)?,
                pend: XcharSubset::decode(r, "optrespxch_pend", order)?,
            }),
            _ => Op::UpdXch(UpdXch { now: XcharVal::decode_checked(r, ids)?, pendclr: r.bool("optupdxch_pendclr")? }),
        }))
    }

    /// The opttype (xcharext-02 Table 2).
    pub fn opttype(&self) -> u32 {
        match self {
            Op::InitXch(_) => ROPT_INITXCH,
            Op::ReqXch(_) => ROPT_REQXCH,
            Op::RespXch(_) => ROPT_RESPXCH,
            Op::UpdXch(_) => ROPT_UPDXCH,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::InitXch(_) => "ROPT_INITXCH",
            Op::ReqXch(_) => "ROPT_REQXCH",
            Op::RespXch(_) => "ROPT_RESPXCH",
            Op::UpdXch(_) => "ROPT_UPDXCH",
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Op::InitXch(_) => "optinfo_initxch",
            Op::ReqXch(_) => "optinfo_reqxch",
            Op::RespXch(_) => "optinfo_respxch",
            Op::UpdXch(_) => "optinfo_updxch",
        }
    }

    pub fn encoded_len(&self) -> usize {
        match self {
            Op::InitXch(o) => o.start.encoded_len() + o.nochg.encoded_len(),
            Op::ReqXch(o) => o.want.encoded_len(),
            Op::RespXch(o) => o.done.encoded_len() + o.rej.encoded_len() + o.pend.encoded_len(),
            Op::UpdXch(o) => o.now.encoded_len() + 4,
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            Op::InitXch(o) => {
                o.start.encode(w)?;
                o.nochg.encode(w)
            }
            Op::ReqXch(o) => o.want.encode(w),
            Op::RespXch(o) => {
                o.done.encode(w)?;
                o.rej.encode(w)?;
                o.pend.encode(w)
            }
            Op::UpdXch(o) => {
                o.now.encode(w)?;
                w.bool(o.pendclr)
            }
        }
    }
}

crate::xdr::impl_encode! {
    Op<'_> => encode;
}

#[cfg(test)]
mod tests;
