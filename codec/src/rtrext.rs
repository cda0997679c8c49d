//! Round-trip reductions: draft-dnoveck-nfsv4-rpcrdma-rtrext-03 (message continuation and
//! send-based data placement), carried in RDMA2_OPTIONAL, with the corrected XDR (wire notes
//! R1-R17). Opttypes are 5..8 (the draft's Table 4) or 1..4 (its XDR) by profile (R10).
//!
//! The draft's validity split (section 6.2 Table 1, R17) is kept exactly: a placement type
//! with no arm in its union is a decode error (`invalid-enum`), a placement that decodes but
//! is wrong for its context is reported by [`check`].

use crate::chunk::Segment;
use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::profile::{Profile, RtrextOpttypes};
use crate::v2::{Array, Item, MsgType, Violations};
use crate::xdr::{Reader, Writer};

/// Opttypes as the draft's XDR writes them (section 9, profile `rtrext-literal`).
pub const ROPT_XMTREQ: u32 = 1;
pub const ROPT_XMTRESP: u32 = 2;
pub const ROPT_XMTCONT: u32 = 3;
pub const ROPT_REPTERR: u32 = 4;
/// Opttypes of the operations table (section 9.1 Table 4), the default.
pub const TABLE_XMTREQ: u32 = 5;

/// Property ids (section 8.1 Table 3; V2 -03 id table only, R11).
pub const XPROP_RTRSUPP: u32 = 3;
pub const XPROP_RBSTRUCT: u32 = 4;
pub const XPROP_REQRXLIM: u32 = 5;
pub const XPROP_RESPSXLIM: u32 = 6;
/// `xpr_rtrs` bits (section 8.2).
pub const RTRS_XREQ: u32 = 1;
pub const RTRS_XRESP: u32 = 2;
pub const RTRS_XCONT: u32 = 4;
/// `xmrseg_flags`: the segment is a target for data placement (section 7.2).
pub const XMRSFLAG_PLT: u32 = 0x01;

/// The four operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    XmtReq,
    XmtResp,
    XmtCont,
    ReptErr,
}

impl OpKind {
    pub fn opttype(self, numbering: RtrextOpttypes) -> u32 {
        let first = match numbering {
            RtrextOpttypes::Combined => TABLE_XMTREQ,
            RtrextOpttypes::Literal => ROPT_XMTREQ,
        };
        first + self as u32
    }

    pub fn from_opttype(opttype: u32, numbering: RtrextOpttypes) -> Option<OpKind> {
        [OpKind::XmtReq, OpKind::XmtResp, OpKind::XmtCont, OpKind::ReptErr]
            .into_iter()
            .find(|k| k.opttype(numbering) == opttype)
    }
}

/// `enum xmdp_type` (section 6.2; `XMPTYPE_CHOOSE` read as `XMPTYPE_CHOICE`, R1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XmdpType {
    Exrw = 1,
    Tbsn = 2,
    Choice = 3,
    BySize = 4,
    TooShort = 5,
    NoItem = 6,
}

