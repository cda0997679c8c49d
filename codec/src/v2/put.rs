//! The fast path of [`HeaderBuilder::encode`](super::HeaderBuilder::encode) for the common
//! RDMA2_OPTIONAL operations (ROPT_INITXCH, ROPT_XMTREQ) under the -01 envelope: every field
//! written once through a shrinking slice (one length comparison per write), the optinfo
//! length filled in at the end. None (a buffer too short, any other form) sends the builder
//! to the [`Writer`](crate::xdr::Writer) path, which writes the same bytes and reports the
//! precise error.

use super::header::OptInfo;
use super::rtrext::{self, Loc, RsdLoc, XmdpType, XmtReq};
use super::xcharext::{self, InitXch, XcharVal};
use crate::chunk::{be_words, Put, Segment};
use crate::xdr::{Array, Item};

/// The message: the six fixed words (xid, vers, credit, proc, optdir, opttype), the optinfo
/// and the payload. Returns its length.
#[inline]
pub(super) fn optional(out: &mut [u8], fixed: [u32; 6], info: &OptInfo<'_>, payload: &[u8]) -> Option<usize> {
    let mut p = Put::new(out);
    let head = p.slot::<28>()?;
    let (words, len) = head.split_at_mut(24);
    words.copy_from_slice(&be_words::<6, 24>(fixed));
    let start = p.pos();
    match info {
        OptInfo::Xchar(xcharext::Op::InitXch(o)) => initxch(&mut p, o)?,
        OptInfo::Rtr(rtrext::Op::XmtReq(o)) => xmtreq(&mut p, o)?,
        _ => return None,
    }
    // Every piece written is a whole number of words: no pad.
    len.copy_from_slice(&((p.pos() - start) as u32).to_be_bytes());
    // The payload of a ROPT_XMTREQ is often a few bytes (an RPC call split across
    // transmissions): up to 16 bytes without a call to `memcpy`.
    match payload.len() {
        0 => {}
        // Two overlapping fixed-size copies cover any length from 8 to 16.
        n @ 8..=16 => {
            let out = p.take(n)?;
            out[..8].copy_from_slice(&payload[..8]);
            out[n - 8..].copy_from_slice(&payload[n - 8..]);
        }
        _ => p.bytes(payload)?,
    }
    Some(p.pos())
}

/// `T x<>`: the count, then each value (or the bytes of a decoded array).
#[inline(always)]
fn array<'a, T: Item<'a>>(
    p: &mut Put<'_>,
    a: &Array<'a, T>,
    mut item: impl FnMut(&mut Put<'_>, &T) -> Option<()>,
) -> Option<()> {
    match a.values() {
        Some(values) => {
            p.u32(values.len() as u32)?;
            for v in values {
                item(p, v)?;
            }
            Some(())
        }
        None => {
            p.u32(a.len() as u32)?;
            p.bytes(a.wire_bytes()?)
        }
    }
}

#[inline(always)]
fn segments(p: &mut Put<'_>, a: &Array<'_, Segment>) -> Option<()> {
    array(p, a, |p, s| p.with::<16>(|b| s.write_to(b)))
}

#[inline(always)]
fn xcharval(p: &mut Put<'_>, v: &XcharVal<'_>) -> Option<()> {
    // The common case: a one-word value (id, length 4, the word) in one write.
    let d: &[u8; 4] = v.data.try_into().ok()?;
    let [a, b, c, e] = v.which.to_be_bytes();
    p.array([a, b, c, e, 0, 0, 0, 4, d[0], d[1], d[2], d[3]])
}

#[inline(always)]
fn initxch(p: &mut Put<'_>, o: &InitXch<'_>) -> Option<()> {
    array(p, o.start.values(), xcharval)?;
    array(p, o.nochg.words_array(), |p, w| p.u32(*w))
}

#[inline(always)]
fn xmtreq(p: &mut Put<'_>, o: &XmtReq<'_>) -> Option<()> {
    array(p, &o.dp, |p, m| match &m.loc {
        // The item's fixed words and the count of its array in one write.
        Loc::Exrw(s) => match s.values() {
            Some(v) => {
                p.array::<16>(be_words([m.disp, m.length, XmdpType::XMPTYPE_EXRW.0, v.len() as u32]))?;
                for s in v {
                    p.with::<16>(|b| s.write_to(b))?;
                }
                Some(())
            }
            None => {
                p.array::<12>(be_words([m.disp, m.length, XmdpType::XMPTYPE_EXRW.0]))?;
                segments(p, s)
            }
        },
        Loc::Tbsn { offset, bsnum } => match bsnum.values() {
            Some(v) => {
                p.array::<20>(be_words([m.disp, m.length, XmdpType::XMPTYPE_TBSN.0, *offset, v.len() as u32]))?;
                for w in v {
                    p.u32(*w)?;
                }
                Some(())
            }
            None => {
                p.array::<16>(be_words([m.disp, m.length, XmdpType::XMPTYPE_TBSN.0, *offset]))?;
                array(p, bsnum, |p, w| p.u32(*w))
            }
        },
        Loc::TooShort | Loc::NoItem => p.array::<12>(be_words([m.disp, m.length, m.loc.kind().0])),
    })?;
    // No xmdp_rsdset (the responder places nothing): its count with the last three words.
    if o.rsd.is_empty() {
        return p.array::<16>(be_words([0, o.count, o.rsbuf, o.pslen]));
    }
    array(p, &o.rsd, |p, s| {
        p.array::<8>(be_words([s.range.begin, s.range.end]))?;
        array(p, &s.items, |p, i| {
            p.array::<8>(be_words([i.minlen, i.loc.kind().0]))?;
            match &i.loc {
                RsdLoc::Exrw(s) | RsdLoc::Choice(s) => segments(p, s),
                RsdLoc::BySize { dsdov, bsex } => {
                    p.u32(*dsdov)?;
                    segments(p, bsex)
                }
                RsdLoc::Tbsn => Some(()),
            }
        })
    })?;
    p.array::<12>(be_words([o.count, o.rsbuf, o.pslen]))
}
