//! The protocol vocabulary both sides of a conformance run share: RPC calls as a requester
//! builds them, NFSv3 as the test export speaks it, and the NFSv4.0 COMPOUND a check needs
//! for a reply with several DDP-eligible items; NFSv4.1/4.2 sessions, opens and delegations
//! and the callback program of the back channel (RFC 8881, RFC 7862); and MOUNT and the portmapper over TCP record
//! marking, how a requester obtains a real export's root handle. Declared once, here.

pub mod callback;
pub mod mount;
pub mod nfs3;
pub mod nfs4;
pub mod nfs41;
pub mod record;
pub mod rpc;

pub use rpc::Call;
