//! `xcharsubset` (xcharext-02 section 2.1): a bit per position in an earlier xcharspec.

use crate::error::{DecodeError, EncodeError, Field};
use crate::profile::SubsetBitOrder;
use crate::xdr::{Array, ArrayIter, Reader, Writer};

/// 32 in word N div 32" (section 2.1), LSB-first unless the profile says otherwise (X9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XcharSubset<'a> {
    words: Array<'a, u32>,
    order: SubsetBitOrder,
}

/// Word index and mask of bit `n`.
pub fn bit_mask(n: usize, order: SubsetBitOrder) -> (usize, u32) {
    let b = (n % 32) as u32;
    let mask = match order {
        SubsetBitOrder::LsbFirst => 1 << b,
        SubsetBitOrder::MsbFirst => 1 << (31 - b),
    };
    (n / 32, mask)
}

/// Sets bit `n` in `words` (for building); false when `words` is too short.
pub fn set_bit(words: &mut [u32], n: usize, order: SubsetBitOrder) -> bool {
    let (i, mask) = bit_mask(n, order);
    match words.get_mut(i) {
        Some(w) => {
            *w |= mask;
            true
        }
        None => false,
    }
}

impl<'a> XcharSubset<'a> {
    pub const fn new(words: &'a [u32], order: SubsetBitOrder) -> Self {
        XcharSubset { words: Array::from_slice(words), order }
    }

    /// Words already validated by a scan of the whole message.
    #[inline(always)]
    pub(crate) const fn from_wire(words: Array<'a, u32>, order: SubsetBitOrder) -> Self {
        XcharSubset { words, order }
    }

    /// The array of words, for the encoder's fast path.
    #[inline(always)]
    pub(crate) fn words_array(&self) -> &Array<'a, u32> {
        &self.words
    }

    pub fn decode(r: &mut Reader<'a>, field: Field, order: SubsetBitOrder) -> Result<Self, DecodeError> {
        Ok(XcharSubset { words: Array::decode(r, field)?, order })
    }

    /// How many words were sent.
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Word `i`; "Words beyond the last one specified are treated as containing zero".
    pub fn word(&self, i: usize) -> u32 {
        self.words.get(i).unwrap_or(0)
    }

    pub fn words(&self) -> ArrayIter<'a, u32> {
        self.words.iter()
    }

    pub fn order(&self) -> SubsetBitOrder {
        self.order
    }

    /// Whether the xcharval at position `n` is in the subset.
    pub fn is_set(&self, n: usize) -> bool {
        let (i, mask) = bit_mask(n, self.order);
        self.word(i) & mask != 0
    }

    /// The positions in the subset, ascending.
    pub fn bits(&self) -> SetBits<'a> {
        SetBits { words: self.words.iter(), order: self.order, next_word: 0, base: 0, cur: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.words().all(|w| w == 0)
    }

    pub fn encoded_len(&self) -> usize {
        self.words.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.words.encode(w)
    }
}

/// Iterator over the set bits of an [`XcharSubset`].
#[derive(Debug, Clone)]
pub struct SetBits<'a> {
    words: ArrayIter<'a, u32>,
    order: SubsetBitOrder,
    next_word: usize,
    base: usize,
    /// The current word with bit N at position N (LSB-first).
    cur: u32,
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            let w = self.words.next()?;
            self.base = self.next_word * 32;
            self.next_word += 1;
            self.cur = match self.order {
                SubsetBitOrder::LsbFirst => w,
                SubsetBitOrder::MsbFirst => w.reverse_bits(),
            };
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.base + b)
    }
}
