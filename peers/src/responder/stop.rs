//! Why a session stops serving its connection: the reasons, typed, and how they read.

use rpcrdma_codec::{DecodeError, EncodeError};

use crate::observe::Observed;
use crate::transport::{Event, TransportError, WcStatus};

/// Why a session stops serving its connection.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The transport failed: the connection is gone.
    Transport(TransportError),
    /// A reply did not encode: a defect of the responder, not of the peer.
    Encode(EncodeError),
    /// A message of our own making did not decode back.
    Decode(DecodeError),
    /// Something this responder cannot express (named).
    Unsupported(&'static str),
    /// The scenario of this name closes the connection.
    Scenario(&'static str),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Transport(e) => write!(f, "the connection failed: {e}"),
            Stop::Encode(e) => write!(f, "a reply did not encode: {e}"),
            Stop::Decode(e) => write!(f, "a message of our own did not decode: {e}"),
            Stop::Unsupported(what) => write!(f, "cannot answer {what}"),
            Stop::Scenario(name) => write!(f, "scenario {name} closes the connection"),
        }
    }
}

impl From<TransportError> for Stop {
    fn from(e: TransportError) -> Self {
        Stop::Transport(e)
    }
}

impl From<EncodeError> for Stop {
    fn from(e: EncodeError) -> Self {
        Stop::Encode(e)
    }
}

impl From<DecodeError> for Stop {
    fn from(e: DecodeError) -> Self {
        Stop::Decode(e)
    }
}

impl super::Session<'_> {
    /// Records the Sends of ours that completed in error before a stop (an RNR completion
    /// waits behind the messages still to be answered).
    pub(crate) fn record_failed_sends(&mut self) {
        while let Ok(e) = self.conn.poll(std::time::Instant::now()) {
            if let Event::SendDone { status } = e {
                if status != WcStatus::Success {
                    self.observe(Observed::SendFailed(status));
                }
            }
        }
    }
}
