//! Any bytes: the RPC header decoder never panics, and AUTH_SYS bodies decode or fail cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = RpcMessage::decode(data) {
        if let RpcHeader::Call(c) = m.header {
            let _ = c.cred.auth_sys();
        }
        assert!(m.body_offset <= data.len());
    }
});
