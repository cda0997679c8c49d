//! Any bytes: CCP calls and replies decode without panicking, both as bare RPC messages and as
//! whole RDMA_MSG Send buffers; what decodes re-encodes to the input's length and decodes again
//! to the same value (pad bytes of credentials and verifiers may differ: the decoder does not
//! require them to be zero, the encoder writes zeros).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::ccp::{self, CcpCall, CcpReply};
use rpcrdma_codec::xdr::Writer;
use rpcrdma_codec::Profile;

fuzz_target!(|data: &[u8]| {
    let p = Profile::default();
    let mut out = vec![0u8; data.len() + 64];
    if let Ok(c) = CcpCall::decode(data) {
        let _ = ccp::dispatch(&c.header);
        let mut w = Writer::new(&mut out);
        c.encode(&mut w).expect("fits");
        let n = w.len();
        assert_eq!(n, data.len());
        assert_eq!(n, c.encoded_len());
        assert_eq!(CcpCall::decode(&out[..n]), Ok(c));
    }
    if let Ok(r) = CcpReply::decode(data) {
        let mut w = Writer::new(&mut out);
        r.encode(&mut w).expect("fits");
        let n = w.len();
        assert_eq!(n, data.len());
        assert_eq!(n, r.encoded_len());
        assert_eq!(CcpReply::decode(&out[..n]), Ok(r));
    }
    if let Ok((m, c)) = ccp::decode_call_message(data, &p) {
        assert_eq!(m.payload_offset + c.encoded_len(), data.len());
    }
    if let Ok((m, r)) = ccp::decode_reply_message(data, &p) {
        assert_eq!(m.payload_offset + r.encoded_len(), data.len());
    }
});
