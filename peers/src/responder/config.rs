//! The reference responder's settings.

use std::sync::Arc;
use std::time::Duration;

use rpcrdma_codec::Profile;

use super::{Faults, ReplyFuzz, Scenario};
use crate::observe;

/// Settings of the reference responder.
#[derive(Debug, Clone)]
pub struct Config {
    /// Credits granted in every reply (RFC 8166 3.3.1: never zero).
    pub credits: u32,
    /// Our receive buffer size, advertised in private data (RFC 8797 Receive Size).
    pub receive_size: u32,
    /// Our largest Send, advertised in private data (RFC 8797 Send Size).
    pub send_size: u32,
    /// Whether we advertise support for remote invalidation (the R bit).
    pub remote_invalidation: bool,
    /// How long the serving loop waits on an idle connection before checking for shutdown.
    pub idle_poll: Duration,
    /// Serve RPC-over-RDMA Version Two (draft-cel-nfsv4-rpcrdma-version-two-01 with xcharext
    /// and rtrext) as well as Version One.
    pub version_two: bool,
    /// The run's spec choices (the readings the specs leave open): every message the
    /// responder decodes or builds follows them.
    pub profile: Profile,
    pub faults: Faults,
    /// Records what requesters do, for the client catalogue (`serve`).
    pub observer: Option<Arc<observe::Log>>,
    /// Receives kept posted, when more than the credits granted (RFC 8166 3.3.1 allows it).
    pub receive_window: Option<u32>,
    /// A pause before handling each message, so calls a requester sends back to back are all
    /// outstanding when observed.
    pub handle_delay: Duration,
    /// A `serve` scenario: replace the reply to one chosen call, once per responder.
    pub scenario: Option<Scenario>,
    /// `serve --fuzz`: replace some replies with mutated copies.
    pub reply_fuzz: Option<Arc<ReplyFuzz>>,
    /// `replay --listen`: a recorded reply sent once in place of one call's.
    pub recorded_reply: Option<Arc<super::recorded::RecordedReply>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            credits: 32,
            receive_size: 4096,
            send_size: 4096,
            remote_invalidation: true,
            idle_poll: Duration::from_millis(200),
            version_two: true,
            profile: Profile::default(),
            faults: Faults::default(),
            observer: None,
            receive_window: None,
            handle_delay: Duration::ZERO,
            scenario: None,
            reply_fuzz: None,
            recorded_reply: None,
        }
    }
}

/// The size of each receive buffer posted: the advertised receive size (1020 bytes under the
/// `receive-buffers-1020` fault).
pub(super) fn receive_buffer(c: &Config) -> usize {
    if c.faults.receive_buffers_1020 {
        1020
    } else {
        c.receive_size as usize
    }
}
