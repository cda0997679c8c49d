//! XDR primitives (RFC 4506): a bounded reader over borrowed bytes, a writer into a caller's
//! buffer, counted arrays and open wire enums. Every other module decodes and encodes through
//! these.

mod array;
mod encode;
mod reader;
mod wire_enum;
mod writer;

pub use array::{Array, ArrayIter, Item};
pub(crate) use encode::impl_encode;
pub use encode::Encode;
pub use reader::{pad4, round_up4, Reader};
pub(crate) use wire_enum::wire_enum;
pub use writer::Writer;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{DecodeError, EncodeError, ErrorKind};

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
