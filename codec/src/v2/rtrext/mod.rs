//! Round-trip reductions: draft-dnoveck-nfsv4-rpcrdma-rtrext-03 (message continuation and
//! send-based data placement), carried in RDMA2_OPTIONAL, with the corrected XDR (wire notes
//! R1-R17). Opttypes are 5..8 (the draft's Table 4) or 1..4 (its XDR) by profile (R10).
//!
//! The draft's validity split (section 6.2 Table 1, R17) is kept exactly: a placement type
//! with no arm in its union is a decode error (`invalid-enum`), a placement that decodes but
//! is wrong for its context is reported by [`check`].

mod check;
mod ops;
mod placement;

pub use check::{check, check_into, rules};
pub use ops::*;
pub use placement::*;

#[cfg(test)]
mod tests;
