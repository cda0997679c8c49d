//! The placement structures of rtrext-03 sections 6 and 7: where excised bulk data is
//! (`xmdp_loc`, `xmdp_mitem`), where the responder is to put it (`xmdp_rsdloc`, ...), and the
//! receive buffer structure (`xmrbs_buf`).

use crate::chunk::Segment;
use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::xdr::{wire_enum, Array, Item, Reader, Writer};

/// `xmrseg_flags`: the segment is a target for data placement (section 7.2).
pub const XMRSFLAG_PLT: u32 = 0x01;

wire_enum! {
    /// `enum xmdp_type` (section 6.2; `XMPTYPE_CHOOSE` read as `XMPTYPE_CHOICE`, R1).
    pub struct XmdpType(u32) {
        XMPTYPE_EXRW = 1,
        XMPTYPE_TBSN = 2,
        XMPTYPE_CHOICE = 3,
        XMPTYPE_BYSIZE = 4,
        XMPTYPE_TOOSHORT = 5,
        XMPTYPE_NOITEM = 6,
    }
}

/// What a scan of the whole message records of a placement array ([`Array::facts`]), so
/// that the rtrext checks need not walk an array that has nothing to report.
pub(crate) mod facts {
    /// The facts below were recorded (an array decoded field by field has none).
    pub const KNOWN: u8 = 1;
    /// `xmdp_mitem<>`: some xmdp_loc is XMPTYPE_TOOSHORT or XMPTYPE_NOITEM.
    pub const RESULT_TYPE: u8 = 2;
    /// `xmdp_mitem<>`: some item of nonzero length has an empty `xmdl_ex` or `xmdl_bsnum`.
    pub const NO_LOCATION: u8 = 4;
    /// `xmdp_rsdset<>`: some range is inverted or does not follow the one before it.
    pub const RANGES: u8 = 8;
}

pub(super) fn no_arm(field: Field, at: usize, value: u32) -> DecodeError {
    DecodeError::new(field, at, ErrorKind::InvalidEnum { value })
}

/// `union xmdp_loc` (section 7.3): where one item of bulk data is. CHOICE and BYSIZE have
/// no arm (XDR invalid in every context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loc<'a> {
    /// `xmdl_ex`: explicit RDMA segments.
    Exrw(Array<'a, Segment>),
    /// `xmdl_tbsn`: offset into the first of the target buffer segments `xmdl_bsnum`.
    Tbsn {
        offset: u32,
        bsnum: Array<'a, u32>,
    },
    TooShort,
    NoItem,
}

impl<'a> Loc<'a> {
    pub fn kind(&self) -> XmdpType {
        match self {
            Loc::Exrw(_) => XmdpType::XMPTYPE_EXRW,
            Loc::Tbsn { .. } => XmdpType::XMPTYPE_TBSN,
            Loc::TooShort => XmdpType::XMPTYPE_TOOSHORT,
            Loc::NoItem => XmdpType::XMPTYPE_NOITEM,
        }
    }

    /// Decodes the union; its discriminant is reported as `xmdmi_where`.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.offset();
        Ok(match XmdpType(r.u32("xmdmi_where")?) {
            XmdpType::XMPTYPE_EXRW => Loc::Exrw(Array::decode(r, "xmdl_ex")?),
            XmdpType::XMPTYPE_TBSN => {
                Loc::Tbsn { offset: r.u32("xmdl_offset")?, bsnum: Array::decode(r, "xmdl_bsnum")? }
            }
            XmdpType::XMPTYPE_TOOSHORT => Loc::TooShort,
            XmdpType::XMPTYPE_NOITEM => Loc::NoItem,
            XmdpType(v) => return Err(no_arm("xmdmi_where", at, v)),
        })
    }

    pub fn encoded_len(&self) -> usize {
        4 + match self {
            Loc::Exrw(s) => s.encoded_len(),
            Loc::Tbsn { bsnum, .. } => 4 + bsnum.encoded_len(),
            Loc::TooShort | Loc::NoItem => 0,
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.kind().0)?;
        match self {
            Loc::Exrw(s) => s.encode(w),
            Loc::Tbsn { offset, bsnum } => {
                w.u32(*offset)?;
                bsnum.encode(w)
            }
            Loc::TooShort | Loc::NoItem => Ok(()),
        }
    }
}

/// `struct xmdp_mitem` (section 7.3): one excised item and where it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mitem<'a> {
    /// `xmdmi_disp`: its displacement in the virtual XDR stream.
    pub disp: u32,
    /// `xmdmi_length`.
    pub length: u32,
    /// `xmdmi_where`.
    pub loc: Loc<'a>,
}

impl<'a> Item<'a> for Mitem<'a> {
    const MIN_LEN: usize = 12;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Mitem { disp: r.u32("xmdmi_disp")?, length: r.u32("xmdmi_length")?, loc: Loc::decode(r)? })
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.disp)?;
        w.u32(self.length)?;
        self.loc.encode(w)
    }
    fn encoded_len(&self) -> usize {
        8 + self.loc.encoded_len()
    }
}

/// `xmdp_grpinfo` (`xmdp_mitem<>`).
pub type GrpInfo<'a> = Array<'a, Mitem<'a>>;

