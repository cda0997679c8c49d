//! Timings of decode, semantic check and encode for the representative messages of issue 8,
//! side by side with a plain copy of the same bytes (and the oracle decoder, see BENCHMARKS.md).
//!
//! `cargo bench -p rpcrdma-codec --bench codec` (BENCHMARKS.md gives the full command and how
//! to read the ratios). Each message group holds:
//! - `decode`: `v1::Message::decode` / `v2::Message::decode` / `private_data::find`;
//! - `check`: the semantic check alone on an already decoded message
//!   (`check::Violations::of` / `v2::check`; for private data `private_data::effective`);
//! - `decode_check`: both, as a receiver runs them;
//! - `encode`: the header from values with the builder (`HeaderBuilder::encode`;
//!   `PrivateData::encode_into`);
//! - `reencode`: the decoded header written again (`Header::encode_into`);
//! - `copy`: every byte of the message copied into a buffer (the floor to compare with).
//!
//! Before timing anything, every message is checked against the golden vectors (see
//! `messages.rs`): a bench run on bytes that are not the real forms panics.

use std::hint::black_box;
use std::path::Path;

use divan::Bencher;

#[path = "messages.rs"]
mod messages;

use messages::*;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    for line in verify(&root) {
        eprintln!("golden: {line}");
    }
    divan::main();
}

/// The common `copy` bench: the floor every other figure of the group is read against.
fn bench_copy(bencher: Bencher, name: &str) {
    let b = bytes(name);
    let mut out = vec![0u8; b.len()];
    bencher.bench_local(|| copy(black_box(&b), black_box(&mut out)));
}

macro_rules! v1_form {
    ($module:ident, $name:literal) => {
        mod $module {
            use super::*;

            #[divan::bench]
            fn decode(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                bencher.bench_local(|| v1_decode(black_box(&b), black_box(&p)));
            }

            #[divan::bench]
            fn check(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                let m = v1_decode(&b, &p).unwrap();
                bencher.bench_local(|| v1_check(black_box(&m), black_box(role($name))));
            }

            #[divan::bench]
            fn decode_check(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                bencher.bench_local(|| v1_decode_check(black_box(&b), black_box(&p), black_box(role($name))));
            }

            #[divan::bench]
            fn encode(bencher: Bencher) {
                let h = crate::messages::$module::builder();
                let mut out = vec![0u8; h.encoded_len()];
                bencher.bench_local(|| v1_encode(black_box(&h), black_box(&mut out)));
            }

            #[divan::bench]
            fn reencode(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                let m = v1_decode(&b, &p).unwrap();
                let mut out = vec![0u8; m.header.encoded_len()];
                bencher.bench_local(|| v1_reencode(black_box(&m.header), black_box(&mut out)));
            }

            #[divan::bench]
            fn copy(bencher: Bencher) {
                bench_copy(bencher, $name)
            }
        }
    };
}

macro_rules! v2_form {
    ($module:ident, $name:literal) => {
        mod $module {
            use super::*;

            #[divan::bench]
            fn decode(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                bencher.bench_local(|| v2_decode(black_box(&b), black_box(&p)));
            }

            #[divan::bench]
            fn check(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                let m = v2_decode(&b, &p).unwrap();
                bencher.bench_local(|| v2_check(black_box(&m), black_box(role($name))));
            }

            #[divan::bench]
            fn decode_check(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                bencher.bench_local(|| v2_decode_check(black_box(&b), black_box(&p), black_box(role($name))));
            }

            #[divan::bench]
            fn encode(bencher: Bencher) {
                let p = profile();
                let h = crate::messages::$module::builder(&p);
                let mut out = vec![0u8; h.encoded_len()];
                bencher.bench_local(|| v2_encode(black_box(&h), black_box(&mut out)));
            }

            #[divan::bench]
            fn reencode(bencher: Bencher) {
                let (b, p) = (bytes($name), profile());
                let m = v2_decode(&b, &p).unwrap();
                let mut out = vec![0u8; m.header.encoded_len()];
                bencher.bench_local(|| v2_reencode(black_box(&m.header), black_box(&mut out)));
            }

            #[divan::bench]
            fn copy(bencher: Bencher) {
                bench_copy(bencher, $name)
            }
        }
    };
}

v1_form!(msg_null, "msg-null");
v1_form!(msg_read_write2, "msg-read-write2");
v1_form!(nomsg_reply, "nomsg-reply");
v1_form!(err_vers, "err-vers");
v2_form!(v2_initxch, "v2-initxch");
v2_form!(v2_xmtreq, "v2-xmtreq");

mod cm_private_data {
    use super::*;

    /// `private_data::find`.
    #[divan::bench]
    fn decode(bencher: Bencher) {
        let (b, p) = (bytes("cm-private-data"), profile());
        bencher.bench_local(|| pd_find(black_box(&b), black_box(&p)));
    }

    /// `private_data::effective` (find, then the RFC 8797 5.1 defaults).
    #[divan::bench]
    fn effective(bencher: Bencher) {
        let (b, p) = (bytes("cm-private-data"), profile());
        bencher.bench_local(|| pd_effective(black_box(&b), black_box(&p)));
    }

    /// `PrivateData::encode_into` (the eight octets).
    #[divan::bench]
    fn encode(bencher: Bencher) {
        let v = crate::messages::cm_private_data::value();
        let mut out = [0u8; 56];
        bencher.bench_local(|| pd_encode(black_box(&v), black_box(&mut out)));
    }

    #[divan::bench]
    fn copy(bencher: Bencher) {
        bench_copy(bencher, "cm-private-data")
    }
}
