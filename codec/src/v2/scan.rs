//! The fast path of [`Message::decode`] for the common RDMA2_OPTIONAL forms under the -01
//! envelope: ROPT_INITXCH whose values are one word each (xcharext-02 4.1) and ROPT_XMTREQ
//! (rtrext-03 9.2). One pass over the words, one bounds check per word or fixed-size array,
//! no error values; the result is the value the field-by-field decoder builds. None sends the
//! input to that decoder, which decides (and names the field of any error): the scan accepts
//! only what it accepts.

use super::header::{Body, Header, Message, OptInfo, Optional};
use super::rtrext::{self, facts, OpKind, XmdpType, XmtReq};
use super::types::{field, MsgType, Proc, VERSION};
use super::xcharext::{self, InitXch, XcharSpec, XcharSubset};
use crate::chunk::SEGMENT_LEN;
use crate::error::DecodeError;
use crate::profile::{Profile, RtrextOpttypes, V2Envelope};
use crate::xdr::{round_up4, Array};

impl<'a> Message<'a> {
    /// Decodes a Version Two header at the start of `buf`: the scan below for the common
    /// RDMA2_OPTIONAL forms, the field-by-field decoder (`decode_precise`) for everything else.
    #[inline]
    pub fn decode(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
        optional_or(buf, profile, Ok, || Self::decode_precise(buf, profile))
    }
}

/// A cursor over words that have yet to be read: each read shrinks the slice.
struct Words<'a> {
    rest: &'a [u8],
}

impl<'a> Words<'a> {
    #[inline(always)]
    fn word(&mut self) -> Option<u32> {
        let (w, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_be_bytes(*w))
    }

    /// A count and its elements of `size` bytes each (segments, words: any bytes decode).
    #[inline(always)]
    fn fixed(&mut self, size: usize) -> Option<(&'a [u8], u32)> {
        let n = self.word()?;
        let len = (n as usize).checked_mul(size)?;
        if len > self.rest.len() {
            return None;
        }
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some((bytes, n))
    }

    #[inline(always)]
    fn skip_fixed(&mut self, size: usize) -> Option<()> {
        self.fixed(size).map(|_| ())
    }

    /// The bytes read since `start` (a copy of an earlier `rest`).
    #[inline(always)]
    fn since(&self, start: &'a [u8]) -> &'a [u8] {
        &start[..start.len() - self.rest.len()]
    }
}

/// The scan of an RDMA2_OPTIONAL message; None for any other message.
#[cfg(test)]
pub(super) fn optional<'a>(buf: &'a [u8], profile: &Profile) -> Option<Message<'a>> {
    optional_or(buf, profile, Some, || None)
}

