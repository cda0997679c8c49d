//! What the fuzzer sends, at two levels.
//!
//! A [`Spec`] is a message described by its fields: the fixed fields, the procedure's form,
//! the chunk lists with each segment's length, offset and handle (each able to be right or
//! wrong on purpose), the RPC call, and raw byte edits on top. Mutation works on specs.
//!
//! A [`Wire`] message is what a spec encodes to with the codec's builders: the exact bytes,
//! the memory regions its segments point into (each registered with guard bytes on both
//! sides), and the places in the bytes where a region's real handle and address go once
//! registered ([`Fixup`]s): until then the bytes hold placeholders. Reproducer files store
//! wire messages, so they replay byte for byte on any connection.

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::v1::HeaderBuilder;
use rpcrdma_codec::v2::{self, MsgType, OptInfo};
use rpcrdma_peers::proto::Call;

/// Guard bytes registered before and after every region's advertised part.
pub const GUARD: u32 = 32;
/// What guard bytes (and the unadvertised parts of regions) hold.
pub const CANARY: u8 = 0xc5;
/// The largest region a spec asks for (its advertised part).
pub const MAX_REGION: u32 = 8192;

const HANDLE_TAG: u32 = 0xa5a5_0000;
const OFFSET_TAG: u32 = 0x5a5a_0000;
const OFFSET_MID: u32 = 0x8000_0000;

/// The placeholder handle of region `r`.
pub fn placeholder_handle(r: usize) -> u32 {
    HANDLE_TAG | r as u32
}

/// The placeholder address `delta` bytes into region `r`.
pub fn placeholder_offset(r: usize, delta: i64) -> u64 {
    ((OFFSET_TAG | r as u32) as u64) << 32 | (OFFSET_MID as i64).wrapping_add(delta) as u32 as u64
}

/// One segment: the region it points into and how the advertised fields relate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seg {
    /// Bytes of the region's advertised part (what a well-formed segment's length says).
    pub region_len: u32,
    /// The length advertised.
    pub length: u32,
    /// Where the segment starts relative to the advertised part (0: well-formed).
    pub at: i32,
    /// XORed into the handle (0: the real handle).
    pub handle_xor: u32,
    /// Point into region `k` of the message (an earlier segment's) instead of a region of its
    /// own: segments that overlap in memory. Ignored when there is no region `k` yet.
    pub share: Option<u8>,
}

impl Seg {
    pub fn exact(len: u32) -> Seg {
        Seg { region_len: len, length: len, at: 0, handle_xor: 0, share: None }
    }
}

/// A read segment: a position in the payload stream and its segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSeg {
    pub position: u32,
    pub seg: Seg,
}

/// The transport procedure's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Msg,
    NoMsg,
    MsgP {
        align: u32,
        thresh: u32,
    },
    Done,
    Error {
        code: u32,
    },
    /// RDMA2_OPTIONAL with this opttype (in Version One: an RDMA_MSG with this rdma_proc).
    Optional {
        opttype: u32,
    },
}

/// The RPC call a message carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcSpec {
    /// XORed into the transport's rdma_xid to give the RPC XID (0: they match).
    pub xid_xor: u32,
    pub rpcvers: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub args: Vec<u8>,
}

/// A raw change to the encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// XOR one byte (at a position modulo the message length).
    Byte { at: u16, xor: u8 },
    /// Overwrite one 4-byte-aligned word (its index modulo the words there are).
    Word { index: u16, value: u32 },
    /// Overwrite the segment count of write chunk `chunk` (modulo the chunks there are; the
    /// reply chunk's when there are none), leaving the segments as they are.
    SegmentCount { chunk: u8, value: u32 },
}

/// A message described by its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    /// An rdma_proc word other than the form's.
    pub proc_override: Option<u32>,
    pub form: Form,
    /// Version Two: the rdma_direction word (None: the -00 envelope without it).
    pub direction: Option<u32>,
    pub reads: Vec<ReadSeg>,
    pub writes: Vec<Vec<Seg>>,
    pub reply: Option<Vec<Seg>>,
    pub rpc: Option<RpcSpec>,
    /// The RPC call travels in the position-zero read segments instead of inline.
    pub long_call: bool,
    pub edits: Vec<Edit>,
    /// Cut the encoded message to this many bytes.
    pub truncate: Option<u16>,
}

