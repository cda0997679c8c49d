//! Hostile-input bounds.
//!
//! 1. A counting global allocator shows that decoding, the semantic checks and encoding
//!    allocate nothing, over every golden vector (all families, each under its own profile).
//!    The counter counts only inside the measured region: the vector is parsed and every
//!    buffer is allocated before the region starts, and the counter is per thread, so other
//!    tests running at the same time are not counted.
//! 2. Inputs of about 1 MiB whose counts claim up to 2^32 - 1 entries fail fast: without
//!    allocating, at the count word itself (the error names the count's offset, so nothing
//!    after it was looped over). For the counted arrays, whose element decoder can be
//!    wrapped, the loop iterations are counted through that wrapper and shown to be bounded
//!    by the input length (0 when the count cannot fit; at most len / element size otherwise),
//!    and doubling the input at most doubles them. For the linked lists (read and write
//!    lists), which have no count, the work is the bytes consumed: the decoder reads forward
//!    only, so the error offset bounds it, and it is checked to be exactly where the input ends.
//!
//! No wall-clock measurement anywhere.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use rpcrdma_codec::ccp::{self, CcpCall, CcpReply};
use rpcrdma_codec::check::{self, Role, Violations};
use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::msgp::Padding;
use rpcrdma_codec::private_data::{self, PrivateData};
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v2;
use rpcrdma_codec::xdr::{Array, Item};
use rpcrdma_codec::xdr::{Reader, Writer};
use rpcrdma_codec::{v1, DecodeError, ErrorKind, Profile};

