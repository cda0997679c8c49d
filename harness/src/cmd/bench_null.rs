//! `rpcrdma-harness bench-null`: NFSv3 NULL calls per second against a peer, at
//! queue depth 1 and with the peer's whole credit window outstanding. Measures what the
//! harness can drive, so its overhead can be compared with the peer's.

use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::rpc::CallHeader;
use rpcrdma_codec::v1::{FixedFields, HeaderBuilder, Proc};
use rpcrdma_codec::xdr::Writer;
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::{Connection, Connector, Event, WcStatus};

use crate::exit::{Ending, Outcome};
use crate::verbs::VerbsConnection;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The peer (default: the embedded reference responder).
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// Calls measured at each depth.
    #[arg(long, default_value_t = 2000)]
    calls: u32,
    /// Calls sent first at each depth and not measured.
    #[arg(long, default_value_t = 200)]
    warmup: u32,
    /// Calls kept outstanding (repeatable; default: 1 and the peer's whole credit grant);
    /// each is held to the grant (RFC 8166 3.3.1).
    #[arg(long = "depth", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    depths: Vec<u32>,
}

const RECEIVE_SIZE: usize = 4096;
/// Receives we keep posted: the largest window we can drive.
const OUR_WINDOW: u32 = 64;

/// RDMA_MSG without chunks (RFC 8166 4.2): the 28-byte transport header and a 40-byte NFSv3
/// NULL call.
const NULL_CALL_SIZE: usize = 68;
/// Send slots over verbs, as many as the C client keeps: our whole window and Sends not yet
/// shown complete (one in 16 asks for a completion). Where a Send's completion comes after its
/// reply (6.12's rxe completes Sends from a work queue) they can all be in use; `drive` then
/// takes replies and completions before the next call.
const SEND_SLOTS: usize = 2 * OUR_WINDOW as usize;

fn null_call(xid: u32) -> [u8; NULL_CALL_SIZE] {
    let mut buf = [0u8; NULL_CALL_SIZE];
    let mut w = Writer::new(&mut buf);
    HeaderBuilder::msg(xid, OUR_WINDOW).write(&mut w).expect("68 bytes");
    CallHeader::new(xid, 100003, 3, 0).encode(&mut w).expect("68 bytes");
    buf
}

/// Where the RPC call's XID is: after the 28-byte transport header (RFC 8166 4.2.1).
const RPC_XID_AT: usize = 28;

/// The NULL call encoded once; each call writes its XID into the transport header's
/// rdma_xid and the RPC call's xid, the same value (RFC 8166 4.2.1), and nothing else
/// changes. Encoding the whole call each time was half of the harness's own CPU a call at
/// depth 4 under TCG (BENCHMARKS.md).
struct NullCalls([u8; NULL_CALL_SIZE]);

impl NullCalls {
    fn new() -> Self {
        Self(null_call(0))
    }

    fn with_xid(&mut self, xid: u32) -> &[u8] {
        let xid = xid.to_be_bytes();
        self.0[..4].copy_from_slice(&xid);
        self.0[RPC_XID_AT..RPC_XID_AT + 4].copy_from_slice(&xid);
        &self.0
    }
}

/// How the calls go out and the replies come back: the [`Connection`] API (the embedded
/// responder), or over verbs the requester's slots (calls copied into send slots, one Send in
/// 16 signaled, replies taken in place from receive slots a batch at a time: rpcrdma_verbs'
/// requester.rs), which is what a requester as lean as the C client
/// (harness/linux-peer/null-client.c) does per call.
trait Link {
    /// The connection underneath, for what both paths do alike.
    fn connection(&mut self) -> &mut dyn Connection;
    /// Posts `count` receives of RECEIVE_SIZE bytes (over verbs: opens the slots).
    fn post_receives(&mut self, count: usize) -> Result<(), String> {
        self.connection().post_recv(RECEIVE_SIZE, count).map_err(|e| e.to_string())
    }
    /// Sends a call; false when it cannot go yet (over verbs: every send slot still in use,
    /// the Sends' completions not yet taken), so replies are taken first.
    fn call(&mut self, msg: &[u8]) -> Result<bool, String>;
    /// Waits for replies; how many arrived (over verbs, 0 when a send slot came free instead),
    /// and the credit grant of the last one.
    fn replies(&mut self) -> Result<(u32, u32), String>;
    fn close(&mut self) {
        self.connection().disconnect();
    }
    /// How many times no reply was ready when we looked (None: not counted).
    fn waits(&self) -> Option<u64> {
        None
    }
}