/// Where a registered region's real coordinates go in a wire message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixup {
    /// The 4 bytes at `at` are region `region`'s handle.
    Handle { at: usize, region: usize },
    /// The 8 bytes at `at` are an address `delta` bytes into region `region` (from its start,
    /// guard included).
    Offset { at: usize, region: usize, delta: i64 },
}

/// A region a wire message points into: its whole contents (guards included) as registered,
/// and the ranges of it the message lets the peer write (write and reply segments) and read
/// (read segments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRegion {
    pub contents: Vec<u8>,
    pub writable: Vec<(u32, u32)>,
    pub readable: Vec<(u32, u32)>,
}

/// A message as sent: bytes with placeholders, its regions and the fixups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire {
    pub bytes: Vec<u8>,
    pub regions: Vec<WireRegion>,
    pub fixups: Vec<Fixup>,
}

impl Wire {
    /// A wire message from bytes and regions; the fixups are found from the placeholders.
    pub fn new(bytes: Vec<u8>, regions: Vec<WireRegion>) -> Wire {
        let mut fixups = Vec::new();
        let word = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let mut i = 0;
        while i + 4 <= bytes.len() {
            let w = word(i);
            if w & 0xffff_0000 == HANDLE_TAG && ((w & 0xffff) as usize) < regions.len() {
                fixups.push(Fixup::Handle { at: i, region: (w & 0xffff) as usize });
            } else if w & 0xffff_0000 == OFFSET_TAG && ((w & 0xffff) as usize) < regions.len() && i + 8 <= bytes.len() {
                let delta = word(i + 4) as i64 - OFFSET_MID as i64;
                fixups.push(Fixup::Offset { at: i, region: (w & 0xffff) as usize, delta });
                i += 8;
                continue;
            }
            i += 4;
        }
        Wire { bytes, regions, fixups }
    }

    /// The bytes with each region's real handle and address (`bound[r]`: handle, address).
    pub fn bind(&self, bound: &[(u32, u64)]) -> Vec<u8> {
        let mut b = self.bytes.clone();
        for f in &self.fixups {
            match *f {
                Fixup::Handle { at, region } => b[at..at + 4].copy_from_slice(&bound[region].0.to_be_bytes()),
                Fixup::Offset { at, region, delta } => {
                    let v = (bound[region].1 as i64).wrapping_add(delta) as u64;
                    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
                }
            }
        }
        b
    }
}

/// Regions being laid out for one spec.
struct Layout {
    regions: Vec<WireRegion>,
}

impl Layout {
    /// Adds a region for `seg` with `data` in its advertised part; the segment pointing at it.
    fn add(&mut self, seg: &Seg, data: &[u8], writable: bool) -> Segment {
        if let Some(k) = seg.share.map(usize::from).filter(|k| *k < self.regions.len()) {
            let size = self.regions[k].contents.len() as i64;
            let start = GUARD as i64 + seg.at as i64;
            let lo = start.clamp(0, size) as u32;
            let hi = (start + seg.length as i64).clamp(0, size) as u32;
            if writable {
                self.regions[k].writable.push((lo, hi));
            } else {
                self.regions[k].readable.push((lo, hi));
            }
            return Segment::new(placeholder_handle(k) ^ seg.handle_xor, seg.length, placeholder_offset(k, start));
        }
        let r = self.regions.len();
        let len = seg.region_len.min(MAX_REGION);
        let mut contents = vec![CANARY; (GUARD * 2 + len) as usize];
        let body = &mut contents[GUARD as usize..(GUARD + len) as usize];
        if writable {
            body.fill(0);
        } else {
            let n = data.len().min(body.len());
            body[..n].copy_from_slice(&data[..n]);
        }
        let start = GUARD as i64 + seg.at as i64;
        let lo = start.clamp(0, contents.len() as i64) as u32;
        let hi = (start + seg.length as i64).clamp(0, contents.len() as i64) as u32;
        let (writable, readable) = if writable { (vec![(lo, hi)], Vec::new()) } else { (Vec::new(), vec![(lo, hi)]) };
        self.regions.push(WireRegion { contents, writable, readable });
        Segment::new(placeholder_handle(r) ^ seg.handle_xor, seg.length, placeholder_offset(r, start))
    }
}

