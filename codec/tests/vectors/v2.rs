//! Summaries of Version Two headers (rdma_vers 2) with their optional operations.

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::{DecodeError, Profile};

pub fn summarize_header(v: &Vector, _profile: &Profile) -> Result<Decoded, DecodeError> {
    panic!("{}: Version Two vectors are not supported yet", v.name)
}
