//! The run-wide settings every check's context reads.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_codec::Profile;

use rpcrdma_peers::proto::nfs3::ROOT_FH;

/// Run-wide settings.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Deadline for each expected reply.
    pub timeout: Duration,
    /// How long "no reply" checks wait for silence.
    pub silence: Duration,
    /// Receive buffer size we post and advertise (RFC 8797 Receive Size).
    pub receive_size: u32,
    /// Send size we advertise.
    pub send_size: u32,
    /// Credits we request in calls.
    pub credits_requested: u32,
    /// The export's root file handle, from which every check looks up the test files: what
    /// the peer's MOUNT service returned (RFC 1813 appendix I, MOUNTPROC3_MNT), or given; the
    /// embedded reference responder's is [`ROOT_FH`].
    pub root_fh: Vec<u8>,
    /// After a restart of a peer that went down, how long to wait for it to answer.
    pub restart_wait: Duration,
    /// A flag a signal sets (the harness's SIGINT/SIGTERM): every wait for the peer then ends
    /// within a tenth of a second, and the check under way is skipped as interrupted, not
    /// judged on a wait cut short.
    pub interrupt: Option<&'static AtomicBool>,
    /// The spec choices the run reads and writes the wire under (RFC 5666 or RFC 8166 error
    /// arm, where the RFC 8797 private data may be, the Version Two revision, ...): every
    /// frame is decoded, and every choice-dependent message built, under this one profile.
    pub profile: Profile,
}

impl RunOptions {
    /// Whether the interrupt flag is set.
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(300),
            receive_size: 4096,
            send_size: 4096,
            credits_requested: 32,
            root_fh: ROOT_FH.to_vec(),
            restart_wait: Duration::from_secs(30),
            interrupt: None,
            profile: Profile::default(),
        }
    }
}
