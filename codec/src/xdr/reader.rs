//! The XDR reader: a bounded cursor over borrowed input.

use crate::error::{DecodeError, ErrorKind, Field};

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

    /// Skips `n` bytes the caller has already read through [`Reader::rest`] (never past the
    /// end).
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
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