/// `union xmdp_rsdloc` (section 7.4): where the responder is to put an item. TOOSHORT and
/// NOITEM have no arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RsdLoc<'a> {
    /// `xmdrsdl_ex`.
    Exrw(Array<'a, Segment>),
    /// `xmdrsdl_ex`, used if the responder chooses explicit RDMA.
    Choice(Array<'a, Segment>),
    /// `xmdrsdl_bysize`: threshold `xmdrsdl_dsdov` (meaning undocumented, R14) and `xmdrsdl_bsex`.
    BySize {
        dsdov: u32,
        bsex: Array<'a, Segment>,
    },
    Tbsn,
}

impl<'a> RsdLoc<'a> {
    pub fn kind(&self) -> XmdpType {
        match self {
            RsdLoc::Exrw(_) => XmdpType::XMPTYPE_EXRW,
            RsdLoc::Choice(_) => XmdpType::XMPTYPE_CHOICE,
            RsdLoc::BySize { .. } => XmdpType::XMPTYPE_BYSIZE,
            RsdLoc::Tbsn => XmdpType::XMPTYPE_TBSN,
        }
    }

    /// Decodes the union; its discriminant is reported as `xmdrsdi_loc`.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.offset();
        Ok(match XmdpType(r.u32("xmdrsdi_loc")?) {
            XmdpType::XMPTYPE_EXRW => RsdLoc::Exrw(Array::decode(r, "xmdrsdl_ex")?),
            XmdpType::XMPTYPE_CHOICE => RsdLoc::Choice(Array::decode(r, "xmdrsdl_ex")?),
            XmdpType::XMPTYPE_BYSIZE => {
                RsdLoc::BySize { dsdov: r.u32("xmdrsdl_dsdov")?, bsex: Array::decode(r, "xmdrsdl_bsex")? }
            }
            XmdpType::XMPTYPE_TBSN => RsdLoc::Tbsn,
            XmdpType(v) => return Err(no_arm("xmdrsdi_loc", at, v)),
        })
    }

    pub fn encoded_len(&self) -> usize {
        4 + match self {
            RsdLoc::Exrw(s) | RsdLoc::Choice(s) => s.encoded_len(),
            RsdLoc::BySize { bsex, .. } => 4 + bsex.encoded_len(),
            RsdLoc::Tbsn => 0,
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.kind().0)?;
        match self {
            RsdLoc::Exrw(s) | RsdLoc::Choice(s) => s.encode(w),
            RsdLoc::BySize { dsdov, bsex } => {
                w.u32(*dsdov)?;
                bsex.encode(w)
            }
            RsdLoc::Tbsn => Ok(()),
        }
    }
}

/// `struct xmdp_rsdrange` (section 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RsdRange {
    pub begin: u32,
    pub end: u32,
}

/// `struct xmdp_rsditem` (section 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RsdItem<'a> {
    /// `xmdrsdi_minlen`.
    pub minlen: u32,
    /// `xmdrsdi_loc`.
    pub loc: RsdLoc<'a>,
}

impl<'a> Item<'a> for RsdItem<'a> {
    const MIN_LEN: usize = 8;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(RsdItem { minlen: r.u32("xmdrsdi_minlen")?, loc: RsdLoc::decode(r)? })
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.minlen)?;
        self.loc.encode(w)
    }
    fn encoded_len(&self) -> usize {
        4 + self.loc.encoded_len()
    }
}

/// `struct xmdp_rsdset` (section 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RsdSet<'a> {
    /// `xmdrsds_range`.
    pub range: RsdRange,
    /// `xmdrsds_items`.
    pub items: Array<'a, RsdItem<'a>>,
}

impl<'a> Item<'a> for RsdSet<'a> {
    const MIN_LEN: usize = 12;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let range = RsdRange { begin: r.u32("xmdrsdr_begin")?, end: r.u32("xmdrsdr_end")? };
        Ok(RsdSet { range, items: Array::decode(r, "xmdrsds_items")? })
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.range.begin)?;
        w.u32(self.range.end)?;
        self.items.encode(w)
    }
    fn encoded_len(&self) -> usize {
        8 + self.items.encoded_len()
    }
}

/// `xmdp_rsdgroup` (`xmdp_rsdset<>`).
pub type RsdGroup<'a> = Array<'a, RsdSet<'a>>;

/// `struct xmrbs_seg` (section 7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct XmrbsSeg {
    pub length: u32,
    pub align: u32,
    pub flags: u32,
}

impl XmrbsSeg {
    /// XMRSFLAG_PLT: "suitable as a target for data placement".
    pub fn is_placement_target(&self) -> bool {
        self.flags & XMRSFLAG_PLT != 0
    }
}

/// `struct xmrbs_group` (section 7.2): `count` segments alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct XmrbsGroup {
    pub count: u32,
    pub info: XmrbsSeg,
}

impl<'a> Item<'a> for XmrbsGroup {
    const MIN_LEN: usize = 16;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let count = r.u32("xmrgrp_count")?;
        let info =
            XmrbsSeg { length: r.u32("xmrseg_length")?, align: r.u32("xmrseg_align")?, flags: r.u32("xmrseg_flags")? };
        Ok(XmrbsGroup { count, info })
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.count)?;
        w.u32(self.info.length)?;
        w.u32(self.info.align)?;
        w.u32(self.info.flags)
    }
    fn encoded_len(&self) -> usize {
        16
    }
}

/// `struct xmrbs_buf` (section 7.2), the Receive Buffer Structure property (`xpr_rbs`, 8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XmrbsBuf<'a> {
    pub length: u32,
    pub groups: Array<'a, XmrbsGroup>,
}

impl<'a> XmrbsBuf<'a> {
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(XmrbsBuf { length: r.u32("xmrbuf_length")?, groups: Array::decode(r, "xmrbuf_groups")? })
    }

    pub fn encoded_len(&self) -> usize {
        4 + self.groups.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.length)?;
        self.groups.encode(w)
    }
}
