//! Decode, re-encode, compare: every input that decodes as a Version One or Version Two header
//! re-encodes to exactly the header bytes it was decoded from, under every profile.
//!
//! The one place this legitimately cannot hold: XDR pad bytes after variable-length opaque
//! data. RFC 4506 4.10 says the pad bytes are zero, but the decoder (like most XDR decoders)
//! does not reject non-zero ones, while the encoder always writes zeros. In RFC 8166 (v1) there
//! is no opaque in the transport header, so v1 must round-trip byte for byte. In Version Two
//! the opaques are `rdma_optinfo` (RDMA2_OPTIONAL) and, inside xcharext operations, every
//! `xchv_data`. Counted arrays (`xcharval<>` in ROPT_INITXCH / ROPT_REQXCH) re-encode their
//! validated wire bytes verbatim, pads included, so they must round-trip exactly; the pads the
//! encoder writes afresh are those of `rdma_optinfo` itself and of the single `xcharval` of
//! ROPT_UPDXCH. For those two exactly, the input's pad bytes are zeroed before comparing;
//! nothing else is excused. The positions come from the decoded value itself: decoded opaque
//! data borrows from the input, so its offset is a pointer difference.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::v2::{self, Body, OptInfo};
use rpcrdma_codec::xcharext::{Op, XcharVal};
use rpcrdma_codec::xdr::round_up4;
use rpcrdma_codec::{v1, Profile};

const V1_PROFILES: &[&[&str]] = &[&[], &["rfc5666-error-arm"]];
const V2_PROFILES: &[&[&str]] =
    &[&[], &["v2-00"], &["v2-errors-02"], &["v2-errors-04"], &["rtrext-literal"], &["props-v2-03"], &["subset-msb"]];

fn profile(names: &[&str]) -> Profile {
    let mut p = Profile::default();
    for n in names {
        assert!(p.apply(n));
    }
    p
}

/// Offset of `part` inside `whole` (it borrows from it).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    let off = part.as_ptr() as usize - whole.as_ptr() as usize;
    assert!(off + part.len() <= whole.len(), "decoded data does not borrow from the input");
    off
}

/// Zeroes the pad after the opaque data `part` (which sits inside `input`) in `canon`.
fn zero_pad(input: &[u8], canon: &mut [u8], part: &[u8]) {
    let start = offset_in(input, part) + part.len();
    let end = offset_in(input, part) + round_up4(part.len());
    canon[start..end].fill(0);
}

fn zero_val_pad(input: &[u8], canon: &mut [u8], v: &XcharVal<'_>) {
    // An empty opaque has no pad; its (empty) slice may point anywhere.
    if !v.data.is_empty() {
        zero_pad(input, canon, v.data);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut out = vec![0u8; data.len()];
    for names in V1_PROFILES {
        if let Ok(m) = v1::Message::decode(data, &profile(names)) {
            let n = m.header.encode_into(&mut out).expect("fits: the input held it");
            assert_eq!(n, m.payload_offset);
            assert_eq!(n, m.header.encoded_len());
            assert_eq!(&out[..n], &data[..n], "v1 {names:?}");
        }
    }
    for names in V2_PROFILES {
        let p = profile(names);
        let Ok(m) = v2::Message::decode(data, &p) else { continue };
        let n = m.header.encode_into(&mut out).expect("fits: the input held it");
        assert_eq!(n, m.payload_offset);
        assert_eq!(n, m.header.encoded_len());
        let mut canon = data[..n].to_vec();
        if let Body::Optional(o) = &m.header.body {
            // rdma_optinfo: its data starts after optdir (-01 only), opttype and length.
            let start = if o.dir.is_some() { v2::field::OPTINFO } else { v2::field::OPTINFO_00 };
            let len = o.info.data_len();
            canon[start + len..start + round_up4(len)].fill(0);
            if let OptInfo::Xchar(Op::UpdXch(x)) = &o.info {
                zero_val_pad(data, &mut canon, &x.now);
            }
        }
        assert_eq!(&out[..n], &canon[..], "v2 {names:?}");
    }
});
