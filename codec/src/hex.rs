//! Bytes as lower-case hex digits, two a byte, no separators: the one spelling every report,
//! transcript, reproducer and decoded field uses. [`Hex`] displays them without allocating
//! (`Hex(b).to_string()` where a `String` is wanted).

use core::fmt;

/// `Hex(&[0x0a, 0xff])` displays as `0aff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::Hex;

    #[test]
    fn two_lower_case_digits_a_byte() {
        assert_eq!(std::format!("{}", Hex(&[0x00, 0x0a, 0xff, 0x10])), "000aff10");
        assert_eq!(std::format!("{}", Hex(&[])), "");
    }
}
