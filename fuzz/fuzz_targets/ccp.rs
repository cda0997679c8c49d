//! Any bytes: CCP calls and replies decode without panicking, both as bare RPC messages and as
//! whole RDMA_MSG Send buffers; what decodes re-encodes to the input's length and decodes again
//! to the same value (pad bytes of credentials and verifiers may differ: the decoder does not
//! require them to be zero, the encoder writes zeros).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::ccp::{self, CcpCall, CcpReply};
use rpcrdma_codec::{Encode, Profile};

fuzz_target!(|data: &[u8]| {
    let p = Profile::default();
    if let Ok(c) = CcpCall::decode(data) {
        let _ = ccp::dispatch(&c.header);
        // encode_to_vec() checks that encoded_len() is exact.
        let out = c.encode_to_vec();
        assert_eq!(out.len(), data.len());
        assert_eq!(CcpCall::decode(&out), Ok(c));
    }
    if let Ok(r) = CcpReply::decode(data) {
        let out = r.encode_to_vec();
        assert_eq!(out.len(), data.len());
        assert_eq!(CcpReply::decode(&out), Ok(r));
    }
    if let Ok((m, c)) = ccp::decode_call_message(data, &p) {
        assert_eq!(m.payload_offset + c.encoded_len(), data.len());
    }
    if let Ok((m, r)) = ccp::decode_reply_message(data, &p) {
        assert_eq!(m.payload_offset + r.encoded_len(), data.len());
    }
});