impl XmdpType {
    pub fn from_u32(v: u32) -> Option<XmdpType> {
        Some(match v {
            1 => XmdpType::Exrw,
            2 => XmdpType::Tbsn,
            3 => XmdpType::Choice,
            4 => XmdpType::BySize,
            5 => XmdpType::TooShort,
            6 => XmdpType::NoItem,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            XmdpType::Exrw => "XMPTYPE_EXRW",
            XmdpType::Tbsn => "XMPTYPE_TBSN",
            XmdpType::Choice => "XMPTYPE_CHOICE",
            XmdpType::BySize => "XMPTYPE_BYSIZE",
            XmdpType::TooShort => "XMPTYPE_TOOSHORT",
            XmdpType::NoItem => "XMPTYPE_NOITEM",
        }
    }
}

fn no_arm(field: Field, at: usize, value: u32) -> DecodeError {
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
            Loc::Exrw(_) => XmdpType::Exrw,
            Loc::Tbsn { .. } => XmdpType::Tbsn,
            Loc::TooShort => XmdpType::TooShort,
            Loc::NoItem => XmdpType::NoItem,
        }
    }

    /// Decodes the union; its discriminant is reported as `xmdmi_where`.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.offset();
        Ok(match r.u32("xmdmi_where")? {
            1 => Loc::Exrw(Array::decode(r, "xmdl_ex")?),
            2 => Loc::Tbsn { offset: r.u32("xmdl_offset")?, bsnum: Array::decode(r, "xmdl_bsnum")? },
            5 => Loc::TooShort,
            6 => Loc::NoItem,
            v => return Err(no_arm("xmdmi_where", at, v)),
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
        w.u32(self.kind() as u32)?;
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
            RsdLoc::Exrw(_) => XmdpType::Exrw,
            RsdLoc::Choice(_) => XmdpType::Choice,
            RsdLoc::BySize { .. } => XmdpType::BySize,
            RsdLoc::Tbsn => XmdpType::Tbsn,
        }
    }

    /// Decodes the union; its discriminant is reported as `xmdrsdi_loc`.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.offset();
        Ok(match r.u32("xmdrsdi_loc")? {
            1 => RsdLoc::Exrw(Array::decode(r, "xmdrsdl_ex")?),
            3 => RsdLoc::Choice(Array::decode(r, "xmdrsdl_ex")?),
            4 => RsdLoc::BySize { dsdov: r.u32("xmdrsdl_dsdov")?, bsex: Array::decode(r, "xmdrsdl_bsex")? },
            2 => RsdLoc::Tbsn,
            v => return Err(no_arm("xmdrsdi_loc", at, v)),
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
        w.u32(self.kind() as u32)?;
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

/// `struct optxmt_req` (section 9.2). The payload stream follows the padded optinfo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XmtReq<'a> {
    pub dp: GrpInfo<'a>,
    pub rsd: RsdGroup<'a>,
    /// `optxrq_count`: transmissions in the group.
    pub count: u32,
    /// `optxrq_rsbuf`: receive buffers reserved for the response.
    pub rsbuf: u32,
    /// `optxrq_pslen`: payload bytes in this transmission (R15).
    pub pslen: u32,
}

/// `struct optxmt_resp` (section 9.3; `optxrs_count` read as `xms_grpxc`, R12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XmtResp<'a> {
    pub dp: GrpInfo<'a>,
    pub count: u32,
    pub pslen: u32,
}

/// `struct optxmt_cont` (section 9.4, R4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct XmtCont {
    /// `optxc_xnum`: this transmission's number in its group (first continuation = 1, R16).
    pub xnum: u32,
    /// `optxc_itype`: undocumented (R14), kept raw.
    pub itype: u32,
    pub pslen: u32,
}

/// `enum optr_err` (section 9.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptrErr {
    BadHmt = 1,
    BadOmt = 2,
    BadCont = 3,
    BadSeq = 4,
    BadXid = 5,
    BadOff = 6,
    BadTbsn = 7,
    BadPl = 8,
}

impl OptrErr {
    pub fn from_u32(v: u32) -> Option<OptrErr> {
        Some(match v {
            1 => OptrErr::BadHmt,
            2 => OptrErr::BadOmt,
            3 => OptrErr::BadCont,
            4 => OptrErr::BadSeq,
            5 => OptrErr::BadXid,
            6 => OptrErr::BadOff,
            7 => OptrErr::BadTbsn,
            8 => OptrErr::BadPl,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            OptrErr::BadHmt => "OPTRERR_BADHMT",
            OptrErr::BadOmt => "OPTRERR_BADOMT",
            OptrErr::BadCont => "OPTRERR_BADCONT",
            OptrErr::BadSeq => "OPTRERR_BADSEQ",
            OptrErr::BadXid => "OPTRERR_BADXID",
            OptrErr::BadOff => "OPTRERR_BADOFF",
            OptrErr::BadTbsn => "OPTRERR_BADTBSN",
            OptrErr::BadPl => "OPTRERR_BADPL",
        }
    }
}

/// The arm of `union optr_info` (R3: `optr_expcur`, void, `optr_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptrDetail {
    ExpCur { expect: u32, current: u32 },
    None,
    Range { value: u32, min: u32, max: u32 },
}

/// `union optr_info` (section 9.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptrInfo {
    pub which: OptrErr,
    pub detail: OptrDetail,
}

