//! Transport characteristics: draft-dnoveck-nfsv4-rpcrdma-xcharext-02, carried in
//! RDMA2_OPTIONAL (opttypes ROPT_INITXCH..ROPT_UPDXCH = 1..4, section 4 Table 2), with the
//! corrected XDR (wire notes X1-X14) and the property-id tables of wire notes R11.
//!
//! An `xcharval` whose id is known is typed and checked while decoding (section 2.1: too
//! short, too long or invalid data is an XDR error, named `xchv_data`); unknown ids are kept
//! as raw bytes and skipped.

use core::ops::RangeInclusive;

use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::profile::{Profile, PropertyIds, RtrextOpttypes, SubsetBitOrder};
use crate::rtrext::XmrbsBuf;
use crate::v2::{Array, ArrayIter, Item};
use crate::xdr::{round_up4, Reader, Writer};

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

/// `enum bkreqsup` (section 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BkReqSup {
    None = 0,
    Inline = 1,
    Genl = 2,
}

impl BkReqSup {
    pub fn from_u32(v: u32) -> Option<BkReqSup> {
        Some(match v {
            0 => BkReqSup::None,
            1 => BkReqSup::Inline,
            2 => BkReqSup::Genl,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            BkReqSup::None => "BKREQSUP_NONE",
            BkReqSup::Inline => "BKREQSUP_INLINE",
            BkReqSup::Genl => "BKREQSUP_GENL",
        }
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
            Characteristic::Brs(b) => w.u32(b as u32),
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
        let which = r.u32("xchv_which")?;
        let base = r.offset() + 4;
        let data = r.opaque(DATA, u32::MAX)?;
        typed(which, data, base, ids)?;
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
            Characteristic::Brs(BkReqSup::from_u32(value).ok_or(DecodeError::new(
                DATA,
                at,
                ErrorKind::InvalidEnum { value },
            ))?)
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
/// 32 in word N div 32" (section 2.1), LSB-first unless the profile says otherwise (X9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XcharSubset<'a> {
    words: Array<'a, u32>,
    order: SubsetBitOrder,
}

/// Word index and mask of bit `n`.
pub fn bit_mask(n: usize, order: SubsetBitOrder) -> (usize, u32) {
    let b = (n % 32) as u32;
    let mask = match order {
        SubsetBitOrder::LsbFirst => 1 << b,
        SubsetBitOrder::MsbFirst => 1 << (31 - b),
    };
    (n / 32, mask)
}

/// Sets bit `n` in `words` (for building); false when `words` is too short.
pub fn set_bit(words: &mut [u32], n: usize, order: SubsetBitOrder) -> bool {
    let (i, mask) = bit_mask(n, order);
    match words.get_mut(i) {
        Some(w) => {
            *w |= mask;
            true
        }
        None => false,
    }
}

impl<'a> XcharSubset<'a> {
    pub const fn new(words: &'a [u32], order: SubsetBitOrder) -> Self {
        XcharSubset { words: Array::from_slice(words), order }
    }

    pub fn decode(r: &mut Reader<'a>, field: Field, order: SubsetBitOrder) -> Result<Self, DecodeError> {
        Ok(XcharSubset { words: Array::decode(r, field)?, order })
    }

    /// How many words were sent.
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Word `i`; "Words beyond the last one specified are treated as containing zero".
    pub fn word(&self, i: usize) -> u32 {
        self.words.get(i).unwrap_or(0)
    }

    pub fn words(&self) -> ArrayIter<'a, u32> {
        self.words.iter()
    }

    pub fn order(&self) -> SubsetBitOrder {
        self.order
    }

    /// Whether the xcharval at position `n` is in the subset.
    pub fn is_set(&self, n: usize) -> bool {
        let (i, mask) = bit_mask(n, self.order);
        self.word(i) & mask != 0
    }

    /// The positions in the subset, ascending.
    pub fn bits(&self) -> SetBits<'a> {
        SetBits { words: self.words.iter(), order: self.order, next_word: 0, base: 0, cur: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.words().all(|w| w == 0)
    }

    pub fn encoded_len(&self) -> usize {
        self.words.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.words.encode(w)
    }
}

/// Iterator over the set bits of an [`XcharSubset`].
#[derive(Debug, Clone)]
pub struct SetBits<'a> {
    words: ArrayIter<'a, u32>,
    order: SubsetBitOrder,
    next_word: usize,
    base: usize,
    /// The current word with bit N at position N (LSB-first).
    cur: u32,
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            let w = self.words.next()?;
            self.base = self.next_word * 32;
            self.next_word += 1;
            self.cur = match self.order {
                SubsetBitOrder::LsbFirst => w,
                SubsetBitOrder::MsbFirst => w.reverse_bits(),
            };
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.base + b)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    fn decode<'a>(opttype: u32, b: &'a [u8], p: &Profile) -> Result<Op<'a>, DecodeError> {
        let mut r = Reader::new(b);
        let op = Op::decode(opttype, &mut r, p)?.unwrap();
        r.expect_empty("rdma_optinfo")?;
        let mut out = [0u8; 256];
        let mut w = Writer::new(&mut out);
        op.encode(&mut w).unwrap();
        assert_eq!(w.written(), b);
        assert_eq!(op.encoded_len(), b.len());
        Ok(op)
    }

    // 4.1: optinfo_initxch { xcharspec optixch_start; xcharsubset optixch_nochg; }, with
    // Table 1's RBSIZ (uint32), REQREMINV (bool), BRS (bkreqsup) and RBSIZ unchangeable.
    #[test]
    fn initxch_with_the_three_characteristics() {
        let b = words(&[3, 1, 4, 8192, 2, 4, 1, 3, 4, 2, 1, 0b1]);
        let Op::InitXch(o) = decode(ROPT_INITXCH, &b, &Profile::default()).unwrap() else { panic!() };
        let ids = PropertyIds::Xcharext02;
        let got: std::vec::Vec<_> = o.start.characteristics().map(Result::unwrap).collect();
        assert_eq!(
            got,
            [Characteristic::RbSiz(8192), Characteristic::ReqRemInv(true), Characteristic::Brs(BkReqSup::Genl)]
        );
        assert_eq!(o.start.iter().nth(2).unwrap().characteristic(ids).unwrap().name(), "BRS");
        assert!(o.nochg.is_set(0) && !o.nochg.is_set(1) && !o.nochg.is_set(40));
        assert_eq!(o.nochg.bits().collect::<std::vec::Vec<_>>(), [0]);
    }

    #[test]
    fn unknown_and_experimental_ids_are_kept_raw() {
        let b = words(&[2, 77, 3, 0xaabbcc00, 0xffff_ff01, 0]);
        let Op::ReqXch(o) = decode(ROPT_REQXCH, &b, &Profile::default()).unwrap() else { panic!() };
        let mut c = o.want.characteristics().map(Result::unwrap);
        assert_eq!(c.next(), Some(Characteristic::Unknown { id: 77, data: &[0xaa, 0xbb, 0xcc] }));
        assert_eq!(c.next(), Some(Characteristic::Experimental { id: 0xffff_ff01, data: &[] }));
        assert!(o.want.iter().nth(1).unwrap().is_experimental());
        assert!(!o.want.iter().next().unwrap().is_experimental());
    }

    #[test]
    fn known_values_are_checked() {
        let p = Profile::default();
        // REQREMINV = 2: "not valid when interpreted using the characteristic-associated typedef".
        let e = decode(ROPT_REQXCH, &words(&[1, 2, 4, 2]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::NotBool { value: 2 }));
        let e = decode(ROPT_REQXCH, &words(&[1, 3, 4, 3]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::InvalidEnum { value: 3 }));
        // Too short (no data) and too long (8 bytes for a uint32).
        let e = decode(ROPT_REQXCH, &words(&[1, 1, 0]), &p).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated { needed: 4, available: 0 });
        let e = decode(ROPT_REQXCH, &words(&[1, 1, 8, 4096, 0]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("xchv_data", 16, ErrorKind::TrailingData { extra: 4 }));
        // "extends beyond the bounds of the message".
        let e = decode(ROPT_REQXCH, &words(&[1, 1, 12, 4096]), &p).unwrap_err();
        assert_eq!(e, DecodeError::new("xchv_data", 12, ErrorKind::Truncated { needed: 12, available: 4 }));
        let e = decode(ROPT_REQXCH, &words(&[0x1000_0000, 1]), &p).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
    }

    #[test]
    fn v2_03_ids_move_brs_and_add_rtrext_properties() {
        let p = Profile { property_ids: PropertyIds::V2Draft03, ..Profile::default() };
        // BRS=2 INLINE; RBSTRUCT=4 {8192, [{2, {4096, 4096, PLT}}]}; 3 is RTRSUPP (uint32 7).
        let b = words(&[3, 2, 4, 1, 4, 24, 8192, 1, 2, 4096, 4096, 1, 3, 4, 7]);
        let Op::ReqXch(o) = decode(ROPT_REQXCH, &b, &p).unwrap() else { panic!() };
        let c: std::vec::Vec<_> = o.want.characteristics().map(Result::unwrap).collect();
        assert_eq!(c[0], Characteristic::Brs(BkReqSup::Inline));
        let Characteristic::RbStruct(buf) = c[1] else { panic!() };
        assert_eq!(buf.length, 8192);
        assert_eq!(buf.groups.get(0).unwrap().count, 2);
        assert_eq!(c[2], Characteristic::RtrSupp(7));
        assert_eq!(Known::Brs.id(PropertyIds::V2Draft03), Some(2));
        assert_eq!(Known::ReqRemInv.id(PropertyIds::V2Draft03), None);
        // A truncated RBSTRUCT is an xchv_data error.
        let e = decode(ROPT_REQXCH, &words(&[1, 4, 8, 8192, 1]), &p).unwrap_err();
        assert_eq!(e.field, "xchv_data");
        assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
    }

    #[test]
    fn subset_bits_in_two_words_and_both_orders() {
        let b = words(&[2, 0b101, 0x8000_0000, 0, 0]);
        let Op::RespXch(o) = decode(ROPT_RESPXCH, &b, &Profile::default()).unwrap() else { panic!() };
        assert_eq!(o.done.bits().collect::<std::vec::Vec<_>>(), [0, 2, 63]);
        assert!(o.rej.is_empty() && o.pend.word_count() == 0);
        let p = Profile { subset_bit_order: SubsetBitOrder::MsbFirst, ..Profile::default() };
        let Op::RespXch(o) = decode(ROPT_RESPXCH, &b, &p).unwrap() else { panic!() };
        assert_eq!(o.done.bits().collect::<std::vec::Vec<_>>(), [29, 31, 32]);
        let mut ws = [0u32; 2];
        assert!(set_bit(&mut ws, 32, SubsetBitOrder::MsbFirst) && !set_bit(&mut ws, 64, SubsetBitOrder::LsbFirst));
        assert_eq!(ws, [0, 0x8000_0000]);
    }

    #[test]
    fn updxch_and_building_from_values() {
        let b = words(&[1, 4, 16384, 1]);
        let Op::UpdXch(o) = decode(ROPT_UPDXCH, &b, &Profile::default()).unwrap() else { panic!() };
        assert!(o.pendclr);
        let e = decode(ROPT_UPDXCH, &words(&[1, 4, 16384, 5]), &Profile::default()).unwrap_err();
        assert_eq!(e, DecodeError::new("optupdxch_pendclr", 12, ErrorKind::NotBool { value: 5 }));
        let vals = [XcharVal::new(XCHAR_RBSIZ, &[0, 0, 0x20, 0]), XcharVal::new(99, &[1])];
        let op = Op::InitXch(InitXch {
            start: XcharSpec::new(&vals, PropertyIds::Xcharext02),
            nochg: XcharSubset::new(&[0b10], SubsetBitOrder::LsbFirst),
        });
        let mut out = [0u8; 64];
        let mut w = Writer::new(&mut out);
        op.encode(&mut w).unwrap();
        assert_eq!(w.written(), &words(&[2, 1, 4, 0x2000, 99, 1, 0x0100_0000, 1, 2])[..]);
        assert_eq!(op.encoded_len(), w.len());
    }

    #[test]
    fn literal_rtrext_numbering_disowns_1_to_4() {
        let mut p = Profile::default();
        assert!(is_opttype(1, &p) && !is_opttype(5, &p));
        p.rtrext_opttypes = RtrextOpttypes::Literal;
        assert!(!is_opttype(1, &p));
    }
}