impl Spec {
    /// The RPC call's bytes (header and arguments), if there is one.
    pub fn rpc_bytes(&self) -> Option<Vec<u8>> {
        let r = self.rpc.as_ref()?;
        let call = Call::new(self.xid ^ r.xid_xor, self.credit, r.prog, r.vers, r.proc_, r.args.clone());
        let mut b = call.rpc_bytes();
        b[8..12].copy_from_slice(&r.rpcvers.to_be_bytes());
        Some(b)
    }

    /// Encodes the spec with the codec's builders.
    pub fn encode(&self) -> Wire {
        let rpc = self.rpc_bytes();
        let mut layout = Layout { regions: Vec::new() };
        // Position-zero read segments carry the call in a Long Call, in order.
        let mut long = if self.long_call { rpc.clone().unwrap_or_default() } else { Vec::new() };
        let reads: Vec<ReadSegment> = self
            .reads
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let data = if r.position == 0 && self.long_call {
                    let n = (r.seg.region_len as usize).min(long.len());
                    long.drain(..n).collect::<Vec<u8>>()
                } else {
                    vec![0x11u8.wrapping_mul(i as u8 + 1); r.seg.region_len.min(MAX_REGION) as usize]
                };
                let s = layout.add(&r.seg, &data, false);
                ReadSegment { position: r.position, target: s }
            })
            .collect();
        let writes: Vec<Vec<Segment>> =
            self.writes.iter().map(|c| c.iter().map(|s| layout.add(s, &[], true)).collect()).collect();
        let reply: Option<Vec<Segment>> =
            self.reply.as_ref().map(|c| c.iter().map(|s| layout.add(s, &[], true)).collect());
        let write_refs: Vec<&[Segment]> = writes.iter().map(|c| c.as_slice()).collect();
        let segs = reads.len() + writes.iter().map(Vec::len).sum::<usize>() + reply.as_ref().map_or(0, Vec::len);
        let mut buf = vec![0u8; 128 + 8 * writes.len() + 24 * segs];
        let inline: &[u8] = match (&rpc, self.long_call) {
            (Some(b), false) => b,
            _ => &[],
        };
        let n = if self.vers == v2::VERSION {
            self.encode_v2(&reads, &write_refs, reply.as_deref(), &mut buf)
        } else {
            self.encode_v1(&reads, &write_refs, reply.as_deref(), &mut buf)
        };
        let mut bytes = buf[..n].to_vec();
        bytes.extend_from_slice(inline);
        for e in &self.edits {
            match *e {
                Edit::Byte { at, xor } if !bytes.is_empty() => {
                    let i = at as usize % bytes.len();
                    bytes[i] ^= xor;
                }
                Edit::Word { index, value } if bytes.len() >= 4 => {
                    let i = 4 * (index as usize % (bytes.len() / 4));
                    bytes[i..i + 4].copy_from_slice(&value.to_be_bytes());
                }
                Edit::SegmentCount { chunk, value } => {
                    if let Some(i) = self.count_offset(chunk as usize).filter(|i| i + 4 <= bytes.len()) {
                        bytes[i..i + 4].copy_from_slice(&value.to_be_bytes());
                    }
                }
                _ => {}
            }
        }
        if let Some(t) = self.truncate {
            bytes.truncate(t as usize);
        }
        Wire::new(bytes, layout.regions)
    }

    /// Where the encoded header holds the segment count of write chunk `chunk` (modulo the
    /// write chunks; the reply chunk's when there are none), for the forms with chunk lists.
    fn count_offset(&self, chunk: usize) -> Option<usize> {
        let mut p = match (self.form, self.vers == v2::VERSION) {
            (Form::Msg | Form::NoMsg, false) => 16,
            (Form::MsgP { .. }, false) => 24,
            (Form::Msg | Form::NoMsg | Form::MsgP { .. } | Form::Done, true) => {
                16 + 4 * usize::from(self.direction.is_some())
            }
            _ => return None,
        };
        p += 24 * self.reads.len() + 4;
        if self.writes.is_empty() {
            return self.reply.as_ref().map(|_| p + 4 + 4);
        }
        let target = chunk % self.writes.len();
        for (j, c) in self.writes.iter().enumerate() {
            if j == target {
                return Some(p + 4);
            }
            p += 8 + 16 * c.len();
        }
        None
    }

    fn encode_v1(
        &self,
        reads: &[ReadSegment],
        writes: &[&[Segment]],
        reply: Option<&[Segment]>,
        out: &mut [u8],
    ) -> usize {
        let (xid, c) = (self.xid, self.credit);
        let mut b = match self.form {
            Form::Msg => HeaderBuilder::msg(xid, c),
            Form::NoMsg => HeaderBuilder::nomsg(xid, c),
            Form::MsgP { align, thresh } => HeaderBuilder::msgp(xid, c, align, thresh),
            Form::Done => HeaderBuilder::done(xid, c),
            Form::Error { code } => HeaderBuilder::err_chunk(xid, c).raw_error_code(code),
            Form::Optional { opttype } => HeaderBuilder::msg(xid, c).raw_proc(opttype),
        };
        b = b.read_list(reads).write_list(writes).raw_vers(self.vers);
        if let Some(r) = reply {
            b = b.reply_chunk(r);
        }
        if let Some(p) = self.proc_override {
            b = b.raw_proc(p);
        }
        b.encode(out).unwrap_or(0)
    }

    fn encode_v2(
        &self,
        reads: &[ReadSegment],
        writes: &[&[Segment]],
        reply: Option<&[Segment]>,
        out: &mut [u8],
    ) -> usize {
        let (xid, c) = (self.xid, self.credit);
        let code;
        let mut b = match self.form {
            Form::Msg | Form::MsgP { .. } => v2::HeaderBuilder::msg(xid, c, MsgType::CALL),
            Form::NoMsg | Form::Done => v2::HeaderBuilder::nomsg(xid, c, MsgType::CALL),
            Form::Error { code: e } => {
                code = e.to_be_bytes();
                v2::HeaderBuilder::msg(xid, c, MsgType::CALL).raw_proc(2).raw_body(&code)
            }
            Form::Optional { opttype } => {
                v2::HeaderBuilder::optional(xid, c, MsgType::CALL, opttype, OptInfo::Raw(&[0, 0, 0, 1]))
            }
        };
        b = b.read_list(reads).write_list(writes);
        if let Some(r) = reply {
            b = b.reply_chunk(r);
        }
        b = match self.direction {
            Some(d) => b.raw_direction(d),
            None => b.draft00(),
        };
        if let Some(p) = self.proc_override {
            b = b.raw_proc(p);
        }
        b.encode(out).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::v1::{Body, Message};
    use rpcrdma_codec::Profile;

    fn null_spec() -> Spec {
        Spec {
            xid: 0x1234,
            vers: 1,
            credit: 32,
            proc_override: None,
            form: Form::Msg,
            direction: Some(0),
            reads: vec![],
            writes: vec![vec![Seg::exact(64)]],
            reply: None,
            rpc: Some(RpcSpec { xid_xor: 0, rpcvers: 2, prog: 100003, vers: 3, proc_: 0, args: vec![] }),
            long_call: false,
            edits: vec![],
            truncate: None,
        }
    }

    #[test]
    fn placeholders_are_found_and_bound() {
        let w = null_spec().encode();
        assert_eq!(w.regions.len(), 1);
        assert_eq!(w.regions[0].contents.len(), 64 + 2 * GUARD as usize);
        assert_eq!(w.regions[0].writable, vec![(GUARD, GUARD + 64)]);
        // Fixed fields (16), read list absent (4), write list present (4), count (4): the
        // handle at 28 and the address at 36.
        assert_eq!(w.fixups, vec![Fixup::Handle { at: 28, region: 0 }, Fixup::Offset { at: 36, region: 0, delta: 32 }]);
        let b = w.bind(&[(0xdead_beef, 0x1000)]);
        let m = Message::decode(&b, &Profile::default()).unwrap();
        let Body::Msg(c) = m.header.body else { panic!() };
        let s = c.writes.chunks().next().unwrap().segments().next().unwrap();
        assert_eq!((s.handle, s.length, s.offset), (0xdead_beef, 64, 0x1000 + 32));
    }

    #[test]
    fn segment_count_edits_hit_the_count() {
        let mut s = null_spec();
        s.reads = vec![ReadSeg { position: 40, seg: Seg::exact(8) }];
        s.writes = vec![vec![Seg::exact(4), Seg::exact(4)], vec![Seg::exact(4)]];
        s.reply = Some(vec![Seg::exact(4)]);
        // Fixed fields 16, one read entry (discriminator, position, segment) 24, read list
        // end 4, write discriminator 4: the first count at 48; then its two segments and the
        // next discriminator: the second count at 48 + 4 + 32 + 4 = 88.
        for (chunk, at) in [(0u8, 48usize), (1, 88), (2, 48)] {
            s.edits = vec![Edit::SegmentCount { chunk, value: 0xdead_beef }];
            let b = s.encode().bytes;
            assert_eq!(&b[at..at + 4], &[0xde, 0xad, 0xbe, 0xef], "chunk {chunk}");
        }
        s.writes.clear();
        s.edits = vec![Edit::SegmentCount { chunk: 0, value: 7 }];
        // No write list: the reply chunk's count, after the write list's end and the
        // reply discriminator.
        let b = s.encode().bytes;
        assert_eq!(&b[52..56], &[0, 0, 0, 7]);
    }

    #[test]
    fn shared_segments_overlap_in_one_region() {
        let mut s = null_spec();
        s.writes = vec![vec![Seg::exact(64), Seg { at: 8, share: Some(0), ..Seg::exact(16) }]];
        s.reply = Some(vec![Seg { share: Some(9), ..Seg::exact(4) }]);
        let w = s.encode();
        // The second segment shares region 0; the reply segment names no region yet: its own.
        // Offsets: fixed 16, read list end 4, write discriminator and count 8, then each
        // segment's address 8 bytes into it (28 + 8, 44 + 8); write list end, reply
        // discriminator and count 12, the reply segment at 72 (address at 80).
        assert_eq!(w.regions.len(), 2);
        assert_eq!(w.regions[0].writable, vec![(GUARD, GUARD + 64), (GUARD + 8, GUARD + 24)]);
        let offsets: Vec<_> = w.fixups.iter().filter(|f| matches!(f, Fixup::Offset { .. })).collect();
        assert_eq!(
            offsets,
            [
                &Fixup::Offset { at: 36, region: 0, delta: 32 },
                &Fixup::Offset { at: 52, region: 0, delta: 40 },
                &Fixup::Offset { at: 80, region: 1, delta: 32 }
            ]
        );
    }

    #[test]
    fn a_wrong_handle_is_left_wrong() {
        let mut s = null_spec();
        s.writes[0][0].handle_xor = 0x0100_0000;
        let w = s.encode();
        assert!(w.fixups.iter().all(|f| !matches!(f, Fixup::Handle { .. })));
    }

    #[test]
    fn long_call_puts_the_call_in_the_read_regions() {
        let mut s = null_spec();
        let rpc = s.rpc_bytes().unwrap();
        s.long_call = true;
        s.form = Form::NoMsg;
        s.writes.clear();
        s.reads = vec![
            ReadSeg { position: 0, seg: Seg::exact(8) },
            ReadSeg { position: 0, seg: Seg::exact(rpc.len() as u32 - 8) },
        ];
        let w = s.encode();
        let g = GUARD as usize;
        let got: Vec<u8> = w.regions.iter().flat_map(|r| r.contents[g..r.contents.len() - g].to_vec()).collect();
        assert_eq!(got, rpc);
        assert!(w.regions.iter().all(|r| r.writable.is_empty()));
        assert_eq!(w.regions[0].readable, vec![(GUARD, GUARD + 8)]);
    }
}
