//! RDMA_MSGP padding (RFC 5666 3.9 and 4.3; RFC 8166 4.6.1 forbids sending RDMA_MSGP and
//! lists what RFC 5666 leaves unspecified; wire notes A6). Not interoperable: no
//! implementation of it exists. This module fixes one reading and makes the two open choices
//! profile options.
//!
//! ```text
//!  Unpadded  XXXXXXXLLLLDDDDDDDDDDDDDD         (RFC 5666 3.9 figure)
//!  Padded    XXXXXXXLLLLpppDDDDDDDDDDDDDD
//! ```
//!
//! The rule, for a variable-length opaque (or string) item in the RPC payload of an
//! RDMA_MSGP message with header fields `rdma_align` and `rdma_thresh`:
//! - The item is padded when `rdma_align != 0` and its length is `>= rdma_thresh`
//!   ([`MsgpThreshold::AtOrAbove`], "the opaque data size at or above which padding is
//!   applied", the default) or `> rdma_thresh` ([`MsgpThreshold::Above`], "Where the decoded
//!   length exceeds the rdma_thresh"). Zero-length items are items too.
//! - `rdma_align == 0` means no padding (there is no alignment to reach, and it avoids a
//!   division by zero); `rdma_align == 1` always gives a zero pad.
//! - Layout: the 4-byte length word, then `pad` bytes, then the data, then the usual XDR
//!   roundup of the *data length* alone (RFC 4506 4.10). The pad sits between the length
//!   and the data, as in the figure.
//! - `pad = (align - (off mod align)) mod align`, where `off` is the offset at which the
//!   data would start without padding (the byte after the length word), counted from the
//!   start of the received Send buffer, transport header included
//!   ([`MsgpAlignOrigin::SendBuffer`], the figure's intent, the default), or from the start
//!   of the RPC payload ([`MsgpAlignOrigin::PayloadStream`], "the current XDR stream
//!   position"). The data then starts at a multiple of `align` from that origin.
//! - Pad bytes are zero when sent and ignored when received.
//!
//! When `rdma_align` is not a multiple of four, the items after a padded one are no longer
//! at multiples of four from the origin; XDR decoding does not depend on that, so it is
//! accepted. A pad is at most `align - 1` bytes (up to 0xfffffffe for a hostile
//! `align = 0xffffffff`): every length is checked against the input with 64-bit arithmetic
//! before anything is taken, and nothing loops over a pad.

use crate::error::{DecodeError, EncodeError, ErrorKind, Field};
use crate::profile::{MsgpAlignOrigin, MsgpThreshold, Profile};
use crate::v1::{Body, Message};
use crate::xdr::{Reader, Writer};

/// The field name of the pad in errors.
pub const PAD_FIELD: Field = "msgp.pad";

/// The padding in force for one RDMA_MSGP message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Padding {
    /// rdma_align.
    pub align: u32,
    /// rdma_thresh.
    pub thresh: u32,
    pub threshold: MsgpThreshold,
    pub origin: MsgpAlignOrigin,
    /// Where the RPC payload starts in the Send buffer (the transport header's length);
    /// used only with [`MsgpAlignOrigin::PayloadStream`].
    pub payload_offset: usize,
}

impl Padding {
    pub fn new(align: u32, thresh: u32, profile: &Profile, payload_offset: usize) -> Self {
        Padding { align, thresh, threshold: profile.msgp_threshold, origin: profile.msgp_align_origin, payload_offset }
    }

    /// The padding of a decoded RDMA_MSGP message; None for any other procedure.
    pub fn of_message(m: &Message<'_>, profile: &Profile) -> Option<Self> {
        match m.header.body {
            Body::MsgP { align, thresh, .. } => Some(Self::new(align, thresh, profile, m.payload_offset)),
            _ => None,
        }
    }

    /// Whether an item of `len` data bytes is padded.
    pub fn applies(&self, len: u32) -> bool {
        self.align != 0
            && match self.threshold {
                MsgpThreshold::AtOrAbove => len >= self.thresh,
                MsgpThreshold::Above => len > self.thresh,
            }
    }

    /// The pad before data that would start, unpadded, at `data_offset` bytes from the start
    /// of the Send buffer: `(align - (off mod align)) mod align` with `off` measured from the
    /// profile's origin. Zero when `align` is 0. (For the payload origin, an offset inside
    /// the transport header counts as 0.)
    pub fn pad_len(&self, data_offset: usize) -> u32 {
        if self.align == 0 {
            return 0;
        }
        let off = match self.origin {
            MsgpAlignOrigin::SendBuffer => data_offset,
            MsgpAlignOrigin::PayloadStream => data_offset.saturating_sub(self.payload_offset),
        } as u64;
        let a = self.align as u64;
        // < a <= u32::MAX
        ((a - off % a) % a) as u32
    }

