//! XDR counted arrays (RFC 4506 4.13, `T x<>`): a view validated once when decoded, then
//! iterated over the borrowed bytes without re-checking; or a slice of values when building.

use core::fmt;

use super::reader::Reader;
use super::writer::Writer;
use crate::error::{DecodeError, EncodeError, Field};

/// An element of an XDR counted array: decodable alone, with a minimum encoded size that
/// bounds the count before anything loops (rustls' `Codec`, smoltcp's `Repr`).
pub trait Item<'a>: Copy {
    /// The fewest bytes one element can take.
    const MIN_LEN: usize;
    /// Every element takes exactly `MIN_LEN` bytes and any bytes decode (`u32`, a segment):
    /// once the count fits the input, the elements need no reading to be valid.
    const FIXED: bool = false;
    /// Decodes the element's structure (extension-specific typing is checked by the caller).
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError>;
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError>;
    fn encoded_len(&self) -> usize;
}

impl<'a> Item<'a> for u32 {
    const MIN_LEN: usize = 4;
    const FIXED: bool = true;
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.u32("element")
    }
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(*self)
    }
    fn encoded_len(&self) -> usize {
        4
    }
}

#[derive(Clone, Copy)]
enum Repr<'a, T> {
    /// Validated bytes of `count` elements (count word excluded). Their offset in the
    /// message is not kept: re-reading validated elements cannot fail, so no error needs it.
    /// `facts`: what the decoder learnt of the elements on the way, for the checks (0: not
    /// recorded; the meaning of the other bits is the element type's, see [`Array::facts`]).
    Wire { bytes: &'a [u8], count: u32, facts: u8 },
    /// Plain values, for building.
    Slice(&'a [T]),
}

/// `T x<>`: a count and its elements, either validated borrowed bytes (after decoding) or a
/// slice of values (for building). Both iterate the same way and encode the same bytes.
#[derive(Clone, Copy)]
pub struct Array<'a, T> {
    repr: Repr<'a, T>,
}

impl<'a, T: Item<'a>> Array<'a, T> {
    /// An array of plain values.
    pub const fn from_slice(items: &'a [T]) -> Self {
        Array { repr: Repr::Slice(items) }
    }

    /// The empty array.
    pub const fn empty() -> Self {
        Array { repr: Repr::Slice(&[]) }
    }

    /// The validated encoding of `count` elements (count word excluded), as a scan of the
    /// whole message found them: what [`Array::decode`] would have returned.
    #[inline(always)]
    pub(crate) const fn from_wire(bytes: &'a [u8], count: u32) -> Self {
        Self::from_wire_with_facts(bytes, count, 0)
    }

    /// [`Array::from_wire`] with facts about the elements that the scan proved.
    #[inline(always)]
    pub(crate) const fn from_wire_with_facts(bytes: &'a [u8], count: u32, facts: u8) -> Self {
        Array { repr: Repr::Wire { bytes, count, facts } }
    }

    /// The facts recorded by the decoder that produced this array (0 for none, and for an
    /// array of values). One byte, in the padding of the `Wire` form: no decoded value grows.
    #[inline]
    pub(crate) fn facts(&self) -> u8 {
        match self.repr {
            Repr::Wire { facts, .. } => facts,
            Repr::Slice(_) => 0,
        }
    }

    /// Decodes a count (checked against the bytes left, in `field`) and its elements.
    pub fn decode(r: &mut Reader<'a>, field: Field) -> Result<Self, DecodeError> {
        if T::FIXED {
            // The count check is the whole validation: the elements fill count * MIN_LEN bytes.
            let count = r.count(field, T::MIN_LEN)?;
            let bytes = r.take(count as usize * T::MIN_LEN, field)?;
            return Ok(Self::from_wire(bytes, count));
        }
        Self::decode_with(r, field, T::decode)
    }

    /// Like [`Array::decode`], with `item` decoding (and checking) each element.
    pub fn decode_with<F>(r: &mut Reader<'a>, field: Field, mut item: F) -> Result<Self, DecodeError>
    where
        F: FnMut(&mut Reader<'a>) -> Result<T, DecodeError>,
    {
        let count = r.count(field, T::MIN_LEN)?;
        let start = r.position();
        for _ in 0..count {
            item(r)?;
        }
        Ok(Self::from_wire(r.since(start), count))
    }

    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Wire { count, .. } => count as usize,
            Repr::Slice(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> ArrayIter<'a, T> {
        match self.repr {
            Repr::Wire { bytes, count, .. } => {
                ArrayIter { inner: IterRepr::Wire { r: Reader::new(bytes), left: count } }
            }
            Repr::Slice(s) => ArrayIter { inner: IterRepr::Slice(s.iter()) },
        }
    }

    /// Element `i` (walks the array: elements may vary in size).
    pub fn get(&self, i: usize) -> Option<T> {
        self.iter().nth(i)
    }

    /// The values of an array built from values (None for a decoded array).
    #[inline]
    pub(crate) fn values(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Slice(s) => Some(s),
            Repr::Wire { .. } => None,
        }
    }

    /// The elements' encoding as received (count word excluded), for a decoded array.
    pub fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire { bytes, .. } => Some(bytes),
            Repr::Slice(_) => None,
        }
    }

    pub fn encoded_len(&self) -> usize {
        4 + match self.repr {
            Repr::Wire { bytes, .. } => bytes.len(),
            Repr::Slice(s) => s.iter().map(Item::encoded_len).sum(),
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.len() as u32)?;
        match self.repr {
            Repr::Wire { bytes, .. } => w.bytes(bytes),
            Repr::Slice(s) => s.iter().try_for_each(|x| x.encode(w)),
        }
    }
}

impl<'a, T: Item<'a>> Default for Array<'a, T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<'a, T: Item<'a> + PartialEq> PartialEq for Array<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: Item<'a> + Eq> Eq for Array<'a, T> {}

impl<'a, T: Item<'a> + fmt::Debug> fmt::Debug for Array<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[derive(Clone)]
enum IterRepr<'a, T> {
    Wire { r: Reader<'a>, left: u32 },
    Slice(core::slice::Iter<'a, T>),
}

/// Iterator over an [`Array`]. Decoded arrays were validated, so re-reading cannot fail.
#[derive(Clone)]
pub struct ArrayIter<'a, T> {
    inner: IterRepr<'a, T>,
}

impl<'a, T: Item<'a>> Iterator for ArrayIter<'a, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match &mut self.inner {
            IterRepr::Wire { r, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                T::decode(r).ok()
            }
            IterRepr::Slice(s) => s.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.inner {
            IterRepr::Wire { left, .. } => *left as usize,
            IterRepr::Slice(s) => s.len(),
        };
        (n, Some(n))
    }
}

impl<'a, T: Item<'a>> ExactSizeIterator for ArrayIter<'a, T> {}

impl<T> fmt::Debug for ArrayIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArrayIter")
    }
}
