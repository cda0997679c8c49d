//! `rpcrdma-harness bench-read`: 4 KiB NFSv3 READs per second against a peer, at the queue
//! depths asked for, the figure users set beside their own hardware's (there is no C READ
//! client to judge it against, unlike `bench-null`'s NULL rate).
//!
//! Each call is an RDMA_MSG READ3args of 4096 bytes at a 4 KiB-aligned offset of the reference
//! tree's `big` file, offering one write chunk of one 4096-byte segment, as the Linux client
//! does for a READ whose reply would not fit its 4 KiB receive buffers (RFC 8267 3.2: READ
//! data is DDP-eligible). In Version One the requester decides where the data goes: offered a
//! write chunk, the responder MUST push the data into it (RFC 8166 4.3.2); given an empty
//! write list it returns the data inline (4.3.2.3), which our 4096-byte receive size (RFC
//! 8797) could not take. Only replies that decode as READ3resok with count 4096, the data
//! length word 4096, and the file's 4096 bytes in the offered chunk are counted; anything
//! else ends the run with exit 1 and what came instead.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, Message};
use rpcrdma_codec::Profile;
use rpcrdma_peers::proto::nfs3::{
    self, file_contents, lookup_fh, read_args, read_result, NFS3_OK, NFSPROC3_LOOKUP, NFSPROC3_READ,
};
use rpcrdma_peers::proto::Call;
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::{Access, Connection, Event, Region, WcStatus};
use rpcrdma_peers::ulp::tree::FILES;

use crate::exit::{usage, Ending, Outcome};

#[derive(Debug, Args)]
pub struct BenchReadArgs {
    /// The peer (default: the embedded reference responder).
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// READs measured at each depth.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    calls: u32,
    /// READs sent first and not measured.
    #[arg(long, default_value_t = 200)]
    warmup: u32,
    /// READs kept outstanding (repeatable; default: 1 and the peer's whole credit grant);
    /// each is held to the grant (RFC 8166 3.3.1).
    #[arg(long = "depth", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    depths: Vec<u32>,
    #[command(flatten)]
    mount: crate::mount::MountArgs,
    /// Make the embedded responder misbehave (for testing the harness itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    fault: Vec<String>,
    /// The reference tree's file to READ (for testing the harness itself: one shorter than
    /// 4096 bytes makes every READ short).
    #[arg(long, value_name = "NAME", default_value = nfs3::FILE_BIG, hide = true, value_parser = reference_file)]
    file: String,
}

/// `--file`: a regular file of the reference tree (its contents follow from its size).
fn reference_file(name: &str) -> Result<String, String> {
    match FILES.iter().find(|(n, _)| *n == name) {
        Some(_) => Ok(name.to_string()),
        None => {
            let known: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
            Err(format!("not a file of the reference tree; known: {}", known.join(", ")))
        }
    }
}

/// The bytes each READ asks for.
pub const READ_SIZE: u32 = 4096;
/// Our receive buffers and inline threshold (RFC 8797 Receive Size), as the Linux client's.
const RECEIVE_SIZE: usize = 4096;
/// Receives we keep posted and write chunks we register: the largest window we can drive.
const OUR_WINDOW: u32 = 64;
/// The READs go round the first 16 4-KiB blocks of the file (`big`, 70000 bytes, has them).
const BLOCKS: u64 = 16;
/// What a write chunk's region holds before each READ, so stale data never passes for new.
const CANARY: u8 = 0xa5;
/// How long one reply may take.
const REPLY_WAIT: Duration = Duration::from_secs(5);

/// A READ in flight: its write chunk's region and the file offset it asked for.
struct Outstanding {
    slot: usize,
    offset: u64,
}

struct Bench<'a> {
    conn: &'a mut dyn Connection,
    fh: Vec<u8>,
    regions: Vec<Region>,
    free: Vec<usize>,
    outstanding: HashMap<u32, Outstanding>,
    /// The file's name and contents (the reference tree's: `nfs3::file_contents` of its size).
    name: &'a str,
    file: Vec<u8>,
    /// How many whole 4 KiB blocks the READs go round (at least one: a short file's first).
    blocks: u64,
    xid: u32,
    next_block: u64,
    counted: u64,
    canary: Vec<u8>,
}

