//! Summaries of RDMA_MSGP padded payloads, CCP messages and RDMA-CM private data.

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::{DecodeError, Profile};

pub fn summarize(v: &Vector, _profile: &Profile) -> Result<Decoded, DecodeError> {
    panic!("{}: kind {} is not supported yet", v.name, v.kind)
}