/// The scan of an RDMA2_OPTIONAL message: `found` gets the message, built once where the
/// caller returns it (a scan returning an `Option<Message>` made the caller copy it into its
/// `Result`); any other message goes to `otherwise`.
#[inline(always)]
fn optional_or<'a, R>(
    buf: &'a [u8],
    profile: &Profile,
    found: impl FnOnce(Message<'a>) -> R,
    otherwise: impl FnOnce() -> R,
) -> R {
    'fast: {
        let Some(fixed) = buf.first_chunk::<{ field::OPTINFO }>() else { break 'fast };
        let w = |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        if w(field::VERS) != VERSION || Proc(w(field::PROC)) != Proc::RDMA2_OPTIONAL {
            break 'fast;
        }
        if profile.v2_envelope != V2Envelope::Draft01 {
            break 'fast;
        }
        let dir = MsgType(w(field::BODY));
        if !dir.is_known() {
            break 'fast;
        }
        let opttype = w(field::OPTTYPE);
        let len = w(field::OPTINFO_LEN) as usize;
        let Some(data) = field::OPTINFO.checked_add(len).and_then(|e| buf.get(field::OPTINFO..e)) else { break 'fast };
        // The pad: the length fits the buffer, so rounding it up cannot overflow.
        let end = field::OPTINFO + round_up4(len);
        let Some(payload) = buf.get(end..) else { break 'fast };
        let combined = profile.rtrext_opttypes == RtrextOpttypes::Combined;
        let info = if combined && opttype == xcharext::ROPT_INITXCH {
            let Some(op) = initxch(data, profile) else { break 'fast };
            OptInfo::Xchar(xcharext::Op::InitXch(op))
        } else if opttype == OpKind::XmtReq.opttype(profile.rtrext_opttypes) {
            let Some(op) = xmtreq(data) else { break 'fast };
            OptInfo::Rtr(rtrext::Op::XmtReq(op))
        } else {
            break 'fast;
        };
        return found(Message {
            header: Header {
                xid: w(field::XID),
                vers: VERSION,
                credit: w(field::CREDIT),
                body: Body::Optional(Optional { dir: Some(dir), opttype, info }),
            },
            payload_offset: end,
            payload,
        });
    }
    otherwise()
}

/// `optinfo_initxch` filling `data` exactly, every xcharval one word long and valid.
#[inline(always)]
fn initxch<'a>(data: &'a [u8], profile: &Profile) -> Option<InitXch<'a>> {
    let mut r = Words { rest: data };
    let n = r.word()?;
    let start = r.rest;
    // Each value takes 12 bytes here (id, length 4, the word).
    if (n as usize).checked_mul(12)? > start.len() {
        return None;
    }
    let ids = profile.property_ids;
    for _ in 0..n {
        let (v, rest) = r.rest.split_first_chunk::<12>()?;
        let which = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
        if v[4..8] != [0, 0, 0, 4] || !xcharext::one_word_value_is_valid(which, &v[8..12], ids) {
            return None;
        }
        r.rest = rest;
    }
    let vals = r.since(start);
    let (words, count) = r.fixed(4)?;
    if !r.rest.is_empty() {
        return None;
    }
    Some(InitXch {
        start: XcharSpec::from_wire(Array::from_wire(vals, n), ids),
        nochg: XcharSubset::from_wire(Array::from_wire(words, count), profile.subset_bit_order),
    })
}

/// `optxmt_req` filling `data` exactly, every union arm one the decoder accepts. On the way
/// it records what the rtrext checks look for ([`facts`]), so that they need not walk again.
#[inline(always)]
fn xmtreq(data: &[u8]) -> Option<XmtReq<'_>> {
    let mut r = Words { rest: data };
    // optxrq_dp: xmdp_mitem<> (disp, length, xmdp_loc).
    let n = r.word()?;
    let start = r.rest;
    let mut f = facts::KNOWN;
    for _ in 0..n {
        let (_disp, length) = (r.word()?, r.word()?);
        let located = match XmdpType(r.word()?) {
            XmdpType::XMPTYPE_EXRW => r.fixed(SEGMENT_LEN)?.1 > 0,
            XmdpType::XMPTYPE_TBSN => {
                r.word()?;
                r.fixed(4)?.1 > 0
            }
            XmdpType::XMPTYPE_TOOSHORT | XmdpType::XMPTYPE_NOITEM => {
                f |= facts::RESULT_TYPE;
                true
            }
            _ => return None,
        };
        if !located && length > 0 {
            f |= facts::NO_LOCATION;
        }
    }
    let dp = Array::from_wire_with_facts(r.since(start), n, f);
    // optxrq_rsd: xmdp_rsdset<> (range, xmdp_rsditem<> of minlen and xmdp_rsdloc).
    let n = r.word()?;
    let start = r.rest;
    let mut f = facts::KNOWN;
    let mut prev_end = None;
    for _ in 0..n {
        let (begin, end, items) = (r.word()?, r.word()?, r.word()?);
        // rtrext-03 7.4, as the check reads it: begin <= end, after the previous range.
        if begin > end || prev_end.is_some_and(|p| begin < p) {
            f |= facts::RANGES;
        }
        prev_end = Some(end);
        for _ in 0..items {
            let _minlen = r.word()?;
            match XmdpType(r.word()?) {
                XmdpType::XMPTYPE_EXRW | XmdpType::XMPTYPE_CHOICE => r.skip_fixed(SEGMENT_LEN)?,
                XmdpType::XMPTYPE_BYSIZE => {
                    r.word()?;
                    r.skip_fixed(SEGMENT_LEN)?
                }
                XmdpType::XMPTYPE_TBSN => {}
                _ => return None,
            }
        }
    }
    let rsd = Array::from_wire_with_facts(r.since(start), n, f);
    let (count, rsbuf, pslen) = (r.word()?, r.word()?, r.word()?);
    if !r.rest.is_empty() {
        return None;
    }
    Some(XmtReq { dp, rsd, count, rsbuf, pslen })
}
