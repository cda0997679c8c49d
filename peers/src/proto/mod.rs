//! The protocol vocabulary both sides of a conformance run share: RPC calls as a requester
//! builds them, and NFSv3 as the test export speaks it. Declared once, here.

pub mod nfs3;
pub mod rpc;

pub use rpc::Call;
