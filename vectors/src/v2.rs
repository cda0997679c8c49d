//! Summaries of Version Two headers (rdma_vers 2) with their optional operations.
//! Field names: the drafts' XDR names (see "Version Two field names" in vectors/README.md).

use rpcrdma_codec::hex::Hex;

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::profile::PropertyIds;
use rpcrdma_codec::rtrext::{self, GrpInfo, Loc, OptrDetail, RsdLoc, XmsId};
use rpcrdma_codec::v2::{self, Body, ErrorBody, Message, OptInfo};
use rpcrdma_codec::xcharext::{self, Characteristic, XcharSpec, XcharSubset, XcharVal};
use rpcrdma_codec::xdr::Array;
use rpcrdma_codec::{DecodeError, Profile};

fn seg(s: &Segment) -> String {
    format!("{:#x} {} {:#x}", s.handle, s.length, s.offset)
}

fn segments(d: &mut Decoded, name: &str, a: &Array<'_, Segment>) {
    d.fact(format!("{name}.count"), a.len());
    for (k, s) in a.iter().enumerate() {
        d.fact(format!("{name}[{k}]"), seg(&s));
    }
}

fn list(it: impl Iterator<Item = impl ToString>) -> String {
    let v: Vec<String> = it.map(|x| x.to_string()).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(" ")
    }
}

fn raw(b: &[u8]) -> String {
    if b.is_empty() {
        "empty".into()
    } else {
        Hex(b).to_string()
    }
}

/// `ID NAME VALUE`, plus sub-facts for a Receive Buffer Structure.
fn xcharval(d: &mut Decoded, name: &str, v: &XcharVal<'_>, ids: PropertyIds) {
    let c = v.characteristic(ids).expect("a decoded xcharval types");
    let value = match c {
        Characteristic::RbSiz(n)
        | Characteristic::RtrSupp(n)
        | Characteristic::ReqRxLim(n)
        | Characteristic::RespSxLim(n) => n.to_string(),
        Characteristic::ReqRemInv(b) => b.to_string(),
        Characteristic::Brs(b) => b.to_string(),
        Characteristic::RbStruct(b) => format!("{} {}", b.length, b.groups.len()),
        Characteristic::Experimental { data, .. } | Characteristic::Unknown { data, .. } => raw(data),
    };
    d.fact(name, format!("{} {} {}", v.which, c.name(), value));
    if let Characteristic::RbStruct(b) = c {
        for (k, g) in b.groups.iter().enumerate() {
            let s = g.info;
            d.fact(
                format!("{name}.xmrbuf_groups[{k}]"),
                format!("{} {} {} {:#x}", g.count, s.length, s.align, s.flags),
            );
        }
    }
}

fn spec(d: &mut Decoded, name: &str, s: &XcharSpec<'_>) {
    d.fact(format!("{name}.count"), s.len());
    for (i, v) in s.iter().enumerate() {
        xcharval(d, &format!("{name}[{i}]"), &v, s.ids());
    }
}

fn subset(d: &mut Decoded, name: &str, s: &XcharSubset<'_>) {
    d.fact(format!("{name}.words"), s.word_count());
    d.fact(format!("{name}.bits"), list(s.bits()));
}

fn grpinfo(d: &mut Decoded, name: &str, dp: &GrpInfo<'_>) {
    d.fact(format!("{name}.count"), dp.len());
    for (i, m) in dp.iter().enumerate() {
        let p = format!("{name}[{i}]");
        d.fact(format!("{p}.xmdmi_disp"), m.disp);
        d.fact(format!("{p}.xmdmi_length"), m.length);
        d.fact(format!("{p}.xmdmi_where"), m.loc.kind());
        match m.loc {
            Loc::Exrw(s) => segments(d, &format!("{p}.xmdl_ex"), &s),
            Loc::Tbsn { offset, bsnum } => {
                d.fact(format!("{p}.xmdl_offset"), offset);
                d.fact(format!("{p}.xmdl_bsnum"), list(bsnum.iter()));
            }
            Loc::TooShort | Loc::NoItem => {}
        }
    }
}

fn xms_id(x: &XmsId) -> String {
    format!("{:#x} {} {}", x.xid, x.dir, x.seq)
}

