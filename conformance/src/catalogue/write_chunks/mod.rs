//! Write chunks (RFC 8166 3.4.6, 4.3.2): no XDR pad written, the lengths returned, unused
//! and empty chunks. [`contents`] judges what a write chunk holds, [`list`] which chunk each
//! result uses.

mod contents;
mod list;

use crate::engine::Check;

pub static CHECKS: [Check; 13] = [
    contents::WRITE_CHUNK_NO_PAD,
    list::UNUSED_WRITE_CHUNK,
    contents::EXTRA_PAD_SEGMENT,
    list::EMPTY_WRITE_CHUNK,
    contents::WRITE_SEGMENTS_COPIED,
    list::SEVERAL_WRITE_CHUNKS,
    list::EMPTY_THEN_WRITE_CHUNK,
    list::WRITE_CHUNK_WITH_REPLY_CHUNK,
    contents::WRITE_CHUNK_TOO_SMALL,
    contents::COUNT_STAYS_INLINE,
    contents::REDUCED_ITEM_NO_ROUNDUP,
    list::INELIGIBLE_NOT_REDUCED,
    contents::ONE_ITEM_PER_CHUNK,
];