const WAIT: Duration = Duration::from_secs(5);

impl Link for Box<dyn Connection> {
    fn connection(&mut self) -> &mut dyn Connection {
        self.as_mut()
    }

    fn call(&mut self, msg: &[u8]) -> Result<bool, String> {
        self.send(msg).map(|()| true).map_err(|e| e.to_string())
    }

    fn replies(&mut self) -> Result<(u32, u32), String> {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.poll(deadline).map_err(|e| e.to_string())? {
                Event::SendDone { status: WcStatus::Success } => {}
                Event::Recv { status: WcStatus::Success, data, .. } => {
                    self.post_recv(RECEIVE_SIZE, 1).map_err(|e| e.to_string())?;
                    return Ok((1, grant(&data)?));
                }
                other => return Err(format!("{other:?}")),
            }
        }
    }
}

impl Link for VerbsConnection {
    fn connection(&mut self) -> &mut dyn Connection {
        self
    }

    fn post_receives(&mut self, count: usize) -> Result<(), String> {
        self.open_slots(count, RECEIVE_SIZE, SEND_SLOTS, NULL_CALL_SIZE).map_err(|e| e.to_string())
    }

    fn call(&mut self, msg: &[u8]) -> Result<bool, String> {
        self.send_in_slot(msg).map_err(|e| e.to_string())
    }

    fn replies(&mut self) -> Result<(u32, u32), String> {
        let mut last = Ok(0);
        let n = self
            .take_messages(WAIT, |data| {
                if last.is_ok() {
                    last = grant(data);
                }
            })
            .map_err(|e| e.to_string())?;
        Ok((n as u32, last?))
    }

    fn waits(&self) -> Option<u64> {
        Some(VerbsConnection::waits(self))
    }
}

/// Our process's time on a CPU so far (/proc/self/schedstat, Linux), for the CPU per call.
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
}

/// A reply's credit grant; an error unless it is an RDMA_MSG (RFC 8166 4.2.4), as the
/// NULL reply is.
fn grant(data: &[u8]) -> Result<u32, String> {
    let f = FixedFields::decode(data).map_err(|e| e.to_string())?;
    if Proc(f.proc_) != Proc::RDMA_MSG {
        return Err(format!("a reply with rdma_proc {} where RDMA_MSG was due", f.proc_));
    }
    Ok(f.credit)
}

/// `total` calls keeping `depth` outstanding; the elapsed time.
fn drive(link: &mut dyn Link, depth: u32, total: u32, xid: &mut u32) -> Result<Duration, String> {
    let mut calls = NullCalls::new();
    let started = Instant::now();
    let (mut sent, mut done) = (0, 0);
    while done < total {
        while sent < total && sent - done < depth {
            if !link.call(calls.with_xid(xid.wrapping_add(1)))? {
                // No send slot free (a Send's completion can come after its reply, as on
                // 6.12's rxe): the replies and completions first, as the C client waits.
                break;
            }
            *xid = xid.wrapping_add(1);
            sent += 1;
        }
        let (n, _) = link.replies()?;
        done += n;
        if done > sent {
            return Err(format!("{done} replies to {sent} calls"));
        }
    }
    Ok(started.elapsed())
}

