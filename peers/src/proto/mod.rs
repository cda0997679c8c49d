//! The protocol vocabulary both sides of a conformance run share: RPC calls as a requester
//! builds them, NFSv3 as the test export speaks it, and the NFSv4.0 COMPOUND a check needs
//! for a reply with several DDP-eligible items; and MOUNT and the portmapper over TCP record
//! marking, how a requester obtains a real export's root handle. Declared once, here.

pub mod mount;
pub mod nfs3;
pub mod nfs4;
pub mod record;
pub mod rpc;

pub use rpc::Call;