/// The reply's RPC results and the reply's first write chunk as returned (None: no write
/// list), or why the message is not an accepted RPC reply carried inline.
fn accepted_results<'m>(
    msg: &'m Message<'m>,
) -> Result<(&'m [u8], Option<Vec<rpcrdma_codec::chunk::Segment>>), String> {
    let chunks = match &msg.header.body {
        Body::Msg(c) => c,
        Body::Error(e) => {
            return Err(format!("RDMA_ERROR {} instead of a reply", e.name().unwrap_or("(unknown code)")))
        }
        other => {
            let proc_ = other.proc_().name().unwrap_or("an unknown rdma_proc");
            return Err(format!("{proc_} instead of an RDMA_MSG reply (no reply chunk was offered)"));
        }
    };
    let rpc = RpcMessage::decode(msg.payload).map_err(|e| format!("the RPC reply does not decode: {e}"))?;
    match rpc.header {
        RpcHeader::Reply(r) if r.xid != msg.header.xid => {
            Err(format!("the RPC reply's xid {:#010x} is not rdma_xid {:#010x}", r.xid, msg.header.xid))
        }
        RpcHeader::Reply(r) => match r.body {
            ReplyBody::Accepted { stat: AcceptStat::Success, .. } => {
                let first = chunks.writes.chunks().next().map(|c| c.segments().collect());
                Ok((rpc.body, first))
            }
            ReplyBody::Accepted { stat, .. } => Err(format!("MSG_ACCEPTED {}", stat.name())),
            ReplyBody::Denied(why) => Err(format!("MSG_DENIED {}", why.name())),
        },
        RpcHeader::Call(_) => Err("an RPC call instead of a reply".into()),
    }
}