    /// The pad an item of `len` bytes whose length word is at `item_offset` gets (0 when
    /// it is not padded).
    pub fn pad_for_item(&self, item_offset: usize, len: u32) -> u32 {
        if self.applies(len) {
            self.pad_len(item_offset.saturating_add(4))
        } else {
            0
        }
    }

    /// Encoded length of such an item: length word, pad, data, XDR roundup.
    pub fn item_len(&self, item_offset: usize, len: u32) -> u64 {
        4 + self.pad_for_item(item_offset, len) as u64 + round_up4_u64(len as u64)
    }

    /// Writes an opaque item: length, zero pad when padded, data, XDR roundup. On a too-small
    /// buffer the error comes after the length word was written, like other encoders. `base` is the
    /// Send-buffer offset of `w`'s first byte (0 when `w` writes the whole Send buffer, the
    /// transport header's length when it writes the payload alone).
    pub fn write_opaque(&self, w: &mut Writer<'_>, base: usize, data: &[u8]) -> Result<(), EncodeError> {
        let len = u32::try_from(data.len()).map_err(|_| EncodeError { needed: usize::MAX, available: 0 })?;
        let item_offset = base + w.len();
        let pad = self.pad_for_item(item_offset, len);
        // Writer::zeros checks the room before filling: a huge pad fails without looping.
        w.u32(len)?;
        w.zeros(pad as usize)?;
        w.bytes(data)?;
        w.zeros(crate::xdr::pad4(data.len()))
    }

    /// Reads an opaque item at `r`'s position, whose offsets must be Send-buffer offsets (a
    /// reader over the whole buffer, or one made with [`Reader::with_base`] and the payload
    /// offset). Skips the pad without looking at it. Errors: `truncated FIELD` for the
    /// length word or the data (with its roundup), `truncated msgp.pad` for the pad.
    pub fn read_opaque<'a>(&self, r: &mut Reader<'a>, field: Field) -> Result<PaddedOpaque<'a>, DecodeError> {
        let item_offset = r.offset();
        let length = r.u32(field)?;
        let pad_len = self.pad_for_item(item_offset, length);
        if pad_len as u64 > r.remaining() as u64 {
            return Err(DecodeError::new(
                PAD_FIELD,
                r.offset(),
                ErrorKind::Truncated {
                    needed: usize::try_from(pad_len).unwrap_or(usize::MAX),
                    available: r.remaining(),
                },
            ));
        }
        let pad = r.take(pad_len as usize, PAD_FIELD)?;
        let data_offset = r.offset();
        let padded = round_up4_u64(length as u64);
        if padded > r.remaining() as u64 {
            return Err(DecodeError::new(
                field,
                data_offset,
                ErrorKind::Truncated {
                    needed: usize::try_from(padded).unwrap_or(usize::MAX),
                    available: r.remaining(),
                },
            ));
        }
        let data = r.take(length as usize, field)?;
        r.take((padded - length as u64) as usize, field)?;
        Ok(PaddedOpaque { item_offset, length, pad, data_offset, data })
    }
}

/// An opaque item read by [`Padding::read_opaque`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaddedOpaque<'a> {
    /// Send-buffer offset of the length word.
    pub item_offset: usize,
    pub length: u32,
    /// The pad bytes as received (empty when unpadded); ignored, kept for inspection.
    pub pad: &'a [u8],
    /// Send-buffer offset of the first data byte.
    pub data_offset: usize,
    pub data: &'a [u8],
}

impl PaddedOpaque<'_> {
    pub fn is_padded(&self) -> bool {
        !self.pad.is_empty()
    }

    /// Whether every pad byte is zero, as a sender must write them.
    pub fn pad_is_zero(&self) -> bool {
        self.pad.iter().all(|b| *b == 0)
    }
}

