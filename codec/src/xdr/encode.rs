//! What every encodable wire type offers: its exact encoded length, a write through the
//! [`Writer`], and from those a buffer of exactly the right size (smoltcp's
//! `Repr::buffer_len()`, rustls' `Codec::get_encoding()`), so no caller sizes a buffer by guess.

use super::writer::Writer;
use crate::error::EncodeError;

/// An encodable wire value. [`Encode::encoded_len`] is exact: [`Encode::write`] writes that
/// many bytes, no more, no fewer (the tests and the fuzz targets hold every type to it).
pub trait Encode {
    /// The number of bytes [`Encode::write`] writes.
    fn encoded_len(&self) -> usize;

    /// Writes the value into `w`.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), EncodeError>;

    /// Writes the value at the start of `buf`; returns the length written.
    fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = Writer::new(buf);
        self.write(&mut w)?;
        Ok(w.len())
    }

    /// The encoding in a vector of exactly [`Encode::encoded_len`] bytes (one allocation).
    #[cfg(feature = "alloc")]
    fn encode_to_vec(&self) -> alloc::vec::Vec<u8> {
        let mut out = alloc::vec![0u8; self.encoded_len()];
        let n = self.encode_into(&mut out).expect("encoded_len() is exact: the buffer holds the encoding");
        assert_eq!(n, out.len(), "encoded_len() is exact");
        out
    }
}

/// Implements [`Encode`] for types whose inherent `encoded_len` and writer method (named
/// after the arrow) already exist, optionally with an inherent fast `encode_into`.
macro_rules! impl_encode {
    ($($ty:ty => $write:ident $(, fast $fast:ident)?;)*) => {$(
        impl $crate::xdr::Encode for $ty {
            #[inline]
            fn encoded_len(&self) -> usize {
                <$ty>::encoded_len(self)
            }
            #[inline]
            fn write(&self, w: &mut $crate::xdr::Writer<'_>) -> Result<(), $crate::EncodeError> {
                <$ty>::$write(self, w)
            }
            $(
                #[inline]
                fn encode_into(&self, buf: &mut [u8]) -> Result<usize, $crate::EncodeError> {
                    <$ty>::$fast(self, buf)
                }
            )?
        }
    )*};
}
pub(crate) use impl_encode;