impl OptrInfo {
    /// `which` with its arm (the arm's shape follows `which`).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let at = r.offset();
        let v = r.u32("optre_which")?;
        let which = OptrErr::from_u32(v).ok_or(no_arm("optre_which", at, v))?;
        let detail = match which {
            OptrErr::BadHmt | OptrErr::BadOmt | OptrErr::BadSeq | OptrErr::BadXid => {
                OptrDetail::ExpCur { expect: r.u32("optri_expect")?, current: r.u32("optri_current")? }
            }
            OptrErr::BadCont => OptrDetail::None,
            OptrErr::BadTbsn | OptrErr::BadOff | OptrErr::BadPl => {
                OptrDetail::Range { value: r.u32("optri_value")?, min: r.u32("optri_min")?, max: r.u32("optri_max")? }
            }
        };
        Ok(OptrInfo { which, detail })
    }

    pub fn encoded_len(&self) -> usize {
        4 + match self.detail {
            OptrDetail::ExpCur { .. } => 8,
            OptrDetail::None => 0,
            OptrDetail::Range { .. } => 12,
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.which as u32)?;
        match self.detail {
            OptrDetail::ExpCur { expect, current } => {
                w.u32(expect)?;
                w.u32(current)
            }
            OptrDetail::None => Ok(()),
            OptrDetail::Range { value, min, max } => {
                w.u32(value)?;
                w.u32(min)?;
                w.u32(max)
            }
        }
    }
}

/// `struct xms_id` (section 6.1): one transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct XmsId {
    pub xid: u32,
    pub dir: MsgType,
    pub seq: u32,
}

impl XmsId {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(XmsId { xid: r.u32("xmsi_xid")?, dir: MsgType::decode(r, "xmsi_dir")?, seq: r.u32("xmsi_seq")? })
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(self.dir as u32)?;
        w.u32(self.seq)
    }
}

/// `struct optrept_err` (section 9.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReptErr {
    pub bad: XmsId,
    /// `*optre_lead`.
    pub lead: Option<XmsId>,
    pub info: OptrInfo,
}

/// An rtrext operation: the structure overlaying rdma_optinfo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    XmtReq(XmtReq<'a>),
    XmtResp(XmtResp<'a>),
    XmtCont(XmtCont),
    ReptErr(ReptErr),
}

impl<'a> Op<'a> {
    /// Decodes the operation for `opttype`, or returns None when it is not an rtrext one.
    pub fn decode(opttype: u32, r: &mut Reader<'a>, profile: &Profile) -> Result<Option<Self>, DecodeError> {
        let Some(kind) = OpKind::from_opttype(opttype, profile.rtrext_opttypes) else { return Ok(None) };
        Ok(Some(match kind {
            OpKind::XmtReq => Op::XmtReq(XmtReq {
                dp: Array::decode(r, "optxrq_dp")?,
                rsd: Array::decode(r, "optxrq_rsd")?,
                count: r.u32("optxrq_count")?,
                rsbuf: r.u32("optxrq_rsbuf")?,
                pslen: r.u32("optxrq_pslen")?,
            }),
            OpKind::XmtResp => Op::XmtResp(XmtResp {
                dp: Array::decode(r, "optxrs_dp")?,
                count: r.u32("optxrs_count")?,
                pslen: r.u32("optxrs_pslen")?,
            }),
            OpKind::XmtCont => Op::XmtCont(XmtCont {
                xnum: r.u32("optxc_xnum")?,
                itype: r.u32("optxc_itype")?,
                pslen: r.u32("optxc_pslen")?,
            }),
            OpKind::ReptErr => {
                let bad = XmsId::decode(r)?;
                let lead = if r.bool("optre_lead")? { Some(XmsId::decode(r)?) } else { None };
                Op::ReptErr(ReptErr { bad, lead, info: OptrInfo::decode(r)? })
            }
        }))
    }

