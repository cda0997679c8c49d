//! The four rtrext-03 operations (section 9) and their opttypes.

use super::placement::{no_arm, GrpInfo, RsdGroup};
use crate::error::{DecodeError, EncodeError};
use crate::profile::{Profile, RtrextOpttypes};
use crate::v2::types::MsgType;
use crate::xdr::{wire_enum, Array, Reader, Writer};

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

wire_enum! {
    /// `enum optr_err` (section 9.5).
    pub struct OptrErr(u32) {
        OPTRERR_BADHMT = 1,
        OPTRERR_BADOMT = 2,
        OPTRERR_BADCONT = 3,
        OPTRERR_BADSEQ = 4,
        OPTRERR_BADXID = 5,
        OPTRERR_BADOFF = 6,
        OPTRERR_BADTBSN = 7,
        OPTRERR_BADPL = 8,
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
        let which = OptrErr(r.u32("optre_which")?);
        let detail = match which {
            OptrErr::OPTRERR_BADHMT | OptrErr::OPTRERR_BADOMT | OptrErr::OPTRERR_BADSEQ | OptrErr::OPTRERR_BADXID => {
                OptrDetail::ExpCur { expect: r.u32("optri_expect")?, current: r.u32("optri_current")? }
            }
            OptrErr::OPTRERR_BADCONT => OptrDetail::None,
            OptrErr::OPTRERR_BADTBSN | OptrErr::OPTRERR_BADOFF | OptrErr::OPTRERR_BADPL => {
                OptrDetail::Range { value: r.u32("optri_value")?, min: r.u32("optri_min")?, max: r.u32("optri_max")? }
            }
            OptrErr(v) => return Err(no_arm("optre_which", at, v)),
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
        w.u32(self.which.0)?;
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
        w.u32(self.dir.0)?;
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
    #[inline]
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

crate::xdr::impl_encode! {
    Op<'_> => encode;
}
