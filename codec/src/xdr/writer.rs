//! The XDR writer: big-endian words and padded opaques into a caller's buffer.

use super::reader::pad4;
use crate::error::EncodeError;

/// Writes XDR into a caller's buffer and tracks the length written.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    #[inline]
    fn room(&self, n: usize) -> Result<(), EncodeError> {
        if self.buf.len() - self.pos < n {
            return Err(EncodeError { needed: self.pos + n, available: self.buf.len() });
        }
        Ok(())
    }

    #[inline]
    pub fn bytes(&mut self, b: &[u8]) -> Result<(), EncodeError> {
        self.room(b.len())?;
        let out = &mut self.buf[self.pos..self.pos + b.len()];
        // One-word data (most xcharval values) is copied inline: a call to memcpy costs more
        // than the copy.
        match (<&mut [u8; 4]>::try_from(&mut *out), <&[u8; 4]>::try_from(b)) {
            (Ok(o), Ok(i)) => *o = *i,
            _ => out.copy_from_slice(b),
        }
        self.pos += b.len();
        Ok(())
    }

    /// A fixed-size piece: one length comparison, a fixed-size copy.
    #[inline(always)]
    pub(crate) fn array<const N: usize>(&mut self, b: [u8; N]) -> Result<(), EncodeError> {
        match self.buf.get_mut(self.pos..).and_then(|r| r.first_chunk_mut::<N>()) {
            Some(out) => {
                *out = b;
                self.pos += N;
                Ok(())
            }
            None => Err(EncodeError { needed: self.pos + N, available: self.buf.len() }),
        }
    }

    #[inline]
    pub fn u32(&mut self, v: u32) -> Result<(), EncodeError> {
        self.array(v.to_be_bytes())
    }

    #[inline]
    pub fn u64(&mut self, v: u64) -> Result<(), EncodeError> {
        self.array(v.to_be_bytes())
    }

    #[inline]
    pub fn bool(&mut self, v: bool) -> Result<(), EncodeError> {
        self.u32(v as u32)
    }

    /// `n` zero bytes.
    #[inline(always)]
    pub fn zeros(&mut self, n: usize) -> Result<(), EncodeError> {
        if n == 0 {
            return Ok(());
        }
        self.room(n)?;
        if n <= 3 {
            // An XDR pad: at most three bytes, without a call to memset.
            for o in &mut self.buf[self.pos..self.pos + n] {
                *o = 0;
            }
        } else {
            self.buf[self.pos..self.pos + n].fill(0);
        }
        self.pos += n;
        Ok(())
    }

    /// Variable-length opaque: length, data, zero pad (RFC 4506 4.10).
    pub fn opaque(&mut self, data: &[u8]) -> Result<(), EncodeError> {
        let len =
            u32::try_from(data.len()).map_err(|_| EncodeError { needed: usize::MAX, available: self.buf.len() })?;
        // One word of data (most xcharval values): length and word as one fixed-size write.
        if let Ok(d) = <&[u8; 4]>::try_from(data) {
            let [l0, l1, l2, l3] = len.to_be_bytes();
            return self.array([l0, l1, l2, l3, d[0], d[1], d[2], d[3]]);
        }
        self.u32(len)?;
        self.bytes(data)?;
        self.zeros(pad4(data.len()))
    }

    /// Fixed-length opaque: data and zero pad.
    pub fn opaque_fixed(&mut self, data: &[u8]) -> Result<(), EncodeError> {
        self.bytes(data)?;
        self.zeros(pad4(data.len()))
    }

    /// Reserves a 32-bit word (an opaque length written after its body); returns its position.
    /// Until patched it holds 0xffffffff, a length no complete message can have.
    pub fn reserve_u32(&mut self) -> Result<usize, EncodeError> {
        let at = self.pos;
        self.u32(u32::MAX)?;
        Ok(at)
    }

    /// Writes `v` into a word reserved with [`Writer::reserve_u32`].
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// Ends an opaque begun with [`Writer::reserve_u32`] at `at`: patches its length and
    /// writes the pad.
    pub fn finish_opaque(&mut self, at: usize) -> Result<(), EncodeError> {
        let len = self.pos - at - 4;
        self.patch_u32(at, len as u32);
        self.zeros(pad4(len))
    }
}