    pub fn kind(&self) -> OpKind {
        match self {
            Op::XmtReq(_) => OpKind::XmtReq,
            Op::XmtResp(_) => OpKind::XmtResp,
            Op::XmtCont(_) => OpKind::XmtCont,
            Op::ReptErr(_) => OpKind::ReptErr,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::XmtReq(_) => "ROPT_XMTREQ",
            Op::XmtResp(_) => "ROPT_XMTRESP",
            Op::XmtCont(_) => "ROPT_XMTCONT",
            Op::ReptErr(_) => "ROPT_REPTERR",
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Op::XmtReq(_) => "optxmt_req",
            Op::XmtResp(_) => "optxmt_resp",
            Op::XmtCont(_) => "optxmt_cont",
            Op::ReptErr(_) => "optrept_err",
        }
    }

    /// The payload-stream length this transmission announces, for the three that carry one.
    pub fn pslen(&self) -> Option<u32> {
        match self {
            Op::XmtReq(o) => Some(o.pslen),
            Op::XmtResp(o) => Some(o.pslen),
            Op::XmtCont(o) => Some(o.pslen),
            Op::ReptErr(_) => None,
        }
    }

    pub fn encoded_len(&self) -> usize {
        match self {
            Op::XmtReq(o) => o.dp.encoded_len() + o.rsd.encoded_len() + 12,
            Op::XmtResp(o) => o.dp.encoded_len() + 8,
            Op::XmtCont(_) => 12,
            Op::ReptErr(o) => 12 + 4 + o.lead.map_or(0, |_| 12) + o.info.encoded_len(),
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            Op::XmtReq(o) => {
                o.dp.encode(w)?;
                o.rsd.encode(w)?;
                w.u32(o.count)?;
                w.u32(o.rsbuf)?;
                w.u32(o.pslen)
            }
            Op::XmtResp(o) => {
                o.dp.encode(w)?;
                w.u32(o.count)?;
                w.u32(o.pslen)
            }
            Op::XmtCont(o) => {
                w.u32(o.xnum)?;
                w.u32(o.itype)?;
                w.u32(o.pslen)
            }
            Op::ReptErr(o) => {
                o.bad.encode(w)?;
                match &o.lead {
                    Some(l) => {
                        w.u32(1)?;
                        l.encode(w)?;
                    }
                    None => w.u32(0)?,
                }
                o.info.encode(w)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Semantic checks

crate::check::rule_table! {
    "Rules [`check`](super::check) can report (IDs `rtrext-03/<section>/<slug>`).";
    RESULT_TYPE_IN_REQUEST = "rtrext-03/6.2/result-type-in-request", MustNot,
        "The cases for XMPTYPE_TOOSHORT and XMPTYPE_NOITEM are only valid in responses (Table 1: xmdp_loc in request, Sem. Invalid).";
    NO_LOCATION = "rtrext-03/7.3/no-location", Must,
        "An xmdp_loc shows where a particular piece of bulk data is located: the bulk data starts xmdl_offset bytes into the buffer segment designated by xmdl_bsnum[0]; xmdl_ex holds the segments it is fetched from or transferred to.";
    RSDRANGE_INVERTED = "rtrext-03/7.4/rsdrange-inverted", Must,
        "An xmdp_rsdrange denotes a range of positions in the XDR stream associated with a request (xmdrsdr_begin <= xmdrsdr_end).";
    RSDRANGE_ORDER = "rtrext-03/7.4/rsdrange-order", Must,
        "The xmdrsds_range fields of successive xmdp_rsdsets must be disjoint and in strictly increasing order.";
    PSLEN_BEYOND_TRANSMISSION = "rtrext-03/9.1/pslen-beyond-transmission", Must,
        "The payload stream begins right after the end of the optxmt_cont and proceeds for optxc_pslen bytes (OPTRERR_BADPL: the area devoted to the payload stream must be a subset of the actual transmission).";
    XMTREQ_NOT_CALL = "rtrext-03/9.2/xmtreq-not-call", Must,
        "A Transmit Request carries (part of) an RPC call: when a payload is present, the value of the rdma_optdir field MUST be the same as the value of the associated RPC message's msg_type field (v2-01 4.2.2).";
    XMTREQ_COUNT_ZERO = "rtrext-03/9.2/count-zero", Must,
        "The field optrq_count specifies the count of transmissions in this group of transmissions used to send a request (at least this one).";
    XMTRESP_NOT_REPLY = "rtrext-03/9.3/xmtresp-not-reply", Must,
        "A Transmit Response carries (part of) an RPC reply: when a payload is present, the value of the rdma_optdir field MUST be the same as the value of the associated RPC message's msg_type field (v2-01 4.2.2).";
    XMTRESP_COUNT_ZERO = "rtrext-03/9.3/count-zero", Must,
        "The field optrs_count specifies the count of transmissions in this group of transmissions used to send a reply (at least this one).";
    XNUM_ZERO = "rtrext-03/9.4/xnum-zero", Must,
        "The field optxc_xnum indicates the transmission number of this transmission within its transmission group (the initial ROPT_XMTREQ/ROPT_XMTRESP is number 0, wire notes R16).";
}

fn check_dp(dp: &GrpInfo<'_>, in_request: bool, out: &mut Violations) {
    for m in dp.iter() {
        let kind = m.loc.kind();
        if in_request && matches!(kind, XmdpType::TooShort | XmdpType::NoItem) {
            out.rule(&rules::RESULT_TYPE_IN_REQUEST, Some(kind as u64), None);
        }
        let empty = match &m.loc {
            Loc::Exrw(s) => s.is_empty(),
            Loc::Tbsn { bsnum, .. } => bsnum.is_empty(),
            Loc::TooShort | Loc::NoItem => false,
        };
        if empty && m.length > 0 {
            out.rule(&rules::NO_LOCATION, Some(m.length as u64), None);
        }
    }
}

fn check_rsd(rsd: &RsdGroup<'_>, out: &mut Violations) {
    let mut prev: Option<RsdRange> = None;
    for s in rsd.iter() {
        if s.range.begin > s.range.end {
            out.rule(&rules::RSDRANGE_INVERTED, Some(s.range.begin as u64), None);
        }
        // Ranges are read as half-open [begin, end): the next may start where one ends.
        if prev.is_some_and(|p| s.range.begin < p.end) {
            out.rule(&rules::RSDRANGE_ORDER, Some(s.range.begin as u64), None);
        }
        prev = Some(s.range);
    }
}

/// Checks an rtrext operation sent with rdma_optdir `dir` (None under -00) and followed by
/// `payload_len` bytes, adding what it finds to `out`.
pub fn check_into(op: &Op<'_>, dir: Option<MsgType>, payload_len: usize, out: &mut Violations) {
    if op.pslen().is_some_and(|n| n as usize > payload_len) {
        out.rule(&rules::PSLEN_BEYOND_TRANSMISSION, op.pslen().map(u64::from), None);
    }
    match op {
        Op::XmtReq(o) => {
            if dir == Some(MsgType::Reply) {
                out.rule(&rules::XMTREQ_NOT_CALL, Some(1), None);
            }
            if o.count == 0 {
                out.rule(&rules::XMTREQ_COUNT_ZERO, Some(0), None);
            }
            check_dp(&o.dp, true, out);
            check_rsd(&o.rsd, out);
        }
        Op::XmtResp(o) => {
            if dir == Some(MsgType::Call) {
                out.rule(&rules::XMTRESP_NOT_REPLY, Some(0), None);
            }
            if o.count == 0 {
                out.rule(&rules::XMTRESP_COUNT_ZERO, Some(0), None);
            }
            check_dp(&o.dp, false, out);
        }
        Op::XmtCont(o) => {
            if o.xnum == 0 {
                out.rule(&rules::XNUM_ZERO, Some(0), None);
            }
        }
        Op::ReptErr(_) => {}
    }
}

/// [`check_into`] with a fresh result.
pub fn check(op: &Op<'_>, dir: Option<MsgType>, payload_len: usize) -> Violations {
    let mut out = Violations::default();
    check_into(op, dir, payload_len, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    fn decode(kind: OpKind, b: &[u8]) -> Result<Op<'_>, DecodeError> {
        let p = Profile::default();
        let mut r = Reader::new(b);
        let op = Op::decode(kind.opttype(p.rtrext_opttypes), &mut r, &p)?.unwrap();
        r.expect_empty("rdma_optinfo")?;
        let mut out = [0u8; 512];
        let mut w = Writer::new(&mut out);
        op.encode(&mut w).unwrap();
        assert_eq!(w.written(), b);
        assert_eq!(op.encoded_len(), b.len());
        Ok(op)
    }

    fn ids(v: &Violations) -> std::vec::Vec<&'static str> {
        v.iter().map(|v| v.rule.id).collect()
    }

    #[test]
    fn opttype_numbering() {
        assert_eq!(OpKind::XmtReq.opttype(RtrextOpttypes::Combined), 5);
        assert_eq!(OpKind::ReptErr.opttype(RtrextOpttypes::Combined), 8);
        assert_eq!(OpKind::from_opttype(3, RtrextOpttypes::Literal), Some(OpKind::XmtCont));
        assert_eq!(OpKind::from_opttype(3, RtrextOpttypes::Combined), None);
    }

    // 9.2 optxmt_req: one EXRW item (like a read chunk) and one TBSN item, a response
    // direction set with a CHOICE and a BYSIZE item; 1 transmission, 2 reserved, 100 bytes.
    #[test]
    fn xmtreq_with_every_request_placement() {
        let b = words(&[
            2, // optxrq_dp
            0, 8192, 1, 1, 0x11, 8192, 0, 0x4000, // EXRW: one segment
            8192, 16, 2, 12, 2, 3, 4, // TBSN: offset 12 into segments 3, 4
            1, // optxrq_rsd
            100, 200, 2, // range 100..200, two items
            512, 3, 1, 0x22, 4096, 0, 0x8000, // CHOICE
            1024, 4, 2048, 0, // BYSIZE, no segments
            1, 2, 100,
        ]);
        let Op::XmtReq(o) = decode(OpKind::XmtReq, &b).unwrap() else { panic!() };
        let m: std::vec::Vec<_> = o.dp.iter().collect();
        assert_eq!(m[0].loc.kind(), XmdpType::Exrw);
        let Loc::Exrw(segs) = m[0].loc else { panic!() };
        assert_eq!(segs.get(0), Some(Segment::new(0x11, 8192, 0x4000)));
        let Loc::Tbsn { offset, bsnum } = m[1].loc else { panic!() };
        assert_eq!((offset, bsnum.iter().collect::<std::vec::Vec<_>>()), (12, std::vec![3, 4]));
        let set = o.rsd.get(0).unwrap();
        assert_eq!(set.range, RsdRange { begin: 100, end: 200 });
        let items: std::vec::Vec<_> = set.items.iter().collect();
        assert_eq!(items[0].loc.kind(), XmdpType::Choice);
        assert!(matches!(items[1].loc, RsdLoc::BySize { dsdov: 2048, bsex } if bsex.is_empty()));
        assert_eq!((o.count, o.rsbuf, o.pslen), (1, 2, 100));
        assert!(check(&Op::XmtReq(o), Some(MsgType::Call), 100).is_empty());
    }

    // Table 1: CHOICE/BYSIZE in an xmdp_loc and TOOSHORT/NOITEM in an xmdp_rsdloc are "XDR
    // Invalid"; TOOSHORT/NOITEM in a request's xmdp_loc are "Sem. Invalid".
    #[test]
    fn the_validity_split() {
        let e = decode(OpKind::XmtResp, &words(&[1, 0, 10, 3, 0, 1, 0])).unwrap_err();
        assert_eq!(e, DecodeError::new("xmdmi_where", 12, ErrorKind::InvalidEnum { value: 3 }));
        let e = decode(OpKind::XmtReq, &words(&[0, 1, 0, 8, 1, 0, 5, 1, 0, 0])).unwrap_err();
        assert_eq!(e, DecodeError::new("xmdrsdi_loc", 24, ErrorKind::InvalidEnum { value: 5 }));
        let b = words(&[1, 0, 10, 6, 0, 1, 0, 0]);
        let op = decode(OpKind::XmtReq, &b).unwrap();
        assert_eq!(ids(&check(&op, Some(MsgType::Call), 0)), ["rtrext-03/6.2/result-type-in-request"]);
        let b = words(&[2, 0, 10, 5, 20, 30, 6, 1, 0]);
        let op = decode(OpKind::XmtResp, &b).unwrap();
        assert!(check(&op, Some(MsgType::Reply), 0).is_empty());
    }

    #[test]
    fn request_checks() {
        // Empty EXRW location for 10 bytes, ranges 50..40 then 30..60, count 0, pslen 8 > 4.
        let b = words(&[1, 0, 10, 1, 0, 2, 50, 40, 0, 30, 60, 0, 0, 0, 8]);
        let op = decode(OpKind::XmtReq, &b).unwrap();
        let got = ids(&check(&op, Some(MsgType::Reply), 4));
        assert_eq!(
            got,
            [
                "rtrext-03/9.1/pslen-beyond-transmission",
                "rtrext-03/9.2/xmtreq-not-call",
                "rtrext-03/9.2/count-zero",
                "rtrext-03/7.3/no-location",
                "rtrext-03/7.4/rsdrange-inverted",
                "rtrext-03/7.4/rsdrange-order",
            ]
        );
    }

    #[test]
    fn cont_and_report_error() {
        let b = words(&[0, 5, 0]);
        let op = decode(OpKind::XmtCont, &b).unwrap();
        assert_eq!(ids(&check(&op, None, 0)), ["rtrext-03/9.4/xnum-zero"]);
        let b = words(&[7, 0, 2, 1, 7, 0, 0, 4, 1, 3]);
        let Op::ReptErr(o) = decode(OpKind::ReptErr, &b).unwrap() else { panic!() };
        assert_eq!(o.bad, XmsId { xid: 7, dir: MsgType::Call, seq: 2 });
        assert_eq!(o.lead, Some(XmsId { xid: 7, dir: MsgType::Call, seq: 0 }));
        assert_eq!(o.info, OptrInfo { which: OptrErr::BadSeq, detail: OptrDetail::ExpCur { expect: 1, current: 3 } });
        let e = decode(OpKind::ReptErr, &words(&[7, 2, 2, 0, 3])).unwrap_err();
        assert_eq!(e, DecodeError::new("xmsi_dir", 4, ErrorKind::InvalidEnum { value: 2 }));
        let e = decode(OpKind::ReptErr, &words(&[7, 0, 2, 0, 9])).unwrap_err();
        assert_eq!(e, DecodeError::new("optre_which", 16, ErrorKind::InvalidEnum { value: 9 }));
        let e = decode(OpKind::ReptErr, &words(&[7, 0, 2, 2, 3])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotBool { value: 2 });
    }

    #[test]
    fn huge_counts_fail_before_looping() {
        let e = decode(OpKind::XmtResp, &words(&[0x4000_0000, 0, 0])).unwrap_err();
        assert_eq!(e.field, "optxrs_dp");
        assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. }));
        let e = decode(OpKind::XmtResp, &words(&[1, 0, 0, 1, 0xffff_ffff, 0, 0])).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                "xmdl_ex",
                16,
                ErrorKind::CountExceedsInput { count: u32::MAX, element_size: 16, available: 8 }
            )
        );
    }

    #[test]
    fn building_from_values() {
        let segs = [Segment::new(1, 2, 3)];
        let items = [Mitem { disp: 4, length: 2, loc: Loc::Exrw(Array::from_slice(&segs)) }];
        let op = Op::XmtResp(XmtResp { dp: Array::from_slice(&items), count: 1, pslen: 0 });
        let mut out = [0u8; 64];
        let mut w = Writer::new(&mut out);
        op.encode(&mut w).unwrap();
        assert_eq!(w.written(), &words(&[1, 4, 2, 1, 1, 1, 2, 0, 3, 1, 0])[..]);
        assert_eq!(op.encoded_len(), w.len());
        let buf = XmrbsBuf {
            length: 4096,
            groups: Array::from_slice(&[XmrbsGroup {
                count: 1,
                info: XmrbsSeg { length: 4096, align: 64, flags: XMRSFLAG_PLT },
            }]),
        };
        assert_eq!(buf.encoded_len(), 24);
        assert!(buf.groups.get(0).unwrap().info.is_placement_target());
    }

    #[test]
    fn rule_ids_are_unique() {
        for (i, r) in rules::ALL.iter().enumerate() {
            assert!(r.id.starts_with("rtrext-03/"));
            assert!(rules::ALL[i + 1..].iter().all(|o| o.id != r.id), "{}", r.id);
        }
    }
}