impl Bench<'_> {
    fn next_xid(&mut self) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.xid
    }

    /// The next message received (a receive reposted for it), or what came instead.
    fn receive(&mut self) -> Result<Vec<u8>, String> {
        let deadline = Instant::now() + REPLY_WAIT;
        loop {
            match self.conn.poll(deadline).map_err(|e| format!("waiting for a reply: {e}"))? {
                Event::SendDone { status: WcStatus::Success } => {}
                Event::Recv { status: WcStatus::Success, data, .. } => {
                    self.conn.post_recv(RECEIVE_SIZE, 1).map_err(|e| e.to_string())?;
                    return Ok(data);
                }
                Event::Recv { status, .. } | Event::SendDone { status } => {
                    return Err(format!("a completion with status {}", status.name()))
                }
                Event::Disconnected => return Err("the peer disconnected".into()),
            }
        }
    }

    /// LOOKUP of the file in the export's root: its handle, and the credits the reply grants.
    fn lookup(&mut self, root: &[u8]) -> Result<u32, String> {
        let xid = self.next_xid();
        let call = Call::nfs3(xid, OUR_WINDOW, NFSPROC3_LOOKUP, nfs3::lookup_args(root, self.name));
        self.conn.send(&call.msg()).map_err(|e| e.to_string())?;
        let data = self.receive()?;
        let msg = Message::decode(&data, &Profile::default())
            .map_err(|e| format!("the LOOKUP reply's transport header does not decode: {e}"))?;
        let (results, _) = accepted_results(&msg).map_err(|e| format!("LOOKUP of {}: {e}", self.name))?;
        self.fh = lookup_fh(results).ok_or_else(|| {
            format!(
                "LOOKUP of {} in the export's root: status {} (is the reference tree exported? \
                 `rpcrdma-harness export-tree DIR` writes it)",
                self.name,
                nfs3::status(results).map_or("that does not decode".into(), |s| s.to_string())
            )
        })?;
        Ok(msg.header.credit)
    }

    /// Sends a READ of the next block through a free write chunk.
    fn send_read(&mut self) -> Result<(), String> {
        let slot = self.free.pop().expect("never more READs outstanding than regions");
        let region = self.regions[slot];
        self.conn.write_local(&region, 0, &self.canary).map_err(|e| e.to_string())?;
        let offset = (self.next_block % self.blocks) * READ_SIZE as u64;
        self.next_block += 1;
        let xid = self.next_xid();
        let mut call = Call::nfs3(xid, OUR_WINDOW, NFSPROC3_READ, read_args(&self.fh, offset, READ_SIZE));
        call.writes = vec![vec![region.segment()]];
        self.conn.send(&call.msg()).map_err(|e| e.to_string())?;
        self.outstanding.insert(xid, Outstanding { slot, offset });
        Ok(())
    }

    /// Waits for a READ's reply and counts it if it is READ3resok with the 4096 bytes asked
    /// for; anything else is the error.
    fn complete_read(&mut self) -> Result<(), String> {
        let n = self.outstanding.len();
        let data = self.receive().map_err(|e| format!("waiting for the replies to {n} outstanding READs: {e}"))?;
        let msg = Message::decode(&data, &Profile::default())
            .map_err(|e| format!("a reply's transport header does not decode: {e}"))?;
        let xid = msg.header.xid;
        let Some(read) = self.outstanding.remove(&xid) else {
            return Err(format!("a reply with rdma_xid {xid:#010x}, which no outstanding READ has"));
        };
        let region = self.regions[read.slot];
        self.free.push(read.slot);
        let what = format!("the READ of {READ_SIZE} bytes at offset {} (xid {xid:#010x})", read.offset);
        let (results, returned) = accepted_results(&msg).map_err(|e| format!("{what}: {e}"))?;
        let written =
            if returned.is_some() { self.conn.read_local(&region).map_err(|e| e.to_string())? } else { vec![] };
        let at = (read.offset as usize).min(self.file.len());
        let expected = &self.file[at..(at + READ_SIZE as usize).min(self.file.len())];
        judge_read(results, returned.as_deref(), &region, &written, expected).map_err(|e| format!("{what}: {e}"))?;
        self.counted += 1;
        Ok(())
    }

    /// `total` READs keeping `depth` outstanding; the elapsed time.
    fn drive(&mut self, depth: u32, total: u32) -> Result<Duration, String> {
        let started = Instant::now();
        let (mut sent, mut done) = (0, 0);
        while done < total {
            while sent < total && sent - done < depth {
                self.send_read()?;
                sent += 1;
            }
            self.complete_read()?;
            done += 1;
        }
        Ok(started.elapsed())
    }
}

/// Judges one READ reply: `results` (the RPC results inline), the first write chunk as the
/// reply returned it (None: no write list), the region we offered as that chunk and what it
/// holds now, and the bytes the file holds there. What is wrong, if anything.
fn judge_read(
    results: &[u8],
    returned: Option<&[rpcrdma_codec::chunk::Segment]>,
    offered: &Region,
    written: &[u8],
    expected: &[u8],
) -> Result<(), String> {
    let rr =
        read_result(results).ok_or_else(|| format!("READ3res does not decode ({} bytes of results)", results.len()))?;
    if rr.status != NFS3_OK {
        return Err(format!("READ3res status {} (not NFS3_OK)", rr.status));
    }
    if rr.count != READ_SIZE || rr.data_len != READ_SIZE {
        return Err(format!(
            "READ3resok count {} and data length {}, not {READ_SIZE}: a short or inconsistent READ",
            rr.count, rr.data_len
        ));
    }
    let inline = &results[rr.data_at..];
    let chunk_len: u64 = returned.map_or(0, |s| s.iter().map(|s| s.length as u64).sum());
    // RFC 8166 4.3.2: offered a write chunk, the responder MUST push the data into it.
    let Some(seg) = returned.filter(|_| chunk_len > 0) else {
        return Err(format!(
            "the write chunk came back {} with {} bytes inline after the data length word: RFC 8166 4.3.2 \
             puts a DDP-eligible result in the write chunk offered",
            if returned.is_some() { "unused" } else { "missing (no write list)" },
            inline.len()
        ));
    };
    if seg.len() != 1 || seg[0].handle != offered.handle || seg[0].offset != offered.offset {
        let got: Vec<String> =
            seg.iter().map(|s| format!("handle {:#x} length {} offset {:#x}", s.handle, s.length, s.offset)).collect();
        return Err(format!(
            "the write chunk came back as [{}], not the one segment offered (handle {:#x}, offset {:#x})",
            got.join(", "),
            offered.handle,
            offered.offset
        ));
    }
    if chunk_len != READ_SIZE as u64 {
        return Err(format!("the write chunk came back holding {chunk_len} bytes, not {READ_SIZE}"));
    }
    // RFC 8166 3.4.4.4: a reduced item leaves its length word in the Payload stream and
    // nothing after it (4096 bytes need no XDR roundup).
    if !inline.is_empty() {
        return Err(format!("{} bytes of results after the data length word of a reduced READ", inline.len()));
    }
    if written.get(..READ_SIZE as usize) != Some(expected) {
        let at = written.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!("the write chunk does not hold the file's bytes (first difference at byte {at})"));
    }
    Ok(())
}