const fn round_up4_u64(n: u64) -> u64 {
    (n + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(threshold: MsgpThreshold, origin: MsgpAlignOrigin) -> Profile {
        Profile { msgp_threshold: threshold, msgp_align_origin: origin, ..Profile::default() }
    }

    const AT: MsgpThreshold = MsgpThreshold::AtOrAbove;
    const ABOVE: MsgpThreshold = MsgpThreshold::Above;
    const BUF: MsgpAlignOrigin = MsgpAlignOrigin::SendBuffer;
    const PAY: MsgpAlignOrigin = MsgpAlignOrigin::PayloadStream;

    #[test]
    fn pad_formula() {
        // 36-byte MSGP header (16 fixed + align + thresh + three empty lists).
        let p = Padding::new(64, 16, &profile(AT, BUF), 36);
        assert_eq!(p.pad_len(80), 48);
        assert_eq!(p.pad_len(128), 0);
        assert_eq!(p.pad_len(129), 63);
        let p = Padding::new(64, 16, &profile(AT, PAY), 36);
        assert_eq!(p.pad_len(80), 20); // 44 from the payload start
        assert_eq!(Padding::new(0, 0, &profile(AT, BUF), 36).pad_len(81), 0);
        assert_eq!(Padding::new(1, 0, &profile(AT, BUF), 36).pad_len(81), 0);
        assert_eq!(Padding::new(u32::MAX, 0, &profile(AT, BUF), 36).pad_len(80), u32::MAX - 80);
    }

    #[test]
    fn threshold_rules() {
        let at = Padding::new(64, 16, &profile(AT, BUF), 36);
        let above = Padding::new(64, 16, &profile(ABOVE, BUF), 36);
        assert!(at.applies(16) && !above.applies(16));
        assert!(at.applies(17) && above.applies(17));
        assert!(!at.applies(15));
        assert!(!Padding::new(0, 0, &profile(AT, BUF), 36).applies(100));
        assert!(!Padding::new(64, u32::MAX, &profile(ABOVE, BUF), 36).applies(u32::MAX));
    }

    #[test]
    fn emit_and_parse() {
        let p = Padding::new(64, 16, &profile(AT, BUF), 36);
        let data = [0x5a_u8; 21];
        let mut buf = [0xee_u8; 200];
        let mut w = Writer::new(&mut buf);
        w.bytes(&[0; 76]).unwrap(); // header + RPC call header
        p.write_opaque(&mut w, 0, &data).unwrap();
        let n = w.len();
        assert_eq!(n as u64, 76 + p.item_len(76, 21));
        assert_eq!(n, 76 + 4 + 48 + 24);
        assert_eq!(&buf[76..80], &[0, 0, 0, 21]);
        assert!(buf[80..128].iter().all(|b| *b == 0));
        assert_eq!(&buf[128..149], &data);
        assert_eq!(&buf[149..152], &[0, 0, 0]);
        let mut r = Reader::new(&buf[..n]);
        r.take(76, "x").unwrap();
        let o = p.read_opaque(&mut r, "data").unwrap();
        assert_eq!((o.item_offset, o.length, o.pad.len(), o.data_offset), (76, 21, 48, 128));
        assert_eq!(o.data, &data);
        assert!(o.pad_is_zero() && r.is_empty());
    }

    #[test]
    fn reader_with_payload_base() {
        let p = Padding::new(64, 0, &profile(AT, PAY), 36);
        let mut payload = [0u8; 4 + 20 + 4];
        payload[3] = 4; // length 4 at payload offset 0; data unpadded at 4 -> pad 60 (too long)
        let mut r = Reader::with_base(&payload, 36);
        let e = p.read_opaque(&mut r, "data").unwrap_err();
        assert_eq!(e, DecodeError::new(PAD_FIELD, 40, ErrorKind::Truncated { needed: 60, available: 24 }));
    }

    #[test]
    fn hostile_values_fail_fast() {
        let p = Padding::new(u32::MAX, 0, &profile(AT, BUF), 36);
        let b = [0u8, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8];
        let e = p.read_opaque(&mut Reader::with_base(&b, 76), "data").unwrap_err();
        assert_eq!(e.field, PAD_FIELD);
        let mut out = [0u8; 64];
        let mut w = Writer::new(&mut out);
        let e = p.write_opaque(&mut w, 76, &[1, 2]).unwrap_err();
        assert_eq!(e, EncodeError { needed: 4 + (u32::MAX - 80) as usize, available: 64 });
        // A huge length with no padding.
        let q = Padding::new(0, 0, &profile(AT, BUF), 36);
        let e = q.read_opaque(&mut Reader::new(&[0xff, 0xff, 0xff, 0xff, 0]), "data").unwrap_err();
        assert_eq!((e.field, e.offset), ("data", 4));
    }

    #[test]
    fn unpadded_below_threshold_and_nonzero_pad_ignored() {
        let p = Padding::new(16, 16, &profile(AT, BUF), 36);
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        p.write_opaque(&mut w, 2, &[9; 8]).unwrap();
        assert_eq!(w.len(), 12);
        // 16 bytes: length at 0, data unpadded at 4 -> pad 12; pad bytes 0xaa are skipped.
        let mut b = [0xaa_u8; 4 + 12 + 16];
        b[..4].copy_from_slice(&[0, 0, 0, 16]);
        b[16..].fill(7);
        let o = p.read_opaque(&mut Reader::new(&b), "data").unwrap();
        assert_eq!((o.pad.len(), o.data, o.pad_is_zero()), (12, &[7u8; 16][..], false));
    }
}
