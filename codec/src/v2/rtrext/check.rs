//! The rtrext-03 rules over a decoded operation.

use super::ops::Op;
use super::placement::{facts, GrpInfo, Loc, RsdGroup, RsdRange, XmdpType};
use crate::check::Violations;
use crate::chunk::SEGMENT_LEN;
use crate::v2::types::MsgType;

// Semantic checks

crate::check::rule_table! {
    "Rules [`check`](super::check) can report (IDs `rtrext-03/<section>/<slug>`).", 2;
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
    let mut item = |length: u32, kind: XmdpType, empty: bool| {
        if in_request && matches!(kind, XmdpType::XMPTYPE_TOOSHORT | XmdpType::XMPTYPE_NOITEM) {
            out.rule(&rules::RESULT_TYPE_IN_REQUEST, Some(kind.0 as u64), None);
        }
        if empty && length > 0 {
            out.rule(&rules::NO_LOCATION, Some(length as u64), None);
        }
    };
    let (f, wanted) = (dp.facts(), facts::NO_LOCATION | if in_request { facts::RESULT_TYPE } else { 0 });
    if f & facts::KNOWN != 0 && f & wanted == 0 {
        return;
    }
    match dp.wire_bytes() {
        // A decoded array: its bytes were validated, so the three facts each rule needs are
        // read in place (xmdmi_length, the xmdp_loc discriminant, the count of its arm).
        Some(b) => {
            let word = |at: usize| crate::chunk::word(b, at).unwrap_or(0) as usize;
            let mut at = 0;
            for _ in 0..dp.len() {
                let kind = XmdpType(word(at + 8) as u32);
                let (count, next) = match kind {
                    XmdpType::XMPTYPE_EXRW => (word(at + 12), at + 16 + SEGMENT_LEN * word(at + 12)),
                    XmdpType::XMPTYPE_TBSN => (word(at + 16), at + 20 + 4 * word(at + 16)),
                    _ => (1, at + 12),
                };
                item(word(at + 4) as u32, kind, count == 0);
                at = next;
            }
        }
        None => {
            for m in dp.iter() {
                let empty = match &m.loc {
                    Loc::Exrw(s) => s.is_empty(),
                    Loc::Tbsn { bsnum, .. } => bsnum.is_empty(),
                    Loc::TooShort | Loc::NoItem => false,
                };
                item(m.length, m.loc.kind(), empty);
            }
        }
    }
}

fn check_rsd(rsd: &RsdGroup<'_>, out: &mut Violations) {
    let f = rsd.facts();
    if f & facts::KNOWN != 0 && f & facts::RANGES == 0 {
        return;
    }
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
            if dir == Some(MsgType::REPLY) {
                out.rule(&rules::XMTREQ_NOT_CALL, Some(1), None);
            }
            if o.count == 0 {
                out.rule(&rules::XMTREQ_COUNT_ZERO, Some(0), None);
            }
            check_dp(&o.dp, true, out);
            check_rsd(&o.rsd, out);
        }
        Op::XmtResp(o) => {
            if dir == Some(MsgType::CALL) {
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