pub fn run(args: BenchReadArgs) -> Outcome {
    let mut faults = Faults::default();
    for f in &args.fault {
        if !faults.set(f) {
            return Err(usage(format!("unknown fault {f:?}; known: {}", Faults::NAMES.join(", "))));
        }
    }
    if args.peer.is_some() && !args.fault.is_empty() {
        return Err(usage("--fault applies to the embedded responder only, not with --peer"));
    }
    let (connector, mut conn) = crate::peer::bench_connection(
        args.peer.as_deref(),
        || Responder::reference(Config { faults, ..Config::default() }),
        RECEIVE_SIZE as u32,
        REPLY_WAIT,
    )?;
    // The export's root handle: by MOUNT from a peer, as `run` obtains it.
    let (root, mounted) = match crate::mount::for_run(&args.mount, args.peer.as_deref(), REPLY_WAIT) {
        Ok(r) => r,
        Err(e) => {
            conn.disconnect();
            return Err(e);
        }
    };
    let size = FILES.iter().find(|(n, _)| *n == args.file).map_or(0, |(_, len)| *len);
    let result = (|| -> Result<(), String> {
        conn.post_recv(RECEIVE_SIZE, OUR_WINDOW as usize).map_err(|e| e.to_string())?;
        let mut bench = Bench {
            conn: conn.as_mut(),
            fh: Vec::new(),
            regions: Vec::new(),
            free: Vec::new(),
            outstanding: HashMap::new(),
            name: &args.file,
            file: file_contents(size),
            blocks: (size as u64 / READ_SIZE as u64).clamp(1, BLOCKS),
            xid: 0x5000_0000,
            next_block: 0,
            counted: 0,
            canary: vec![CANARY; READ_SIZE as usize],
        };
        let grant = bench.lookup(&root.fh)?;
        let window = grant.clamp(1, OUR_WINDOW);
        for _ in 0..window {
            let r =
                bench.conn.register(READ_SIZE, Access::WRITE).map_err(|e| format!("registering a write chunk: {e}"))?;
            bench.regions.push(r);
        }
        bench.free = (0..window as usize).rev().collect();
        bench.drive(window, args.warmup)?;
        crate::outln!(
            "peer {} grants {grant} credits; {} READs of {READ_SIZE} bytes of {}/{} per depth after {} warm-up READs, \
             each offering a write chunk of one {READ_SIZE}-byte segment",
            connector.describe(),
            args.calls,
            args.mount.export.trim_end_matches('/'),
            args.file,
            args.warmup
        );
        let depths = if args.depths.is_empty() { vec![1, window] } else { args.depths.clone() };
        for depth in depths.into_iter().map(|d| d.min(window)) {
            let t = bench.drive(depth, args.calls)?;
            let rate = args.calls as f64 / t.as_secs_f64();
            crate::outln!(
                "read-4k depth={depth}: {rate:.0} READs/s ({:.1} us per READ, {:.1} MiB/s)",
                1e6 / rate,
                rate * READ_SIZE as f64 / (1 << 20) as f64
            );
            if crate::signals::received().is_some() {
                return Err("interrupted".into());
            }
        }
        crate::outln!(
            "read-4k: {} READ3resok replies, each with the file's {READ_SIZE} bytes in the write chunk",
            bench.counted
        );
        Ok(())
    })();
    conn.disconnect();
    if let Some(at) = mounted {
        // Courtesy, as umount does.
        let _ = crate::mount::umnt(at, &args.mount.export, REPLY_WAIT);
    }
    match result {
        Ok(()) => Ok(Ending::AsExpected),
        Err(_) if crate::signals::received().is_some() => Ok(Ending::judged(false)),
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
    use rpcrdma_codec::chunk::Segment;

    const REGION: Region = Region { handle: 7, offset: 0x1000, length: READ_SIZE };

    /// READ3resok: status, no attributes, count, eof, data length, then `inline`.
    fn resok(count: u32, data_len: u32, inline: &[u8]) -> Vec<u8> {
        let mut b: Vec<u8> = [0u32, 0, count, 0, data_len].iter().flat_map(|w| w.to_be_bytes()).collect();
        b.extend_from_slice(inline);
        b
    }

    fn file() -> Vec<u8> {
        file_contents(70000)[..4096].to_vec()
    }

    #[test]
    fn a_read_through_the_chunk_counts() {
        let f = file();
        let seg = [Segment::new(7, 4096, 0x1000)];
        assert_eq!(judge_read(&resok(4096, 4096, &[]), Some(&seg), &REGION, &f, &f), Ok(()));
    }

    #[test]
    fn short_garbage_or_misplaced_reads_are_refused() {
        let f = file();
        let seg = |len, handle, offset| [Segment::new(handle, len, offset)];
        // (results, the write chunk returned, what our region holds, what the error says)
        type Case = (Vec<u8>, Option<[Segment; 1]>, Vec<u8>, &'static str);
        let cases: Vec<Case> = vec![
            (resok(4095, 4095, &[]), Some(seg(4095, 7, 0x1000)), f.clone(), "count 4095"),
            (resok(4096, 4095, &[]), Some(seg(4096, 7, 0x1000)), f.clone(), "data length 4095"),
            (resok(4096, 4096, &[]), Some(seg(4092, 7, 0x1000)), f.clone(), "holding 4092 bytes"),
            (resok(4096, 4096, &[]), Some(seg(4096, 8, 0x1000)), f.clone(), "not the one segment offered"),
            (resok(4096, 4096, &[]), Some(seg(4096, 7, 0x2000)), f.clone(), "not the one segment offered"),
            (resok(4096, 4096, &[0; 4]), Some(seg(4096, 7, 0x1000)), f.clone(), "4 bytes of results after"),
            (resok(4096, 4096, &[]), Some(seg(4096, 7, 0x1000)), vec![CANARY; 4096], "first difference at byte 0"),
            // The data inline although a write chunk was offered (RFC 8166 4.3.2), even the right bytes.
            (resok(4096, 4096, &f), Some(seg(0, 7, 0x1000)), vec![], "came back unused with 4096 bytes inline"),
            (resok(4096, 4096, &f), None, vec![], "missing (no write list) with 4096 bytes inline"),
            ([5u32, 0].iter().flat_map(|w| w.to_be_bytes()).collect(), None, vec![], "status 5"),
            (vec![0, 0, 0, 0, 0, 0], None, vec![], "does not decode"),
        ];
        for (results, returned, written, says) in cases {
            let e = judge_read(&results, returned.as_ref().map(|s| &s[..]), &REGION, &written, &f).unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
    }
}
