//! A requester's slots (the lean path `bench-null` drives): one registered region of receive
//! slots and one of send slots, owned by the queue pair, a slot's index in its work-request
//! id. Per call that is a copy into a send slot, one ibv_post_send, one ibv_poll_cq and the
//! reply's receive reposted in place: no buffer moves, no table of work requests, no
//! allocation (the least a requester does, as harness/linux-peer/null-client.c does it).

#![allow(unsafe_code)]

use super::*;
use std::io;
use std::ptr;

/// The low bits of a slot's work-request id: a receive's slot, or a Send's sequence number.
const INDEX_MASK: u64 = (1 << 48) - 1;

pub(super) struct Slots {
    recv: Mr,
    send: Mr,
    /// Bytes a slot.
    recv_size: u32,
    send_size: u32,
    recv_slots: u32,
    send_slots: u32,
    /// Work-request ids are `tag | index`.
    recv_tag: u64,
    send_tag: u64,
    /// Sends posted, and those known complete: a send queue completes in order
    /// (ibv_post_send(3)), so a signaled Send's completion shows it and every Send before it
    /// done, and their slots free.
    posted: u64,
    done: u64,
    signal_every: u64,
}

/// What [`CmId::poll_slots`] took off the CQ.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SlotsPolled {
    /// Messages handed over (their receives reposted).
    pub messages: usize,
    /// The first completion that failed: its work-request id and ibv_wc_status. Nothing was
    /// reposted then (the queue pair is in the error state).
    pub failed: Option<(u64, u32)>,
    /// Every send slot was in use before this poll and one is free now.
    pub unblocked: bool,
}