pub fn run(args: BenchArgs) -> Outcome {
    let (describe, mut link): (String, Box<dyn Link>) = match args.peer.as_deref() {
        Some(addr) => {
            let mut c = crate::peer::verbs_connector(addr)?;
            let pd = crate::peer::bench_private_data(RECEIVE_SIZE as u32)?;
            let conn = c.connect_verbs(&pd, Instant::now() + WAIT).map_err(|e| crate::peer::unreachable(addr, e))?;
            (c.describe(), Box::new(conn))
        }
        None => {
            let (connector, conn) = crate::peer::bench_connection(
                None,
                || Responder::reference(Config::default()),
                RECEIVE_SIZE as u32,
                WAIT,
            )?;
            (connector.describe(), Box::new(conn))
        }
    };
    let result = (|| -> Result<(), String> {
        link.post_receives(OUR_WINDOW as usize)?;
        let mut xid = 0x4000_0000u32;
        if !link.call(&null_call(xid))? {
            return Err("no send slot free for the first call".into());
        }
        let (_, grant) = link.replies()?;
        let window = grant.clamp(1, OUR_WINDOW);
        crate::outln!(
            "peer {describe} grants {grant} credits; {} calls per depth after {} warm-up calls",
            args.calls,
            args.warmup
        );
        let depths = if args.depths.is_empty() { vec![1, window] } else { args.depths.clone() };
        for depth in depths.into_iter().map(|d| d.min(window)) {
            // Warmed up at each depth, as the C client (harness/linux-peer/null-client.c) is.
            drive(link.as_mut(), depth, args.warmup, &mut xid)?;
            let (cpu0, waits0) = (cpu_time(), link.waits());
            let t = drive(link.as_mut(), depth, args.calls, &mut xid)?;
            let rate = args.calls as f64 / t.as_secs_f64();
            // Over verbs: the share of each call that is our own CPU, and how often a reply
            // was not in yet when we looked (issue 25's diagnosis; BENCHMARKS.md).
            let ours = match (cpu0, cpu_time(), waits0, link.waits()) {
                (Some(c0), Some(c1), Some(w0), Some(w1)) => format!(
                    ", {:.1} us of it our CPU, {} waits",
                    (c1 - c0).as_secs_f64() * 1e6 / f64::from(args.calls),
                    w1 - w0
                ),
                _ => String::new(),
            };
            crate::outln!("null-calls depth={depth}: {:.0} calls/s ({:.1} us per call{ours})", rate, 1e6 / rate);
        }
        link.close();
        Ok(())
    })();
    match result {
        Ok(()) => Ok(Ending::AsExpected),
        Err(e) => {
            // The peer's answer (or its absence) ended the measurement: not a harness error.
            crate::errln!("error: {e}");
            Ok(Ending::Failed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link whose sends are refused while `busy` calls are outstanding past `free` (a send
    /// queue whose completions lag its replies), each refusal answered by a free slot alone.
    struct Lagging {
        outstanding: Vec<u32>,
        free: usize,
        refused: u32,
        unblock: bool,
        xids: Vec<u32>,
    }

    impl Link for Lagging {
        fn connection(&mut self) -> &mut dyn Connection {
            unreachable!("not used by drive")
        }
        fn call(&mut self, msg: &[u8]) -> Result<bool, String> {
            if self.outstanding.len() >= self.free {
                self.refused += 1;
                self.unblock = true;
                return Ok(false);
            }
            let xid = u32::from_be_bytes(msg[..4].try_into().unwrap());
            self.outstanding.push(xid);
            self.xids.push(xid);
            Ok(true)
        }
        fn replies(&mut self) -> Result<(u32, u32), String> {
            if std::mem::take(&mut self.unblock) {
                // A slot came free, no reply with it.
                self.free += 1;
                return Ok((0, 0));
            }
            let n = self.outstanding.len() as u32;
            assert!(n > 0, "waited for replies with none outstanding");
            self.outstanding.clear();
            Ok((n, 64))
        }
    }

    #[test]
    fn a_call_with_its_xid_written_in_is_the_call_encoded_for_that_xid() {
        let mut calls = NullCalls::new();
        for xid in [1, 0x4000_0001, 0xdead_beef, u32::MAX, 0] {
            assert_eq!(calls.with_xid(xid), null_call(xid), "xid {xid:#x}");
        }
        // The two XIDs are where RFC 8166 4.2.1 and RFC 5531 9 put them.
        let call = null_call(0x0102_0304);
        assert_eq!(call[..4], [1, 2, 3, 4]);
        assert_eq!(call[RPC_XID_AT..RPC_XID_AT + 4], [1, 2, 3, 4]);
        assert_eq!(call[RPC_XID_AT + 4..RPC_XID_AT + 8], [0, 0, 0, 0], "msg_type CALL");
    }

    #[test]
    fn a_call_that_cannot_go_yet_waits_for_a_free_slot_and_goes_next() {
        let mut link = Lagging { outstanding: Vec::new(), free: 3, refused: 0, unblock: false, xids: Vec::new() };
        let mut xid = 100;
        drive(&mut link, 8, 40, &mut xid).unwrap();
        assert!(link.refused > 0, "the slots never ran out");
        // Every call sent once, in order, none lost or repeated for the refusals.
        assert_eq!(link.xids, (101..=140).collect::<Vec<_>>());
        assert_eq!(xid, 140);
    }
}
