//! A mutable view of a transport header (RFC 8166 4.2), smoltcp-style: every edit is named
//! for its field and written over the caller's bytes, for peers that change a header on
//! purpose (a scenario's altered reply, a fuzzer's mutation). No allocation.

use super::types::{field, FixedFields, Proc};
use crate::error::{DecodeError, ErrorKind, Field};

/// The fixed fields in wire order (RFC 8166 4.2): each one's name and offset.
const FIXED: [(Field, usize); 4] =
    [("rdma_xid", field::XID), ("rdma_vers", field::VERS), ("rdma_credit", field::CREDIT), ("rdma_proc", field::PROC)];

/// The fixed fields of a header in `&mut [u8]` (rdma_xid, rdma_vers, rdma_credit, rdma_proc),
/// and the XDR words of its `rdma_body` after them.
///
/// ```
/// use rpcrdma_codec::v1::{HeaderBuilder, HeaderMut, Proc};
/// use rpcrdma_codec::xdr::Encode;
/// let mut b = HeaderBuilder::msg(7, 32).encode_to_vec();
/// let mut h = HeaderMut::new(&mut b).unwrap();
/// h.set_credit(1);
/// h.set_proc(Proc::RDMA_MSGP);
/// assert_eq!((h.fixed().credit, h.fixed().proc_), (1, 2));
/// ```
#[derive(Debug)]
pub struct HeaderMut<'a> {
    buf: &'a mut [u8],
}

impl<'a> HeaderMut<'a> {
    /// A view of `buf`, or the error naming the first fixed field `buf` cuts short.
    pub fn new(buf: &'a mut [u8]) -> Result<Self, DecodeError> {
        let len = buf.len();
        if let Some(&(name, at)) = FIXED.iter().find(|(_, at)| len < at + 4) {
            let available = len.saturating_sub(at);
            return Err(DecodeError::new(name, at, ErrorKind::Truncated { needed: 4, available }));
        }
        Ok(HeaderMut { buf })
    }

    /// The fixed fields as they stand.
    pub fn fixed(&self) -> FixedFields {
        let [xid, vers, credit, proc_] = FIXED.map(|(_, at)| self.word(at));
        FixedFields { xid, vers, credit, proc_ }
    }

    /// rdma_xid (RFC 8166 4.2.1).
    pub fn set_xid(&mut self, xid: u32) {
        self.set_word(field::XID, xid);
    }

    /// rdma_vers (RFC 8166 4.2.2): any value, 1 or not.
    pub fn set_vers(&mut self, vers: u32) {
        self.set_word(field::VERS, vers);
    }

    /// rdma_credit (RFC 8166 4.2.3).
    pub fn set_credit(&mut self, credit: u32) {
        self.set_word(field::CREDIT, credit);
    }

    /// rdma_proc (RFC 8166 4.2.4): any value, defined or not; the body stays as it is.
    pub fn set_proc(&mut self, proc_: Proc) {
        self.set_word(field::PROC, proc_.0);
    }

    /// The `index`-th XDR word of `rdma_body` (the first is an RDMA_MSG's read list
    /// discriminator, or an RDMA_ERROR's rdma_err), or the error when the header ends before
    /// it.
    pub fn set_body_word(&mut self, index: usize, value: u32) -> Result<(), DecodeError> {
        let at = field::BODY + 4 * index;
        if self.buf.len() < at + 4 {
            let available = self.buf.len().saturating_sub(at);
            return Err(DecodeError::new("rdma_body", at, ErrorKind::Truncated { needed: 4, available }));
        }
        self.set_word(at, value);
        Ok(())
    }

    fn word(&self, at: usize) -> u32 {
        let b = &self.buf[at..at + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    fn set_word(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8166 4.2: an RDMA_MSG with xid 0x01020304, version 1, 32 credits and three empty
    /// chunk lists, written by hand.
    const MSG: [u8; 28] = [
        0x01, 0x02, 0x03, 0x04, // rdma_xid
        0, 0, 0, 1, // rdma_vers
        0, 0, 0, 32, // rdma_credit
        0, 0, 0, 0, // rdma_proc: RDMA_MSG
        0, 0, 0, 0, // rdma_reads: none
        0, 0, 0, 0, // rdma_writes: none
        0, 0, 0, 0, // rdma_reply: none
    ];

    #[test]
    fn each_setter_writes_its_own_field_and_nothing_else() {
        let mut b = MSG;
        let mut h = HeaderMut::new(&mut b).unwrap();
        assert_eq!(h.fixed(), FixedFields { xid: 0x0102_0304, vers: 1, credit: 32, proc_: 0 });
        h.set_xid(0xa0b0_c0d0);
        h.set_vers(7);
        h.set_credit(0x0001_0002);
        h.set_proc(Proc::RDMA_DONE);
        h.set_body_word(2, 0xffff_ffff).unwrap();
        let want: [u8; 28] = [
            0xa0, 0xb0, 0xc0, 0xd0, 0, 0, 0, 7, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(b, want);
    }

    #[test]
    fn an_undefined_proc_is_written_as_is() {
        let mut b = MSG;
        HeaderMut::new(&mut b).unwrap().set_proc(Proc(5));
        assert_eq!(&b[12..16], &[0, 0, 0, 5]);
        assert_eq!(&b[..12], &MSG[..12]);
        assert_eq!(&b[16..], &MSG[16..]);
    }

    #[test]
    fn a_short_buffer_names_the_field_it_cuts() {
        let mut b = [0u8; 10];
        let e = HeaderMut::new(&mut b).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_credit", 8, ErrorKind::Truncated { needed: 4, available: 2 }));
        let mut b = [0u8; 15];
        let e = HeaderMut::new(&mut b).unwrap_err();
        assert_eq!((e.field, e.offset), ("rdma_proc", 12));
        let e = HeaderMut::new(&mut []).unwrap_err();
        assert_eq!((e.field, e.offset), ("rdma_xid", 0));
        let mut b = [0u8; 16];
        assert!(HeaderMut::new(&mut b).is_ok(), "the four fixed fields are enough");
    }

    #[test]
    fn a_body_word_past_the_end_is_an_error_and_writes_nothing() {
        let mut b = MSG;
        let mut h = HeaderMut::new(&mut b).unwrap();
        let e = h.set_body_word(3, 9).unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_body", 28, ErrorKind::Truncated { needed: 4, available: 0 }));
        assert_eq!(b, MSG);
    }
}