impl CmId {
    /// Registers `recv_slots` receive slots of `recv_size` bytes and `send_slots` send slots of
    /// `send_size` bytes, and posts every receive slot. Work-request ids are `recv_tag | slot`
    /// and `send_tag | sequence` (tags with the low 48 bits clear); one Send in
    /// `signal_every` asks for a completion.
    pub fn open_slots(
        &mut self,
        (recv_slots, recv_size): (u32, u32),
        (send_slots, send_size): (u32, u32),
        (recv_tag, send_tag): (u64, u64),
        signal_every: u64,
    ) -> io::Result<()> {
        let st = self.qp.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "no queue pair"))?;
        if st.slots.is_some() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "slots already open"));
        }
        if recv_slots == 0 || send_slots == 0 || recv_size == 0 || send_size == 0 || signal_every == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no slots"));
        }
        if (recv_tag | send_tag) & INDEX_MASK != 0 || recv_tag == send_tag {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "slot tags overlap"));
        }
        let region = |slots: u32, size: u32| {
            (slots as usize)
                .checked_mul(size as usize)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "slots too large"))
        };
        let recv = Mr::new(&st._pd, region(recv_slots, recv_size)?, IBV_ACCESS_LOCAL_WRITE)?;
        let send = Mr::new(&st._pd, region(send_slots, send_size)?, IBV_ACCESS_LOCAL_WRITE)?;
        st.slots = Some(Slots {
            recv,
            send,
            recv_size,
            send_size,
            recv_slots,
            send_slots,
            recv_tag,
            send_tag,
            posted: 0,
            done: 0,
            signal_every,
        });
        let all: Vec<u32> = (0..recv_slots).collect();
        for chunk in all.chunks(POLL_BATCH) {
            self.post_slot_receives(chunk)?;
        }
        Ok(())
    }

    /// Copies `msg` into the next send slot and posts it; false when every send slot is
    /// still in use (take completions first). The Send that takes the last free slot asks
    /// for a completion, so the slots always come back.
    pub fn send_in_slot(&mut self, msg: &[u8]) -> io::Result<bool> {
        let (qp, ops) = self.qp_ptr()?;
        let post = ops.post_send.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let s = self.slots_mut()?;
        if msg.len() > s.send_size as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "message larger than a send slot"));
        }
        let in_use = s.posted - s.done;
        if in_use >= u64::from(s.send_slots) {
            return Ok(false);
        }
        let slot = s.posted % u64::from(s.send_slots);
        let at = slot as usize * s.send_size as usize;
        s.send.write(at, msg);
        let signaled = (s.posted + 1) % s.signal_every == 0 || in_use + 1 == u64::from(s.send_slots);
        let mut sge = IbvSge { addr: s.send.addr() + at as u64, length: msg.len() as u32, lkey: s.send.lkey() };
        // SAFETY: IbvSendWr is plain data (integers and raw pointers); all-zero is valid.
        let mut wr: IbvSendWr = unsafe { std::mem::MaybeUninit::zeroed().assume_init() };
        wr.wr_id = s.send_tag | (s.posted & INDEX_MASK);
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = if signaled { IBV_SEND_SIGNALED } else { 0 };
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        let mut bad: *mut IbvSendWr = ptr::null_mut();
        // SAFETY: `qp` is live; `wr` and `sge` are valid for the call (the provider copies
        // them). The slot lies inside the send region, which the queue pair owns (QpState)
        // and frees only after the QP is destroyed; it is not written again before this Send
        // is known complete (`posted - done` bounds the slots in use).
        let rc = unsafe { post(qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        s.posted += 1;
        Ok(true)
    }

    /// Takes up to [`POLL_BATCH`] completions off the CQ (never blocks): each message received
    /// is handed to `each` in place, then its receive slot reposted (all in one chain); a
    /// signaled Send's completion frees its slot and those before it. Every completion here
    /// must be the slots' (the connection is used through its slots alone once they are open).
    pub fn poll_slots(&mut self, each: &mut dyn FnMut(&[u8])) -> io::Result<SlotsPolled> {
        self.slots_mut()?;
        let n = self.poll_wcs()?;
        let st = self.qp.as_mut().expect("checked in poll_wcs");
        let s = st.slots.as_mut().expect("checked above");
        let mut taken = [0u32; POLL_BATCH];
        let mut out = SlotsPolled::default();
        let mut foreign = None;
        let full = s.posted - s.done >= u64::from(s.send_slots);
        for w in st.wcs[..n].iter_mut() {
            let wc = std::mem::replace(w, ZERO_WC);
            let (tag, index) = (wc.wr_id & !INDEX_MASK, wc.wr_id & INDEX_MASK);
            if wc.status != wc_status::SUCCESS {
                out.failed.get_or_insert((wc.wr_id, wc.status));
            } else if tag == s.recv_tag && index < u64::from(s.recv_slots) && out.failed.is_none() {
                let at = index as usize * s.recv_size as usize;
                let len = (wc.byte_len as usize).min(s.recv_size as usize);
                // SAFETY: `at..at + len` lies inside the receive region (index < recv_slots,
                // len <= recv_size), which lives as long as `self`. The slot's receive has
                // completed and is reposted only after `each` returns, so the device does not
                // write these bytes while they are lent; other slots are not in the slice.
                let msg = unsafe { std::slice::from_raw_parts(s.recv.buf.add(at), len) };
                each(msg);
                taken[out.messages] = index as u32;
                out.messages += 1;
            } else if tag == s.send_tag {
                // This Send and every Send before it are done (a send queue completes in
                // order); its index is its sequence number (2^48 Sends do not wrap).
                s.done = s.done.max(index + 1);
            } else if tag != s.recv_tag {
                foreign.get_or_insert(wc.wr_id);
            }
        }
        out.unblocked = full && s.posted - s.done < u64::from(s.send_slots);
        if let Some(id) = foreign {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a completion of work request {id:#x}, not one of the slots'"),
            ));
        }
        if out.failed.is_none() && out.messages > 0 {
            self.post_slot_receives(&taken[..out.messages])?;
        }
        Ok(out)
    }

    fn slots_mut(&mut self) -> io::Result<&mut Slots> {
        self.qp
            .as_mut()
            .and_then(|q| q.slots.as_mut())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no slots open"))
    }

    /// Posts the receive slots `slots` (at most [`POLL_BATCH`]) as one chain.
    fn post_slot_receives(&mut self, slots: &[u32]) -> io::Result<()> {
        let (qp, ops) = self.qp_ptr()?;
        let post = ops.post_recv.ok_or_else(|| io::Error::from(io::ErrorKind::Unsupported))?;
        let st = self.qp.as_mut().expect("checked in qp_ptr");
        let s = st.slots.as_ref().ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no slots open"))?;
        st.chain.clear();
        st.sges.clear();
        for &slot in slots {
            let at = u64::from(slot) * u64::from(s.recv_size);
            st.sges.push(IbvSge { addr: s.recv.addr() + at, length: s.recv_size, lkey: s.recv.lkey() });
            st.chain.push(IbvRecvWr {
                wr_id: s.recv_tag | u64::from(slot),
                next: ptr::null_mut(),
                sg_list: ptr::null_mut(),
                num_sge: 1,
            });
        }
        // Linked once both vectors are whole (neither reallocates after this).
        let n = st.chain.len();
        let (base, sges) = (st.chain.as_mut_ptr(), st.sges.as_mut_ptr());
        for i in 0..n {
            // SAFETY: `i` and `i + 1 < n` index the `n` entries of `chain` and `sges`; the
            // pointers are used by the provider during the call below only.
            unsafe {
                (*base.add(i)).sg_list = sges.add(i);
                if i + 1 < n {
                    (*base.add(i)).next = base.add(i + 1);
                }
            }
        }
        let mut bad: *mut IbvRecvWr = ptr::null_mut();
        // SAFETY: `qp` is live; the chain and its SGEs are valid for the call (the provider
        // copies them); each describes a slot of the receive region, which the queue pair owns
        // and frees only after the QP is destroyed.
        let rc = unsafe { post(qp, base, &mut bad) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}
