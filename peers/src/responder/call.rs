//! Serving one call (RFC 8166 3.5, 4.3): its read chunks pulled, the upper layer run, the
//! results placed in write chunks or the reply chunk (or sent inline), and the reply framed
//! and sent, with Send With Invalidate where both peers allow it (RFC 8797 4).

use std::time::Instant;

use rpcrdma_codec::chunk::{ChunkLists, Segment, WriteChunk, SEGMENT_LEN};
use rpcrdma_codec::reassembly::{reassemble_call, write_placements};
use rpcrdma_codec::rpc::{AcceptStat, CallHeader, Rejected, ReplyHeader, RpcHeader, RpcMessage, RPC_VERSION};
use rpcrdma_codec::v1::HeaderBuilder;
use rpcrdma_codec::xdr::{pad4, Writer};

use rpcrdma_codec::xdr::Encode;

use super::{v2, Faults, Framing, Session, Stop};
use crate::observe::WireNote;
use crate::ulp::{UlpOutcome, UlpResults};

impl Session<'_> {
    /// A reply's transport header in `framing`.
    #[allow(clippy::too_many_arguments)]
    fn reply_header(
        &self,
        framing: Framing,
        nomsg: bool,
        xid: u32,
        credit: u32,
        writes: &[&[Segment]],
        reply: Option<&[Segment]>,
        payload_len: usize,
    ) -> Vec<u8> {
        if framing != Framing::V1 && !self.config.faults.v2_reply_v1 {
            return v2::reply_header(self, framing, nomsg, xid, credit, writes, reply, payload_len);
        }
        let mut b = if nomsg {
            HeaderBuilder::nomsg(xid, credit)
        } else if self.config.faults.reply_msgp {
            // RFC 5666 3.9: align 4 and a threshold above any inline reply (no padding).
            HeaderBuilder::msgp(xid, credit, 4, 1 << 20)
        } else {
            HeaderBuilder::msg(xid, credit)
        };
        b = b.write_list(writes);
        if self.config.faults.echo_read_list {
            b = b.read_list(&self.echoed_reads);
        }
        if self.config.faults.reply_wrong_version {
            b = b.raw_vers(0);
        }
        if let Some(r) = reply {
            b = b.reply_chunk(r);
        }
        b.encode_to_vec()
    }

    /// Pulls read chunks, runs the call, and sends the reply.
    pub(crate) fn serve_call(
        &mut self,
        xid: u32,
        chunks: &ChunkLists<'_>,
        is_nomsg: bool,
        inline: &[u8],
        framing: Framing,
    ) -> Result<(), Stop> {
        self.keep_read_list_to_echo(chunks);
        let Some(pulled) = self.pull_read_chunks(chunks)? else { return self.call_error(xid, framing) };
        let (reduced, rest): (Vec<u8>, &[(u32, Vec<u8>)]) = match pulled.first() {
            Some((0, d)) => (d.clone(), &pulled[1..]),
            _ if is_nomsg => return self.call_error(xid, framing),
            _ => (inline.to_vec(), &pulled[..]),
        };
        let total: usize = reduced.len() + rest.iter().map(|(_, d)| d.len() + 3).sum::<usize>();
        let mut call = vec![0u8; total];
        let n = match reassemble_call(&reduced, rest.iter().map(|(p, d)| (*p, d.as_slice())), &mut call) {
            Ok(n) => n,
            Err(_) if self.config.faults.lenient_read_list => {
                let call = CallHeader::new(xid, 0, 0, 0);
                return self.reply(&call, Some(UlpOutcome::GarbageArgs), chunks, framing);
            }
            Err(_) => return self.call_error(xid, framing),
        };
        call.truncate(n);
        let rpc = match RpcMessage::decode(&call) {
            Ok(m) => m,
            Err(_) => return self.call_error(xid, framing),
        };
        let RpcHeader::Call(c) = rpc.header else { return self.call_error(xid, framing) };
        if c.xid != xid && !self.config.faults.accept_xid_mismatch {
            return self.call_error(xid, framing);
        }
        // RFC 8166 6.1: a call that reduces an argument that is not DDP-eligible is not
        // processed; the violation is reported as an XDR error (4.5.2).
        let args_at = n - rpc.body.len();
        let ineligible = rest.iter().any(|(p, _)| {
            let p = *p as usize;
            p < args_at || !self.ulp.ddp_eligible_arg(c.prog, c.vers, c.proc_, rpc.body, p - args_at)
        });
        let lenient = self.config.faults.process_ineligible_chunks || self.config.faults.lenient_read_list;
        if ineligible && !lenient {
            return self.call_error(xid, framing);
        }
        if self.config.faults.read_fails_in_sixteen_segment_chunk {
            // Only its fault looks at the write list in the upper layer.
            let write_list: Vec<u32> = chunks.writes.chunks().map(|c| c.segment_count() as u32).collect();
            self.ulp.offered_write_list(&write_list);
        }
        let outcome =
            if c.rpcvers != RPC_VERSION { None } else { Some(self.ulp.call(c.prog, c.vers, c.proc_, rpc.body)) };
        self.reply(&c, outcome, chunks, framing)
    }

    /// Every read chunk pulled with RDMA Read (RFC 8166 3.4.5): each one's position and
    /// data. None when the call cannot be served: read chunks after a CONF_RDMA with
    /// maxrdmaread zero (RFC 5666 6.2: we "MUST NOT issue requests that require RDMA Read";
    /// no RPC-level reply is possible, RFC 8166 4.5.3: ERR_CHUNK), or a chunk a fault refuses.
    fn pull_read_chunks(&mut self, chunks: &ChunkLists<'_>) -> Result<Option<Pulled>, Stop> {
        let deadline = Instant::now() + self.deadline_step;
        let config = self.config;
        let faults = &config.faults;
        let no_reads = self.ulp.peer_max_rdma_reads() == Some(0) && !faults.ccp_maxrdmaread_ignored;
        if no_reads && !chunks.reads.is_empty() || faults.refuses_write_list(chunks) {
            return Ok(None);
        }
        let mut pulled = Vec::new();
        for c in chunks.reads.chunks() {
            if faults.refuses_read_chunk(&c) {
                return Ok(None);
            }
            let mut data = Vec::new();
            for (i, s) in c.segments().enumerate() {
                if i > 0 && faults.first_segment_only {
                    break;
                }
                let len = faults.bend_read_length(s.length);
                let part = self.conn.rdma_read(s.handle, s.offset, len, deadline)?;
                self.note(WireNote::Read { handle: s.handle, offset: s.offset, data: part.clone() });
                data.extend_from_slice(&part[..s.length.min(len) as usize]);
            }
            pulled.push((c.position, data));
        }
        Ok(Some(pulled))
    }

    /// Answers a processed call (RFC 8166 3.5): the results placed in the write list, the
    /// rest framed inline, and the reply sent inline or through the reply chunk. Each stage
    /// is the faithful rule; the fault switches bend the plan in `faults.rs`.
    fn reply(
        &mut self,
        call: &CallHeader<'_>,
        outcome: Option<UlpOutcome>,
        chunks: &ChunkLists<'_>,
        framing: Framing,
    ) -> Result<(), Stop> {
        let xid = call.xid;
        let faults = self.config.faults.clone();
        if faults.drops_reply(outcome.as_ref()) || faults.drops_excess_chunks(chunks) {
            return Ok(());
        }
        let (rpc_header, mut results) = reply_body(xid, outcome);
        faults.reduce_ineligible(&mut results, chunks);
        let deadline = Instant::now() + self.deadline_step;
        let Some(placed) = self.place_write_list(&results, chunks, deadline, &faults)? else {
            // RFC 8166 4.5.3: a write chunk too small; nothing is written past it.
            return self.call_error(xid, framing);
        };
        let (mut payload, pad_at) = inline_payload(&rpc_header, &results, &placed.reduced, &faults);
        let write_refs: Vec<&[Segment]> = placed.echo.iter().map(|v| v.as_slice()).collect();
        let offered: Option<Vec<Segment>> = chunks.reply.map(|c| c.segments().collect());
        let header_len =
            self.reply_header(framing, false, xid, 0, &write_refs, offered.as_deref(), payload.len()).len();
        // RFC 8166 3.3.2: the threshold is the largest message conveyed inline.
        let fits = faults.bend_fits_inline(
            header_len + payload.len() <= self.reply_inline,
            header_len + payload.len(),
            self.reply_inline,
        );
        let invalidate = self.invalidate_key(chunks);
        match (fits, offered) {
            (true, offered) => {
                // An offered reply chunk is echoed with zero lengths (RFC 8166 4.3.3).
                let zeroed = faults
                    .inline_reply_chunk_echo(offered.as_deref())
                    .unwrap_or_else(|| offered.map(|s| s.iter().map(|x| Segment { length: 0, ..*x }).collect()));
                let mut out =
                    self.reply_header(framing, false, xid, self.grant(), &write_refs, zeroed.as_deref(), payload.len());
                out.extend_from_slice(&payload);
                self.send(&out, invalidate)
            }
            // rtrext-03 4.2: a call sent with ROPT_XMTREQ may get its reply in a group.
            (false, None) if framing == Framing::V2Xmt && v2::send_group(self, xid, &payload)? => Ok(()),
            // Too long for inline and no reply chunk: nothing can carry the reply.
            (false, None) => self.call_error(xid, framing),
            (false, Some(offered)) => {
                faults.unpad_reply_chunk_payload(&mut payload, pad_at);
                self.long_reply(xid, framing, &write_refs, &offered, payload, invalidate, deadline, &faults)
            }
        }
    }

    /// The write list (RFC 8166 4.3.2.1, 4.3.2.3; RFC 8267 6.4.1): the k-th DDP-eligible item
    /// RDMA-Written into the k-th write chunk, an empty chunk keeping its item inline, every
    /// chunk echoed with the lengths written (unused ones with zeros). None when an item is
    /// longer than its chunk.
    fn place_write_list(
        &mut self,
        results: &UlpResults,
        chunks: &ChunkLists<'_>,
        deadline: Instant,
        faults: &Faults,
    ) -> Result<Option<Placed>, Stop> {
        let items: Vec<&[u8]> = results.items().map(|(d, _)| d).collect();
        let mut placed = Placed { echo: Vec::new(), reduced: vec![None; items.len()] };
        let count = chunks.writes.chunks().count();
        for (i, wc) in chunks.writes.chunks().enumerate() {
            let mut segs: Vec<Segment> = wc.segments().map(|s| Segment { length: 0, ..s }).collect();
            let k = faults.write_list_item(i, count, chunks.reply.is_some()).filter(|&k| k < items.len());
            if let Some(k) = k.filter(|_| wc.segment_count() > 0) {
                let mut data = items[k].to_vec();
                if data.len() as u64 > wc.length() {
                    if !faults.write_chunk_truncated {
                        return Ok(None);
                    }
                    data.truncate(wc.length() as usize);
                }
                let item = faults.write_chunk_bytes(k, &data, &results.head);
                self.rdma_write_item(&wc, &item, &mut segs, deadline, faults)?;
                placed.reduced[k] = Some(data.len());
                faults.bend_write_chunk_echo(&mut segs);
            }
            if faults.write_past_segment && chunks.writes.len() == 3 && i == 2 {
                if let Some(s) = wc.segments().next() {
                    self.conn.rdma_write(s.handle, s.offset.wrapping_add(s.length as u64), &[0xee; 8], deadline)?;
                }
            }
            if faults.keeps_write_chunk_echo(&segs) {
                placed.echo.push(segs);
            }
        }
        faults.reduce_surplus_items(&mut placed.reduced, &items, count);
        Ok(Some(placed))
    }

    /// A long reply (RFC 8166 3.5.3): the whole payload RDMA-Written through the reply chunk,
    /// then RDMA_NOMSG with the chunk echoed with the lengths written.
    #[allow(clippy::too_many_arguments)]
    fn long_reply(
        &mut self,
        xid: u32,
        framing: Framing,
        write_refs: &[&[Segment]],
        offered: &[Segment],
        mut payload: Vec<u8>,
        invalidate: Option<u32>,
        deadline: Instant,
        faults: &Faults,
    ) -> Result<(), Stop> {
        let capacity: u64 = offered.iter().map(|s| s.length as u64).sum();
        if payload.len() as u64 > capacity {
            if faults.drop_unsendable_reply {
                return Ok(());
            }
            if !faults.reply_chunk_truncated {
                // RFC 8166 4.5.3: a reply chunk too small; nothing is written past it.
                return self.call_error(xid, framing);
            }
            payload.truncate(capacity as usize);
        }
        let mut echo: Vec<Segment> = offered.iter().map(|s| Segment { length: 0, ..*s }).collect();
        if faults.reply_chunk_first_segment {
            self.conn.rdma_write(offered[0].handle, offered[0].offset, &payload, deadline)?;
            echo[0].length = payload.len() as u32;
        } else {
            let rc_bytes = {
                let mut b = vec![0u8; 4 + SEGMENT_LEN * offered.len()];
                let mut w = Writer::new(&mut b);
                rpcrdma_codec::chunk::ChunkWriter::counted_segments(&mut w, offered)?;
                b
            };
            let rc = WriteChunk::decode(&mut rpcrdma_codec::xdr::Reader::new(&rc_bytes))?;
            self.rdma_write_item(&rc, &payload, &mut echo, deadline, faults)?;
        }
        faults.bend_reply_chunk_echo(&mut echo);
        let out = self.reply_header(framing, true, xid, self.grant(), write_refs, Some(&echo), 0);
        self.send(&out, invalidate)?;
        if faults.done_after_reply_chunk && framing == Framing::V1 {
            self.send(&HeaderBuilder::done(xid, self.grant()).encode_to_vec(), None)?;
        }
        Ok(())
    }

    /// RDMA-Writes `item` into `chunk`, recording the lengths written in `echo`.
    fn rdma_write_item(
        &mut self,
        chunk: &WriteChunk<'_>,
        item: &[u8],
        echo: &mut [Segment],
        deadline: Instant,
        faults: &Faults,
    ) -> Result<(), Stop> {
        let places = write_placements(chunk, item.len() as u64)
            .map_err(|_| Stop::Unsupported("a result item longer than the write chunk"))?;
        for p in places {
            let from = p.item_offset as usize;
            let data = &item[from..from + p.length as usize];
            self.conn.rdma_write(p.segment.handle, p.segment.offset, data, deadline)?;
            self.note(WireNote::Write { handle: p.segment.handle, offset: p.segment.offset, data: data.to_vec() });
            echo[p.segment_index].length =
                if faults.write_chunk_length_padded { p.length + pad4(p.length as usize) as u32 } else { p.length };
        }
        Ok(())
    }

    /// The R_key to invalidate with the reply (RFC 8797 4: only when both sides set R;
    /// only a handle from this request's chunks).
    fn invalidate_key(&mut self, chunks: &ChunkLists<'_>) -> Option<u32> {
        if self.config.faults.invalidate_foreign_key {
            return Some(0x0bad_0bad);
        }
        if !self.may_invalidate && !self.config.faults.invalidate_without_r {
            return None;
        }
        let key = chunks
            .writes
            .chunks()
            .flat_map(|c| c.segments())
            .chain(chunks.reply.iter().flat_map(|c| c.segments()))
            .chain(chunks.reads.segments().map(|s| s.target))
            .map(|s| s.handle)
            .next();
        if self.config.faults.invalidate_previous_key {
            return std::mem::replace(&mut self.previous_key, key).or(key);
        }
        key
    }
}

