//! `rpcrdma-harness bench-null`: NFSv3 NULL calls per second against a peer, at
//! queue depth 1 and with the peer's whole credit window outstanding. Measures what the
//! harness can drive, so its overhead can be compared with the peer's.

use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::rpc::CallHeader;
use rpcrdma_codec::v1::{FixedFields, HeaderBuilder};
use rpcrdma_codec::xdr::Writer;
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::{Connection, Event, WcStatus};

use crate::exit::{Ending, Outcome};

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

/// RDMA_MSG without chunks (RFC 8166 4.2) carrying an NFSv3 NULL call: 68 bytes.
fn null_call(xid: u32) -> [u8; 68] {
    let mut buf = [0u8; 68];
    let mut w = Writer::new(&mut buf);
    HeaderBuilder::msg(xid, OUR_WINDOW).write(&mut w).expect("68 bytes");
    CallHeader::new(xid, 100003, 3, 0).encode(&mut w).expect("68 bytes");
    buf
}

/// Waits for the next reply; its credit grant.
fn reply(conn: &mut dyn Connection) -> Result<u32, String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match conn.poll(deadline).map_err(|e| e.to_string())? {
            Event::SendDone { status: WcStatus::Success } => {}
            Event::Recv { status: WcStatus::Success, data, .. } => {
                conn.post_recv(RECEIVE_SIZE, 1).map_err(|e| e.to_string())?;
                return FixedFields::decode(&data).map(|f| f.credit).map_err(|e| e.to_string());
            }
            other => return Err(format!("{other:?}")),
        }
    }
}

/// `total` calls keeping `depth` outstanding; the elapsed time.
fn drive(conn: &mut dyn Connection, depth: u32, total: u32, xid: &mut u32) -> Result<Duration, String> {
    let started = Instant::now();
    let (mut sent, mut done) = (0, 0);
    while done < total {
        while sent < total && sent - done < depth {
            *xid = xid.wrapping_add(1);
            conn.send(&null_call(*xid)).map_err(|e| e.to_string())?;
            sent += 1;
        }
        reply(conn)?;
        done += 1;
    }
    Ok(started.elapsed())
}

pub fn run(args: BenchArgs) -> Outcome {
    let (connector, mut conn) = crate::peer::bench_connection(
        args.peer.as_deref(),
        || Responder::reference(Config::default()),
        RECEIVE_SIZE as u32,
        Duration::from_secs(5),
    )?;
    let result = (|| -> Result<(), String> {
        conn.post_recv(RECEIVE_SIZE, OUR_WINDOW as usize).map_err(|e| e.to_string())?;
        let mut xid = 0x4000_0000u32;
        conn.send(&null_call(xid)).map_err(|e| e.to_string())?;
        let grant = reply(conn.as_mut())?;
        let window = grant.clamp(1, OUR_WINDOW);
        crate::outln!(
            "peer {} grants {grant} credits; {} calls per depth after {} warm-up calls",
            connector.describe(),
            args.calls,
            args.warmup
        );
        let depths = if args.depths.is_empty() { vec![1, window] } else { args.depths.clone() };
        for depth in depths.into_iter().map(|d| d.min(window)) {
            // Warmed up at each depth, as the C client (harness/linux-peer/null-client.c) is.
            drive(conn.as_mut(), depth, args.warmup, &mut xid)?;
            let t = drive(conn.as_mut(), depth, args.calls, &mut xid)?;
            let rate = args.calls as f64 / t.as_secs_f64();
            crate::outln!("null-calls depth={depth}: {:.0} calls/s ({:.1} us per call)", rate, 1e6 / rate);
        }
        conn.disconnect();
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