thread_local! {
    // Const-initialised, no destructor: touching them never allocates.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Forwards to the system allocator, counting allocations made by a thread while it measures.
struct Counting;

fn note() {
    // try_with: the thread-locals may be gone while a thread exits.
    let _ = MEASURING.try_with(|m| {
        if m.get() {
            let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        }
    });
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// GlobalAlloc contract; the only addition is a thread-local counter that does not allocate.
// This is the only `unsafe` in the project's tests, and a global allocator cannot be written
// without it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns how many allocations this thread made inside it.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    ALLOCATIONS.with(|a| a.set(0));
    MEASURING.with(|m| m.set(true));
    let r = black_box(f());
    MEASURING.with(|m| m.set(false));
    (r, ALLOCATIONS.with(|a| a.get()))
}

#[test]
fn the_counter_counts() {
    // Without this the other tests could pass with a counter that never counts.
    let (v, n) = allocations(|| vec![1u8; 100]);
    assert!(n >= 1, "a Vec allocation was not counted");
    drop(v);
    let (_, n) = allocations(|| black_box(3) + 4);
    assert_eq!(n, 0);
}

fn profile_of(names: &[String]) -> Profile {
    let mut p = Profile::default();
    for n in names {
        assert!(p.apply(n), "unknown profile {n}");
    }
    p
}

/// Everything the codec does with one vector's bytes: decode, check, encode into `out`.
/// Returns a number derived from the results so the work cannot be optimised away.
fn exercise(kind: &str, bytes: &[u8], p: &Profile, out: &mut [u8]) -> usize {
    let mut acc = 0usize;
    let err = |e: DecodeError| e.offset + e.field.len();
    match kind {
        "header" if bytes.len() >= 8 && bytes[4..8] == [0, 0, 0, 2] => match v2::Message::decode(bytes, p) {
            Ok(m) => {
                acc += v2::check(&m, Role::Call).len() + v2::check(&m, Role::Reply).len();
                acc += m.header.encode_into(out).unwrap_or(0);
            }
            Err(e) => acc += err(e),
        },
        "header" | "msgp-payload" => {
            match v1::Message::decode(bytes, p) {
                Ok(m) => {
                    acc += Violations::of(&m, Role::Call).len() + Violations::of(&m, Role::Reply).len();
                    check::check(&m, Role::Call, |v| acc += v.rule.id.len());
                    acc += m.header.encode_into(out).unwrap_or(0);
                    if let Some(c) = m.header.body.chunks() {
                        acc += c.reads.chunks().count() + c.writes.chunks().map(|w| w.length() as usize).sum::<usize>();
                    }
                    if let Some(pad) = Padding::of_message(&m, p) {
                        if let Ok(rpc) = RpcMessage::decode_at(m.payload, m.payload_offset) {
                            let mut r = Reader::with_base(rpc.body, m.payload_offset + rpc.body_offset);
                            match pad.read_opaque(&mut r, "msgp.item") {
                                Ok(item) => acc += item.data.len(),
                                Err(e) => acc += err(e),
                            }
                        }
                    }
                }
                Err(e) => acc += err(e),
            }
            if let Ok(Some(ev)) = v1::ErrVers::decode(bytes) {
                acc += ev.low as usize;
            }
        }
        "rpc" => match RpcMessage::decode(bytes) {
            Ok(m) => {
                if let RpcHeader::Call(c) = &m.header {
                    if let Some(Ok(a)) = c.cred.auth_sys() {
                        acc += a.gids().count();
                    }
                }
                let mut w = Writer::new(out);
                m.header.encode(&mut w).unwrap();
                acc += w.len();
            }
            Err(e) => acc += err(e),
        },
        "private-data" => {
            match PrivateData::decode(bytes) {
                Ok(pd) => acc += pd.encode_into(out).unwrap(),
                Err(e) => acc += err(e),
            }
            acc += private_data::effective(bytes, p).params.send_size() as usize;
            if let Err(e) = private_data::find(bytes, p) {
                acc += err(e)
            }
        }
        "ccp-call" => match ccp::decode_call_message(bytes, p) {
            Ok((m, c)) => {
                acc += ccp::encode_call_message(out, m.header.credit, &c).unwrap();
                acc += CcpCall::decode(m.payload).map(|c| c.args.maxrdmaread as usize).unwrap_or(0);
            }
            Err(e) => acc += err(e),
        },
        "ccp-reply" => match ccp::decode_reply_message(bytes, p) {
            Ok((m, r)) => {
                acc += ccp::encode_reply_message(out, m.header.credit, &r).unwrap();
                acc += CcpReply::decode(m.payload).map(|r| r.encoded_len()).unwrap_or(0);
            }
            Err(e) => acc += err(e),
        },
        other => panic!("unknown vector kind {other}"),
    }
    acc
}

#[test]
fn decode_check_and_encode_allocate_nothing_on_any_vector() {
    let mut vectors = 0;
    for name in rpcrdma_vectors::embedded_names() {
        // Outside the measured region: parse the vector, choose the profile, size the buffer.
        let v = rpcrdma_vectors::embedded(name).unwrap();
        let p = profile_of(&v.profile);
        // Every encode below re-encodes what was decoded from these bytes: it fits in them.
        let mut out = vec![0u8; v.bytes.len()];
        let (_, n) = allocations(|| exercise(&v.kind, &v.bytes, &p, &mut out));
        assert_eq!(n, 0, "{name}: {n} allocations");
        vectors += 1;
    }
    assert!(vectors >= 250, "only {vectors} vectors");
}

/// The builders' encodings (the fast paths and, in a buffer too short, the `Writer` path and
/// its error) and the violations of a message with every kind of list, reported past the
/// capacity, allocate nothing.
#[test]
fn builders_and_overflowing_violations_allocate_nothing() {
    let reads = [
        rpcrdma_codec::chunk::ReadSegment::new(6, 1, 4096, 0x1000),
        rpcrdma_codec::chunk::ReadSegment::new(10, 2, 8, 0x2000),
    ];
    let seg = [Segment::new(3, 4096, 0x3000), Segment::new(4, 4096, 0x4000), Segment::new(5, 8, 0x5000)];
    let writes: [&[Segment]; 2] = [&seg[..2], &seg];
    let builders = [
        v1::HeaderBuilder::msg(1, 32).read_list(&reads[..1]).write_list(&writes[..1]),
        v1::HeaderBuilder::nomsg(1, 32).read_list(&reads).write_list(&writes).reply_chunk(&seg),
        v1::HeaderBuilder::err_vers(1, 1, 1, 1, 1),
        v1::HeaderBuilder::msg(1, 32).raw_body(&[0, 0, 0, 7]),
    ];
    let mut out = vec![0u8; 512];
    let p = Profile::default();
    for b in builders {
        let len = b.encoded_len();
        let (r, n) = allocations(|| (b.encode(&mut out), b.encode(&mut out[..len - 1])));
        assert_eq!(n, 0, "{b:?}: {n} allocations");
        assert_eq!(r.0, Ok(len));
        assert!(r.1.is_err());
    }
    // Five unaligned positions in an RDMA_MSG: more violations than the capacity.
    let mut w = vec![7, 1, 0, 0];
    for i in 0..5 {
        w.extend_from_slice(&[1, 4 * i + 1, 1, 8, 0, 0]);
    }
    w.extend_from_slice(&[0, 0, 0, 8, 0]);
    let b = words(&w);
    let m = v1::Message::decode(&b, &p).unwrap();
    let (v, n) = allocations(|| Violations::of(&m, Role::Reply));
    assert_eq!(n, 0, "{n} allocations");
    assert_eq!(v.len(), Violations::CAPACITY);
    assert!(v.overflow() > 0, "{v:?}");
}

// ------------------------------------------------------------------------------------------
// Hostile inputs

const MIB: usize = 1 << 20;

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// `prefix` followed by filler up to `len` bytes.
fn padded(prefix: &[u32], fill: u8, len: usize) -> Vec<u8> {
    let mut b = words(prefix);
    b.resize(len, fill);
    b
}

/// Decodes without allocating and fails at `offset` with `count-exceeds-input` or `too-long`.
fn fails_at_count<T: std::fmt::Debug>(what: &str, r: Result<T, DecodeError>, n: usize, offset: usize) {
    assert_eq!(n, 0, "{what}: allocated");
    let e = r.expect_err(what);
    assert_eq!(e.offset, offset, "{what}: {e:?}");
    assert!(matches!(e.kind, ErrorKind::CountExceedsInput { .. } | ErrorKind::TooLong { .. }), "{what}: {e:?}");
}

#[test]
fn claims_of_2_pow_32_entries_fail_at_the_count() {
    let p = Profile::default();
    // Every count here times the smallest element (a 4-byte word) exceeds 1 MiB. One more
    // count that only segment arrays (16 bytes each) cannot hold is tried below.
    for count in [u32::MAX, 0x1000_0000, 0x1000_0001, 0x8000_0000, (MIB / 4) as u32] {
        // v1: a write chunk's count (offset 24), the reply chunk's count (offset 28), in RDMA_MSG
        // and RDMA_MSGP (8 more bytes before the lists), followed by ~1 MiB of zeros (which
        // would read as empty segments if anything looped).
        let b = padded(&[1, 1, 1, 0, 0, 1, count], 0, MIB);
        let (r, n) = allocations(|| v1::Message::decode(&b, &p));
        fails_at_count("v1 write count", r, n, 24);
        let b = padded(&[1, 1, 1, 0, 0, 0, 1, count], 0, MIB);
        let (r, n) = allocations(|| v1::Message::decode(&b, &p));
        fails_at_count("v1 reply count", r, n, 28);
        let b = padded(&[1, 1, 1, 2, 64, 1024, 0, 0, 1, count], 0, MIB);
        let (r, n) = allocations(|| v1::Message::decode(&b, &p));
        fails_at_count("v1 msgp reply count", r, n, 36);
        // v2 -01: direction at 16, lists from 20.
        let b = padded(&[1, 2, 1, 0, 0, 0, 1, count], 0, MIB);
        let (r, n) = allocations(|| v2::Message::decode(&b, &p));
        fails_at_count("v2 write count", r, n, 28);
        // v2 ROPT_REQXCH: optinfo (at 28) is the rest of the message; its xcharspec count
        // claims `count` values.
        let optinfo_len = (MIB - 28) as u32;
        let b = padded(&[1, 2, 1, 5, 0, 2, optinfo_len, count], 0, MIB);
        let (r, n) = allocations(|| v2::Message::decode(&b, &p));
        fails_at_count("v2 xcharspec count", r, n, 28);
        // ROPT_RESPXCH: the first xcharsubset count.
        let b = padded(&[1, 2, 1, 5, 0, 3, optinfo_len, count], 0, MIB);
        let (r, n) = allocations(|| v2::Message::decode(&b, &p));
        fails_at_count("v2 xcharsubset count", r, n, 28);
        // rtrext ROPT_XMTREQ (opttype 5 in the default numbering): the optxrq_dp count.
        let b = padded(&[1, 2, 1, 5, 0, 5, optinfo_len, count], 0, MIB);
        let (r, n) = allocations(|| v2::Message::decode(&b, &p));
        fails_at_count("v2 rtrext dp count", r, n, 28);
        // RPC: a credential body length (max 400), and AUTH_SYS gids (max 16).
        let b = padded(&[1, 0, 2, 100003, 3, 0, 1, count], 0, MIB);
        let (r, n) = allocations(|| RpcMessage::decode(&b));
        fails_at_count("rpc cred length", r, n, 28);
        // stamp, empty machinename, uid, gid, then the gids count at 16.
        let b = padded(&[7, 0, 0, 0, count], 0, MIB);
        let (r, n) = allocations(|| rpcrdma_codec::rpc::AuthSys::decode(&b));
        fails_at_count("auth_sys gids", r, n, 16);
    }
    // Just over what 1 MiB of 16-byte segments could hold.
    let count = (MIB / 16) as u32 + 1;
    let b = padded(&[1, 1, 1, 0, 0, 1, count], 0, MIB);
    let (r, n) = allocations(|| v1::Message::decode(&b, &p));
    fails_at_count("v1 write count, just over", r, n, 24);
    let b = padded(&[1, 2, 1, 0, 0, 0, 0, 1, count], 0, MIB);
    let (r, n) = allocations(|| v2::Message::decode(&b, &p));
    fails_at_count("v2 reply count, just over", r, n, 32);
    // A v2 optinfo length of 2^32 - 1 in a 1 MiB message: truncated at the length word.
    let b = padded(&[1, 2, 1, 5, 0, 77, u32::MAX], 0, MIB);
    let (r, n) = allocations(|| v2::Message::decode(&b, &p));
    assert_eq!(n, 0);
    let e = r.unwrap_err();
    assert_eq!((e.field, e.offset), ("rdma_optinfo", 28));
    // 1 MiB of private data without the identifier: absent, defaults, nothing allocated.
    let b = vec![0xf6; MIB];
    let (eff, n) = allocations(|| private_data::effective(&b, &p));
    assert_eq!(n, 0);
    assert_eq!(eff.status, private_data::Status::Absent);
}

/// The element decoder of a counted array, wrapped to count its calls.
fn counted_array<'a, T: Item<'a> + std::fmt::Debug>(buf: &'a [u8]) -> (Result<Array<'a, T>, DecodeError>, usize) {
    let calls = Cell::new(0usize);
    let mut r = Reader::new(buf);
    let res = Array::<T>::decode_with(&mut r, "hostile", |r| {
        calls.set(calls.get() + 1);
        T::decode(r)
    });
    (res, calls.get())
}

#[test]
fn counted_array_loops_are_bounded_by_the_input() {
    for len in [MIB / 2, MIB] {
        // A count the input cannot hold: not one iteration.
        for count in [u32::MAX, 0x1000_0000, (len / 16) as u32] {
            let b = padded(&[count], 0, len);
            let ((r, calls), n) = allocations(|| counted_array::<Segment>(&b));
            assert_eq!(n, 0);
            assert_eq!(calls, 0, "count {count:#x} in {len} bytes looped");
            assert!(matches!(r.unwrap_err().kind, ErrorKind::CountExceedsInput { .. }));
        }
        // The largest count that fits: exactly that many iterations, each consuming 16 bytes.
        let fit = ((len - 4) / 16) as u32;
        let b = padded(&[fit], 0xab, len);
        let ((r, calls), n) = allocations(|| counted_array::<Segment>(&b));
        assert_eq!(n, 0);
        assert_eq!(calls, fit as usize);
        assert!(calls <= len / 16);
        assert_eq!(r.unwrap().len(), fit as usize);
        // u32 elements (the smallest): at most len / 4 iterations.
        let fit = ((len - 4) / 4) as u32;
        let b = padded(&[fit], 0, len);
        let ((r, calls), _) = allocations(|| counted_array::<u32>(&b));
        assert!(r.is_ok());
        assert!(calls <= len / 4);
    }
    // Doubling the input at most doubles the work.
    let work = |len: usize| {
        let b = padded(&[((len - 4) / 16) as u32], 0, len);
        counted_array::<Segment>(&b).1
    };
    let (half, full) = (work(MIB / 2), work(MIB));
    assert!(full <= 2 * half + 1, "{half} -> {full}");
}

#[test]
fn unterminated_lists_are_read_once_to_the_end() {
    let p = Profile::default();
    // Read list entries "1 PHLOO" (24 bytes) repeated to 1 MiB with no terminator: the decoder
    // must walk them once and stop at the end. Work is bytes consumed (it only reads forward):
    // the truncation is reported where the input ends, never further.
    let reached = |len: usize| {
        let mut ws = vec![1u32, 1, 1, 0];
        while ws.len() * 4 + 24 <= len {
            ws.extend([1, 0, 7, 4096, 0, 0x1000]);
        }
        let b = words(&ws);
        let (r, n) = allocations(|| v1::Message::decode(&b, &p));
        assert_eq!(n, 0);
        let e = r.unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Truncated { .. }), "{e:?}");
        assert_eq!(e.offset, b.len(), "{e:?}");
        e.offset
    };
    let (half, full) = (reached(MIB / 2), reached(MIB));
    assert!(full <= MIB && half <= MIB / 2);
    // Doubling the list (16 fixed bytes, then entries) at most doubles the bytes walked.
    assert!(full - 16 <= 2 * (half - 16) + 2 * 24, "{half} -> {full}");
    // Write list entries "1 0" (8 bytes, empty chunks), the densest: the same.
    let mut ws = vec![1u32, 1, 1, 0, 0];
    while ws.len() * 4 + 8 <= MIB {
        ws.extend([1, 0]);
    }
    let b = words(&ws);
    let (r, n) = allocations(|| v1::Message::decode(&b, &p));
    assert_eq!(n, 0);
    assert_eq!(r.unwrap_err().offset, b.len());
}