/// Each read chunk pulled: its position and its data.
type Pulled = Vec<(u32, Vec<u8>)>;

/// What the write list carried: each chunk's echo, and the length of each item reduced into
/// a write chunk (None for those left inline).
struct Placed {
    echo: Vec<Vec<Segment>>,
    reduced: Vec<Option<usize>>,
}

/// The RPC reply header and the results for a call's outcome (None: RPC version mismatch).
fn reply_body(xid: u32, outcome: Option<UlpOutcome>) -> (ReplyHeader<'static>, UlpResults) {
    let accepted = |stat| (ReplyHeader::accepted(xid, stat), UlpResults::default());
    match outcome {
        None => (ReplyHeader::denied(xid, Rejected::RpcMismatch { low: 2, high: 2 }), UlpResults::default()),
        Some(UlpOutcome::Success(r)) => (ReplyHeader::accepted(xid, AcceptStat::Success), r),
        Some(UlpOutcome::ProgUnavail) => accepted(AcceptStat::ProgUnavail),
        Some(UlpOutcome::ProgMismatch { low, high }) => accepted(AcceptStat::ProgMismatch { low, high }),
        Some(UlpOutcome::ProcUnavail) => accepted(AcceptStat::ProcUnavail),
        Some(UlpOutcome::GarbageArgs) => accepted(AcceptStat::GarbageArgs),
        Some(UlpOutcome::SystemErr) => accepted(AcceptStat::SystemErr),
    }
}

/// The inline payload (RFC 8166 3.4.4.1): the RPC reply header, then the results, each item
/// reduced into a write chunk removed with its XDR pad, its length word staying. Also where
/// the first inline item's XDR pad lies, and how long it is.
fn inline_payload(
    rpc_header: &ReplyHeader<'_>,
    results: &UlpResults,
    reduced: &[Option<usize>],
    faults: &Faults,
) -> (Vec<u8>, Option<(usize, usize)>) {
    let mut payload = rpc_header.encode_to_vec();
    payload.extend_from_slice(&results.head);
    let mut pad_at = None;
    for ((d, tail), reduced) in results.items().zip(reduced) {
        match *reduced {
            Some(n) => faults.bend_reduced_item(&mut payload, n),
            None => {
                payload.extend_from_slice(d);
                pad_at = pad_at.or(Some((payload.len(), pad4(d.len()))));
                payload.resize(payload.len() + pad4(d.len()), 0);
            }
        }
        payload.extend_from_slice(tail);
    }
    if results.ddp.is_none() {
        payload.extend_from_slice(&results.tail);
    }
    (payload, pad_at)
}
