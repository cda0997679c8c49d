//! Any bytes: decode never panics; what decodes re-encodes to the same header bytes, and the
//! semantic check runs on it in both roles.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::v1::Message;
use rpcrdma_codec::Profile;

fuzz_target!(|data: &[u8]| {
    for profile in [Profile::default(), {
        let mut p = Profile::default();
        p.apply("rfc5666-error-arm");
        p
    }] {
        if let Ok(m) = Message::decode(data, &profile) {
            let _ = Violations::of(&m, Role::Call);
            let _ = Violations::of(&m, Role::Reply);
            let mut out = vec![0u8; data.len()];
            let n = m.header.encode_into(&mut out).expect("fits: the input held it");
            assert_eq!(&out[..n], &data[..m.payload_offset]);
        }
    }
});
