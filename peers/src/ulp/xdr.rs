//! Results being built in XDR, shared by the NFSv4.0 ([`super::nfs4`]) and the NFSv4.1 and
//! 4.2 ([`super::nfs41`]) COMPOUND servers: an unsigned int, a variable-length opaque
//! (RFC 4506 4.1, 4.10), and COMPOUND4res split around its DDP-eligible items (RFC 8267 6.4.1).

use rpcrdma_codec::xdr::pad4;

use super::{LaterItem, UlpResults};

/// Appends an XDR unsigned int.
pub(super) fn put(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}

/// Appends an XDR variable-length opaque.
pub(super) fn put_opaque(v: &mut Vec<u8>, b: &[u8]) {
    put(v, b.len() as u32);
    v.extend_from_slice(b);
    v.resize(v.len() + pad4(b.len()), 0);
}

/// COMPOUND4res being built: the inline bytes between DDP-eligible items, and the items.
#[derive(Default)]
pub(super) struct Builder {
    /// `inline[k]` precedes `items[k]`; the last entry follows the last item.
    inline: Vec<Vec<u8>>,
    items: Vec<Vec<u8>>,
}

impl Builder {
    pub(crate) fn bytes(&mut self) -> &mut Vec<u8> {
        if self.inline.len() == self.items.len() {
            self.inline.push(Vec::new());
        }
        self.inline.last_mut().expect("pushed")
    }

    /// An item after its length word, which the caller put inline.
    pub(crate) fn item(&mut self, data: &[u8]) {
        self.bytes();
        self.items.push(data.to_vec());
    }

    /// The results, `prefix` (COMPOUND4res's status, tag and count) first.
    pub(crate) fn finish(mut self, prefix: Vec<u8>) -> UlpResults {
        self.bytes();
        let mut inline = self.inline.into_iter();
        let mut items = self.items.into_iter();
        let head = [prefix, inline.next().unwrap_or_default()].concat();
        let ddp = items.next();
        let tail = inline.next().unwrap_or_default();
        let more = items.zip(inline).map(|(data, tail)| LaterItem { data, tail }).collect();
        UlpResults { head, ddp, tail, more }
    }
}