fn rtr(d: &mut Decoded, op: &rtrext::Op<'_>) {
    match op {
        rtrext::Op::XmtReq(o) => {
            grpinfo(d, "optxrq_dp", &o.dp);
            d.fact("optxrq_rsd.count", o.rsd.len());
            for (i, s) in o.rsd.iter().enumerate() {
                let p = format!("optxrq_rsd[{i}]");
                d.fact(format!("{p}.xmdrsds_range"), format!("{} {}", s.range.begin, s.range.end));
                d.fact(format!("{p}.xmdrsds_items.count"), s.items.len());
                for (j, it) in s.items.iter().enumerate() {
                    let q = format!("{p}.xmdrsds_items[{j}]");
                    d.fact(format!("{q}.xmdrsdi_minlen"), it.minlen);
                    d.fact(format!("{q}.xmdrsdi_loc"), it.loc.kind());
                    match it.loc {
                        RsdLoc::Exrw(a) | RsdLoc::Choice(a) => segments(d, &format!("{q}.xmdrsdl_ex"), &a),
                        RsdLoc::BySize { dsdov, bsex } => {
                            d.fact(format!("{q}.xmdrsdl_dsdov"), dsdov);
                            segments(d, &format!("{q}.xmdrsdl_bsex"), &bsex);
                        }
                        RsdLoc::Tbsn => {}
                    }
                }
            }
            d.fact("optxrq_count", o.count);
            d.fact("optxrq_rsbuf", o.rsbuf);
            d.fact("optxrq_pslen", o.pslen);
        }
        rtrext::Op::XmtResp(o) => {
            grpinfo(d, "optxrs_dp", &o.dp);
            d.fact("optxrs_count", o.count);
            d.fact("optxrs_pslen", o.pslen);
        }
        rtrext::Op::XmtCont(o) => {
            d.fact("optxc_xnum", o.xnum);
            d.fact("optxc_itype", o.itype);
            d.fact("optxc_pslen", o.pslen);
        }
        rtrext::Op::ReptErr(o) => {
            d.fact("optre_bad", xms_id(&o.bad));
            d.fact("optre_lead", o.lead.as_ref().map_or("absent".to_string(), xms_id));
            d.fact("optre_which", o.info.which);
            match o.info.detail {
                OptrDetail::ExpCur { expect, current } => {
                    d.fact("optri_expect", expect);
                    d.fact("optri_current", current);
                }
                OptrDetail::None => {}
                OptrDetail::Range { value, min, max } => {
                    d.fact("optri_value", value);
                    d.fact("optri_min", min);
                    d.fact("optri_max", max);
                }
            }
        }
    }
}

fn xchar(d: &mut Decoded, op: &xcharext::Op<'_>, ids: PropertyIds) {
    match op {
        xcharext::Op::InitXch(o) => {
            spec(d, "optixch_start", &o.start);
            subset(d, "optixch_nochg", &o.nochg);
        }
        xcharext::Op::ReqXch(o) => spec(d, "optreqxch_want", &o.want),
        xcharext::Op::RespXch(o) => {
            subset(d, "optrespxch_done", &o.done);
            subset(d, "optrespxch_rej", &o.rej);
            subset(d, "optrespxch_pend", &o.pend);
        }
        xcharext::Op::UpdXch(o) => {
            xcharval(d, "optupdxch_now", &o.now, ids);
            d.fact("optupdxch_pendclr", o.pendclr);
        }
    }
}

pub fn summarize_header(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let m = Message::decode(&v.bytes, profile)?;
    let h = &m.header;
    let mut d = Decoded::default();
    d.fact("rdma_xid", format!("{:#010x}", h.xid));
    d.fact("rdma_vers", h.vers);
    d.fact("rdma_credit", h.credit);
    d.fact("rdma_proc", h.body.proc_());
    match &h.body {
        Body::Msg(c) | Body::NoMsg(c) => {
            if let Some(dir) = c.direction {
                d.fact("rdma_direction", dir);
            }
            super::v1::chunk_facts(&mut d, &c.lists);
        }
        Body::Error(e) => {
            d.fact("rdma_err", e.body.name());
            d.fact("rdma_err.code", e.code);
            match e.body {
                ErrorBody::Vers { low, high } => {
                    d.fact("rdma_vers_low", low);
                    d.fact("rdma_vers_high", high);
                }
                ErrorBody::CantReply { processed, segment_index, length_needed } => {
                    d.fact("rdma_processed", processed);
                    d.fact("rdma_segment_index", segment_index);
                    d.fact("rdma_length_needed", length_needed);
                }
                ErrorBody::ReadChunks { max_chunks } | ErrorBody::WriteChunks { max_chunks } => {
                    d.fact("rdma_max_chunks", max_chunks)
                }
                ErrorBody::Segments { max_segments } => d.fact("rdma_max_segments", max_segments),
                ErrorBody::WriteResource { chunk_index, length_needed } => {
                    d.fact("rdma_chunk_index", chunk_index);
                    d.fact("rdma_length_needed", length_needed);
                }
                ErrorBody::ReplyResource { length_needed } => d.fact("rdma_length_needed", length_needed),
                _ => {}
            }
        }
        Body::Optional(o) => {
            if let Some(dir) = o.dir {
                d.fact("rdma_optdir", dir);
            }
            d.fact("rdma_opttype", o.opttype);
            d.fact("rdma_optinfo.length", o.info.data_len());
            d.fact("rdma_optinfo.type", o.info.type_name().unwrap_or("unknown"));
            match &o.info {
                OptInfo::Xchar(op) => xchar(&mut d, op, profile.property_ids),
                OptInfo::Rtr(op) => rtr(&mut d, op),
                OptInfo::Raw(b) => d.fact("rdma_optinfo", raw(b)),
            }
        }
    }
    let role = v.role.as_deref().map(|r| super::v1::role(&v.name, r));
    let violations = role.map(|r| v2::check(&m, r).iter().map(|x| x.rule.id.to_string()).collect());
    super::v1::finish(&mut d, h, m.payload_offset, m.payload, matches!(h.body, Body::Msg(_)), violations);
    Ok(d)
}
