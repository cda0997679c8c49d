//! XDR primitives (RFC 4506): a bounded reader over borrowed bytes and a writer into a
//! caller's buffer. Every other module decodes and encodes through these two.

use crate::error::{DecodeError, EncodeError, ErrorKind, Field};

/// Rounds `n` up to a multiple of four (RFC 4506 4.10 residual bytes).
#[inline]
pub const fn round_up4(n: usize) -> usize {
    (n + 3) & !3
}

/// The XDR pad after `n` bytes of opaque data.
#[inline]
pub const fn pad4(n: usize) -> usize {
    round_up4(n) - n
}

/// A cursor over borrowed input. Offsets in errors are absolute: counted from the start of
/// the whole message, even for a sub-reader over a nested opaque.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0, base: 0 }
    }

    /// A reader whose first byte sits at `base` in the whole message.
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Position within this reader's own buffer.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Everything not yet read.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// The bytes from `start` (a position in this reader) to the current position.
    pub fn since(&self, start: usize) -> &'a [u8] {
        &self.buf[start..self.pos]
    }

    #[inline]
    fn truncated(&self, field: Field, needed: usize) -> DecodeError {
        DecodeError::new(field, self.offset(), ErrorKind::Truncated { needed, available: self.remaining() })
    }

    /// Takes `n` raw bytes.
    #[inline]
    pub fn take(&mut self, n: usize, field: Field) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.truncated(field, n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    pub fn u32(&mut self, field: Field) -> Result<u32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub fn i32(&mut self, field: Field) -> Result<i32, DecodeError> {
        Ok(self.u32(field)? as i32)
    }

    #[inline]
    pub fn u64(&mut self, field: Field) -> Result<u64, DecodeError> {
        let b = self.take(8, field)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_be_bytes(w))
    }

    /// An XDR bool or optional-data discriminator (RFC 4506 4.4, 4.19).
    #[inline]
    pub fn bool(&mut self, field: Field) -> Result<bool, DecodeError> {
        let at = self.offset();
        match self.u32(field)? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::new(field, at, ErrorKind::NotBool { value })),
        }
    }

    /// An array count whose elements take at least `element_size` bytes each: a count the
    /// remaining input cannot hold fails here, before anything loops over it.
    pub fn count(&mut self, field: Field, element_size: usize) -> Result<u32, DecodeError> {
        let at = self.offset();
        let count = self.u32(field)?;
        let available = self.remaining();
        if (count as u64) * (element_size as u64) > available as u64 {
            return Err(DecodeError::new(field, at, ErrorKind::CountExceedsInput { count, element_size, available }));
        }
        Ok(count)
    }

    /// A count with an upper bound from the spec (`T x<max>`), then checked against the input.
    pub fn bounded_count(&mut self, field: Field, element_size: usize, max: u32) -> Result<u32, DecodeError> {
        let at = self.offset();
        let mut probe = self.clone();
        let count = probe.u32(field)?;
        if count > max {
            return Err(DecodeError::new(field, at, ErrorKind::TooLong { length: count, max }));
        }
        self.count(field, element_size)
    }

    /// Variable-length opaque `opaque x<max>` (RFC 4506 4.10): the data, without its pad.
    /// The error offset of a bad length is that of the length word.
    pub fn opaque(&mut self, field: Field, max: u32) -> Result<&'a [u8], DecodeError> {
        let at = self.offset();
        let len = self.u32(field)?;
        if len > max {
            return Err(DecodeError::new(field, at, ErrorKind::TooLong { length: len, max }));
        }
        let len = len as usize;
        let padded = round_up4(len);
        if self.remaining() < padded {
            return Err(self.truncated(field, padded));
        }
        let data = &self.buf[self.pos..self.pos + len];
        self.pos += padded;
        Ok(data)
    }

    /// Fixed-length opaque `opaque x[n]`, with its pad.
    pub fn opaque_fixed(&mut self, n: usize, field: Field) -> Result<&'a [u8], DecodeError> {
        let padded = round_up4(n);
        if self.remaining() < padded {
            return Err(self.truncated(field, padded));
        }
        let data = &self.buf[self.pos..self.pos + n];
        self.pos += padded;
        Ok(data)
    }

    /// A child reader over the next `n` bytes; this reader skips them.
    pub fn sub(&mut self, n: usize, field: Field) -> Result<Reader<'a>, DecodeError> {
        let base = self.offset();
        let bytes = self.take(n, field)?;
        Ok(Reader::with_base(bytes, base))
    }

    /// Requires that everything was read (a nested opaque ends where its structure ends).
    pub fn expect_empty(&self, field: Field) -> Result<(), DecodeError> {
        if self.remaining() != 0 {
            return Err(DecodeError::new(field, self.offset(), ErrorKind::TrailingData { extra: self.remaining() }));
        }
        Ok(())
    }
}

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
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
        Ok(())
    }

    #[inline]
    pub fn u32(&mut self, v: u32) -> Result<(), EncodeError> {
        self.bytes(&v.to_be_bytes())
    }

    #[inline]
    pub fn u64(&mut self, v: u64) -> Result<(), EncodeError> {
        self.bytes(&v.to_be_bytes())
    }

    #[inline]
    pub fn bool(&mut self, v: bool) -> Result<(), EncodeError> {
        self.u32(v as u32)
    }

    /// `n` zero bytes.
    pub fn zeros(&mut self, n: usize) -> Result<(), EncodeError> {
        self.room(n)?;
        self.buf[self.pos..self.pos + n].fill(0);
        self.pos += n;
        Ok(())
    }

    /// Variable-length opaque: length, data, zero pad (RFC 4506 4.10).
    pub fn opaque(&mut self, data: &[u8]) -> Result<(), EncodeError> {
        let len =
            u32::try_from(data.len()).map_err(|_| EncodeError { needed: usize::MAX, available: self.buf.len() })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_words_big_endian() {
        let b = [0, 0, 0, 1, 0xf6, 0xab, 0x0e, 0x18, 0, 0, 0, 0, 0, 0, 1, 0];
        let mut r = Reader::new(&b);
        assert_eq!(r.u32("a").unwrap(), 1);
        assert_eq!(r.u32("b").unwrap(), 0xf6ab0e18);
        assert_eq!(r.u64("c").unwrap(), 256);
        assert!(r.is_empty());
    }

    #[test]
    fn bool_rejects_two() {
        let mut r = Reader::with_base(&[0, 0, 0, 2], 40);
        let e = r.bool("rdma_reads").unwrap_err();
        assert_eq!(e, DecodeError::new("rdma_reads", 40, ErrorKind::NotBool { value: 2 }));
    }

    #[test]
    fn huge_count_fails_before_looping() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let e = r.count("target", 16).unwrap_err();
        assert_eq!(e.offset, 0);
        assert_eq!(e.kind, ErrorKind::CountExceedsInput { count: u32::MAX, element_size: 16, available: 4 });
    }

    #[test]
    fn opaque_skips_pad_and_checks_max() {
        let b = [0, 0, 0, 5, b'h', b'e', b'l', b'l', b'o', 0, 0, 0, 9];
        let mut r = Reader::new(&b);
        assert_eq!(r.opaque("d", 255).unwrap(), b"hello");
        assert_eq!(r.offset(), 12);
        let mut r = Reader::new(&[0, 0, 1, 0x91]);
        assert_eq!(r.opaque("body", 400).unwrap_err().kind, ErrorKind::TooLong { length: 401, max: 400 });
    }

    #[test]
    fn truncated_opaque_names_field() {
        let mut r = Reader::new(&[0, 0, 0, 8, 1, 2, 3]);
        let e = r.opaque("xchv_data", u32::MAX).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated { needed: 8, available: 3 });
        assert_eq!(e.offset, 4);
    }

    #[test]
    fn writer_reports_needed_length() {
        let mut buf = [0u8; 6];
        let mut w = Writer::new(&mut buf);
        w.u32(7).unwrap();
        assert_eq!(w.u32(8).unwrap_err(), EncodeError { needed: 8, available: 6 });
    }

    #[test]
    fn writer_backpatches_opaque() {
        let mut buf = [0xaau8; 12];
        let mut w = Writer::new(&mut buf);
        let at = w.reserve_u32().unwrap();
        w.bytes(&[1, 2, 3]).unwrap();
        w.finish_opaque(at).unwrap();
        assert_eq!(w.len(), 8);
        assert_eq!(&buf[..8], &[0, 0, 0, 3, 1, 2, 3, 0]);
    }
}
