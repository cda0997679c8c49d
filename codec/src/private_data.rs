//! RDMA-CM private data for RPC-over-RDMA Version One (RFC 8797 section 4; the earlier
//! draft-ietf-nfsv4-rpcrdma-cm-pvt-data-00/-01 describe the same eight octets).
//!
//! ```text
//!  octet  0..4          4         5              6           7
//!        +-------------+---------+--------------+-----------+--------------+
//!        | f6 ab 0e 18 | Version | Reserved | R | Send Size | Receive Size |
//!        +-------------+---------+--------------+-----------+--------------+
//! ```
//!
//! R is the least-significant bit of octet 5 (bit 15 in the RFC's MSB-first numbering,
//! mask 0x01); the other seven bits are Reserved ("Senders MUST set these bits to zero, and
//! receivers MUST ignore their value"). The -00/-01 drafts call octet 5 "Flags", bit 15 the
//! remote-invalidation flag and bits 14-8 reserved: the same bits.
//!
//! A size code `v` means `(v + 1) * 1024` octets (RFC 8797 4.2), so 1024..=262144.
//!
//! Three levels:
//! - [`PrivateData::decode`] / [`PrivateData::encode`]: the eight octets, strictly.
//! - [`find`]: locates the format identifier in the buffer a CM hands over (56 octets on an
//!   InfiniBand REQ through rdma_cm, 196 on a REP, zero-padded), under the profile's
//!   [`PrivateDataLocate`] rule, and says whether the data is usable.
//! - [`effective`]: never fails; maps absent, unrecognised and overrunning data to the
//!   RFC 8797 5.1 defaults and says which case applied. [`inline_thresholds`] combines two
//!   peers' effective values.

use core::fmt;

use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::{PrivateDataLocate, Profile};
use crate::xdr::Writer;

/// The Format Identifier (RFC 8797 4: "always 0xf6ab0e18, in network byte order").
pub const FORMAT_IDENTIFIER: u32 = 0xf6ab_0e18;
/// The identifier as it appears on the wire.
pub const IDENTIFIER_BYTES: [u8; 4] = FORMAT_IDENTIFIER.to_be_bytes();
/// The only format version defined ("exactly eight octets are present").
pub const VERSION: u8 = 1;
/// Length of the Version 1 format.
pub const LEN: usize = 8;
/// R: the sender supports remote invalidation (octet 5, mask 0x01).
pub const R_FLAG: u8 = 0x01;
/// The seven Reserved bits of octet 5.
pub const RESERVED_MASK: u8 = 0xfe;
/// Smallest representable size (code 0), also the RFC 8166 3.3.3 default inline threshold.
pub const MIN_SIZE: u32 = 1024;
/// Largest representable size (code 255).
pub const MAX_SIZE: u32 = 262_144;
/// Private data an InfiniBand CM REQ carries for an rdma_cm consumer (92 minus rdma_cm's 36).
pub const IB_REQ_LEN: usize = 56;
/// Private data an InfiniBand CM REP carries.
pub const IB_REP_LEN: usize = 196;

/// Octet offsets within the eight octets.
pub mod field {
    pub const IDENTIFIER: usize = 0;
    pub const VERSION: usize = 4;
    pub const FLAGS: usize = 5;
    pub const SEND_SIZE: usize = 6;
    pub const RECEIVE_SIZE: usize = 7;
}

/// Field names used in errors.
const FIELD_NAMES: [&str; 4] = ["pd.version", "pd.flags", "pd.send_size", "pd.receive_size"];

/// Decodes a Send Size or Receive Size code: "adds one to the encoded value and then
/// multiplies that result by 1024" (RFC 8797 4.2).
pub const fn decode_size(code: u8) -> u32 {
    (code as u32 + 1) * 1024
}

/// A byte size below 1024, which no size code can represent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeBelowMinimum {
    pub size: u32,
}

impl fmt::Display for SizeBelowMinimum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes is below the 1024-byte minimum inline threshold", self.size)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SizeBelowMinimum {}

/// Encodes a byte size: "dividing its actual buffer size, in octets, by 1024 and subtracting
/// one" (RFC 8797 4.2), with floor division, so the advertised size never exceeds the real
/// buffer. Sizes above 262144 clamp to code 255 (262144 octets): advertising less than the
/// buffer holds is always safe, while an error would leave a large-buffer peer unable to
/// advertise at all. Sizes below 1024 are an error.
pub const fn encode_size(size: u32) -> Result<u8, SizeBelowMinimum> {
    if size < MIN_SIZE {
        return Err(SizeBelowMinimum { size });
    }
    let code = size / 1024 - 1;
    Ok(if code > 255 { 255 } else { code as u8 })
}

/// The eight octets of Version 1 private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrivateData {
    /// Always [`VERSION`] for a decoded value; settable for sending malformed data.
    pub version: u8,
    /// The Reserved bits as they sit in octet 5 (`octet & 0xfe`). Kept and reported; they
    /// change nothing. Encoded as given, so a harness can send them set.
    pub reserved: u8,
    /// R.
    pub remote_invalidation: bool,
    pub send_size_code: u8,
    pub receive_size_code: u8,
}

impl PrivateData {
    /// RFC 8797 5.1: what a peer behaves as if it had received when it receives nothing
    /// usable: R clear, both size codes zero (1024 octets).
    pub const DEFAULT: PrivateData = PrivateData::from_codes(0, 0, false);

    /// From size codes.
    pub const fn from_codes(send_size_code: u8, receive_size_code: u8, remote_invalidation: bool) -> Self {
        PrivateData { version: VERSION, reserved: 0, remote_invalidation, send_size_code, receive_size_code }
    }

    /// From byte sizes, encoded with [`encode_size`].
    pub const fn new(send_size: u32, receive_size: u32, remote_invalidation: bool) -> Result<Self, SizeBelowMinimum> {
        let s = match encode_size(send_size) {
            Ok(c) => c,
            Err(e) => return Err(e),
        };
        let r = match encode_size(receive_size) {
            Ok(c) => c,
            Err(e) => return Err(e),
        };
        Ok(Self::from_codes(s, r, remote_invalidation))
    }

    /// Sets the Reserved bits (masked to 0xfe) to send deliberately non-conforming data.
    pub const fn with_reserved(mut self, bits: u8) -> Self {
        self.reserved = bits & RESERVED_MASK;
        self
    }

    /// Any version octet, to send an unrecognised version.
    pub const fn with_version(mut self, version: u8) -> Self {
        self.version = version;
        self
    }

    /// Octet 5.
    pub const fn flags(&self) -> u8 {
        self.reserved & RESERVED_MASK | if self.remote_invalidation { R_FLAG } else { 0 }
    }

    /// Send Size in octets.
    pub const fn send_size(&self) -> u32 {
        decode_size(self.send_size_code)
    }

    /// Receive Size in octets.
    pub const fn receive_size(&self) -> u32 {
        decode_size(self.receive_size_code)
    }

    /// Decodes the eight octets at the start of `buf` (anything after them is ignored: the
    /// CM's zero padding or a later extension "starting at byte eight", RFC 8797 6).
    /// Errors: a wrong identifier (`invalid pd.format_identifier`), a version other than 1
    /// (`unsupported-version pd.version`), or `truncated` naming the first missing octet.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_at(buf, 0)
    }

    /// As [`PrivateData::decode`], with error offsets counted from `base`.
    pub fn decode_at(buf: &[u8], base: usize) -> Result<Self, DecodeError> {
        if buf.len() < 4 {
            return Err(DecodeError::new(
                "pd.format_identifier",
                base,
                ErrorKind::Truncated { needed: 4, available: buf.len() },
            ));
        }
        if buf[..4] != IDENTIFIER_BYTES {
            return Err(DecodeError::new(
                "pd.format_identifier",
                base,
                ErrorKind::Invalid { reason: "not the RPC-over-RDMA Version One format identifier 0xf6ab0e18" },
            ));
        }
        Self::decode_after_identifier(buf, base)
    }

    /// `buf` starts with the identifier.
    fn decode_after_identifier(buf: &[u8], base: usize) -> Result<Self, DecodeError> {
        let octet = |i: usize| -> Result<u8, DecodeError> {
            buf.get(i).copied().ok_or(DecodeError::new(
                FIELD_NAMES[i - field::VERSION],
                base + buf.len(),
                ErrorKind::Truncated { needed: 1, available: 0 },
            ))
        };
        let version = octet(field::VERSION)?;
        if version != VERSION {
            return Err(DecodeError::new(
                "pd.version",
                base + field::VERSION,
                ErrorKind::UnsupportedVersion { value: version as u32 },
            ));
        }
        let flags = octet(field::FLAGS)?;
        let send_size_code = octet(field::SEND_SIZE)?;
        let receive_size_code = octet(field::RECEIVE_SIZE)?;
        Ok(PrivateData {
            version,
            reserved: flags & RESERVED_MASK,
            remote_invalidation: flags & R_FLAG != 0,
            send_size_code,
            receive_size_code,
        })
    }

    pub const fn encoded_len(&self) -> usize {
        LEN
    }

    /// The eight octets.
    pub const fn to_bytes(&self) -> [u8; LEN] {
        let id = IDENTIFIER_BYTES;
        [id[0], id[1], id[2], id[3], self.version, self.flags(), self.send_size_code, self.receive_size_code]
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.bytes(&self.to_bytes())
    }

    /// Writes the eight octets into `buf`; returns 8. A CM buffer's remaining octets are the
    /// caller's (zero them for a REQ/REP).
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = Writer::new(buf);
        self.encode(&mut w)?;
        Ok(w.len())
    }
}

impl Default for PrivateData {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for PrivateData {
    /// `RPC-over-RDMA private data v1 send=4096 receive=4096 R=1 reserved=0x00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RPC-over-RDMA private data v{} send={} receive={} R={} reserved={:#04x}",
            self.version,
            self.send_size(),
            self.receive_size(),
            self.remote_invalidation as u8,
            self.reserved
        )
    }
}

/// Where the format identifier starts in `buf`, under `rule`: the first occurrence at any
/// byte offset (RFC 8797 5.2: "The offset of the Format Identifier is not restricted to any
/// alignment"), or only at offset 0 (the drafts: "If this protocol number is not present as
/// the first 4 octets ... ignore").
pub fn locate(buf: &[u8], rule: PrivateDataLocate) -> Option<usize> {
    match rule {
        PrivateDataLocate::Search => buf.windows(IDENTIFIER_BYTES.len()).position(|w| w == IDENTIFIER_BYTES),
        PrivateDataLocate::OffsetZero => buf.starts_with(&IDENTIFIER_BYTES).then_some(0),
    }
}

/// What a received private-data buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// No format identifier where the profile looks (RFC 8797 5.2: "behave as if no
    /// RPC-over-RDMA version 1 CM Private Data has been provided").
    Absent,
    /// The identifier at `at`, followed by a version this decoder does not know (RFC 8797 6
    /// reserves other versions for future formats, of unknown length).
    UnrecognisedVersion { at: usize, version: u8 },
    /// Version 1 data at `at`.
    Found { at: usize, data: PrivateData },
}

/// Locates and decodes private data in the buffer a CM handed over. The first occurrence of
/// the identifier is the one used (RFC 8797 5.2: "Once ... found, the receiver parses the
/// subsequent octets"); a later occurrence is not tried. The only error is an overrun:
/// the identifier is found but the buffer ends before the version octet, or (version 1)
/// before the eighth octet ("the size of the content does not overrun the length of the
/// buffer"); the error is `truncated` naming the first missing octet.
pub fn find(buf: &[u8], profile: &Profile) -> Result<Lookup, DecodeError> {
    // The common case under either locating rule: version 1 data at offset 0 (a first
    // occurrence by definition), read as two words.
    if let Some(b) = buf.first_chunk::<LEN>() {
        let [i0, i1, i2, i3, version, flags, send_size_code, receive_size_code] = *b;
        if [i0, i1, i2, i3] == IDENTIFIER_BYTES && version == VERSION {
            let data = PrivateData {
                version,
                reserved: flags & RESERVED_MASK,
                remote_invalidation: flags & R_FLAG != 0,
                send_size_code,
                receive_size_code,
            };
            return Ok(Lookup::Found { at: 0, data });
        }
    }
    let Some(at) = locate(buf, profile.private_data_locate) else {
        return Ok(Lookup::Absent);
    };
    match PrivateData::decode_after_identifier(&buf[at..], at) {
        Ok(data) => Ok(Lookup::Found { at, data }),
        Err(DecodeError { kind: ErrorKind::UnsupportedVersion { value }, .. }) => {
            Ok(Lookup::UnrecognisedVersion { at, version: value as u8 })
        }
        Err(e) => Err(e),
    }
}

crate::named_enum! {
    /// Which case [`effective`] applied.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Status {
        /// Version 1 data was found and is used.
        Ok = "ok",
        /// No identifier: defaults.
        Absent = "absent",
        /// The identifier with a version other than 1: defaults.
        UnrecognisedVersion = "unrecognised-version",
        /// The identifier, but the content overruns the buffer: defaults.
        Truncated = "truncated",
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The parameters a peer acts on, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effective {
    pub status: Status,
    /// Where the identifier was found (None when absent).
    pub found_at: Option<usize>,
    /// The received data when `status` is Ok, else [`PrivateData::DEFAULT`].
    pub params: PrivateData,
}

/// The parameters to act on for a received private-data buffer: never an error. Absent,
/// unrecognised and overrunning data all mean "as if ... bit 15 of the Flags field is zero
/// and ... both Size fields contain the value zero" (RFC 8797 5.1): 1024-octet sizes and no
/// remote invalidation.
pub fn effective(buf: &[u8], profile: &Profile) -> Effective {
    let (status, found_at, params) = match find(buf, profile) {
        Ok(Lookup::Found { at, data }) => (Status::Ok, Some(at), data),
        Ok(Lookup::Absent) => (Status::Absent, None, PrivateData::DEFAULT),
        Ok(Lookup::UnrecognisedVersion { at, .. }) => (Status::UnrecognisedVersion, Some(at), PrivateData::DEFAULT),
        Err(_) => (Status::Truncated, locate(buf, profile.private_data_locate), PrivateData::DEFAULT),
    };
    Effective { status, found_at, params }
}

/// The inline thresholds and Send With Invalidate permission of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineThresholds {
    /// "The client uses the smaller of its own send size and the server's reported receive
    /// size as the client-to-server inline threshold" (RFC 8797 4.2): the call threshold.
    pub client_to_server: u32,
    /// "The server uses the smaller of its own send size and the client's reported receive
    /// size as the server-to-client inline threshold": the reply threshold.
    pub server_to_client: u32,
    /// Both peers set R: the responder MAY use RDMA Send With Invalidate (RFC 8797 4.1);
    /// otherwise it "MUST use only RDMA Send".
    pub send_with_invalidate: bool,
}

/// Combines both peers' (effective) private data. Each side knows its own values and the
/// peer's advertised ones, and both compute the same result from the same two values.
pub fn inline_thresholds(client: &PrivateData, server: &PrivateData) -> InlineThresholds {
    InlineThresholds {
        client_to_server: client.send_size().min(server.receive_size()),
        server_to_client: server.send_size().min(client.receive_size()),
        send_with_invalidate: client.remote_invalidation && server.remote_invalidation,
    }
}

crate::xdr::impl_encode! {
    PrivateData => encode, fast encode_into;
}

#[cfg(test)]
mod tests {
    use super::*;

    // The wire notes' example: 4 KiB both ways, R set.
    const EXAMPLE: [u8; 8] = [0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03];

    fn pd_offset_zero() -> Profile {
        Profile { private_data_locate: PrivateDataLocate::OffsetZero, ..Profile::default() }
    }

    #[test]
    fn deconstruct() {
        let d = PrivateData::decode(&EXAMPLE).unwrap();
        assert_eq!(d.version, 1);
        assert!(d.remote_invalidation);
        assert_eq!(d.reserved, 0);
        assert_eq!((d.send_size(), d.receive_size()), (4096, 4096));
    }

    #[test]
    fn construct() {
        let d = PrivateData::new(4096, 4096, true).unwrap();
        assert_eq!(d.to_bytes(), EXAMPLE);
        let mut buf = [0u8; 7];
        assert_eq!(d.encode_into(&mut buf).unwrap_err(), EncodeError { needed: 8, available: 7 });
    }

    #[test]
    fn size_codes() {
        assert_eq!(decode_size(0), 1024);
        assert_eq!(decode_size(3), 4096);
        assert_eq!(decode_size(255), 262_144);
        assert_eq!(encode_size(1024), Ok(0));
        assert_eq!(encode_size(2047), Ok(0)); // floor: never advertise more than the buffer
        assert_eq!(encode_size(4096), Ok(3));
        assert_eq!(encode_size(262_144), Ok(255));
        assert_eq!(encode_size(1 << 20), Ok(255)); // clamps
        assert_eq!(encode_size(u32::MAX), Ok(255));
        assert_eq!(encode_size(1023), Err(SizeBelowMinimum { size: 1023 }));
        assert!(PrivateData::new(512, 4096, false).is_err());
    }

    #[test]
    fn reserved_bits_are_kept_and_ignored() {
        let b = [0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x00, 0xff];
        let d = PrivateData::decode(&b).unwrap();
        assert_eq!(d.reserved, 0xfe);
        assert!(!d.remote_invalidation);
        assert_eq!(d.to_bytes(), b);
        assert_eq!(PrivateData::from_codes(0, 255, false).with_reserved(0xff).to_bytes(), b);
    }

    #[test]
    fn strict_decode_errors() {
        let e = PrivateData::decode(&[0xf6, 0xab, 0x0e, 0x19, 1, 1, 3, 3]).unwrap_err();
        assert_eq!(e.field, "pd.format_identifier");
        let e = PrivateData::decode(&[0xf6, 0xab, 0x0e, 0x18, 2, 1, 3, 3]).unwrap_err();
        assert_eq!(e, DecodeError::new("pd.version", 4, ErrorKind::UnsupportedVersion { value: 2 }));
        let e = PrivateData::decode(&EXAMPLE[..6]).unwrap_err();
        assert_eq!(e, DecodeError::new("pd.send_size", 6, ErrorKind::Truncated { needed: 1, available: 0 }));
        let e = PrivateData::decode(&EXAMPLE[..2]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Truncated { needed: 4, available: 2 });
    }

    #[test]
    fn search_finds_unaligned_identifier() {
        let mut buf = [0u8; IB_REQ_LEN];
        buf[0] = 0xf6; // a partial match first
        buf[1] = 0xab;
        buf[5..13].copy_from_slice(&EXAMPLE);
        let p = Profile::default();
        assert_eq!(find(&buf, &p).unwrap(), Lookup::Found { at: 5, data: PrivateData::from_codes(3, 3, true) });
        assert_eq!(find(&buf, &pd_offset_zero()).unwrap(), Lookup::Absent);
        let e = effective(&buf, &pd_offset_zero());
        assert_eq!((e.status, e.found_at, e.params), (Status::Absent, None, PrivateData::DEFAULT));
    }

    #[test]
    fn zero_padded_rep_buffer() {
        let mut buf = [0u8; IB_REP_LEN];
        buf[..8].copy_from_slice(&EXAMPLE);
        for p in [Profile::default(), pd_offset_zero()] {
            let e = effective(&buf, &p);
            assert_eq!((e.status, e.found_at), (Status::Ok, Some(0)));
            assert_eq!(e.params.send_size(), 4096);
        }
    }

    #[test]
    fn overrun_and_unknown_version_fall_back() {
        let mut buf = [0u8; IB_REQ_LEN];
        buf[50..56].copy_from_slice(&EXAMPLE[..6]);
        let p = Profile::default();
        let e = find(&buf, &p).unwrap_err();
        assert_eq!(e, DecodeError::new("pd.send_size", 56, ErrorKind::Truncated { needed: 1, available: 0 }));
        assert_eq!(effective(&buf, &p).status, Status::Truncated);
        assert_eq!(effective(&buf, &p).found_at, Some(50));
        assert_eq!(effective(&buf, &p).params, PrivateData::DEFAULT);

        let mut buf = [0u8; 8];
        buf[4..].copy_from_slice(&IDENTIFIER_BYTES);
        assert_eq!(find(&buf, &p).unwrap_err().field, "pd.version");

        let v2 = PrivateData::from_codes(3, 3, true).with_version(2).to_bytes();
        assert_eq!(find(&v2, &p).unwrap(), Lookup::UnrecognisedVersion { at: 0, version: 2 });
        let e = effective(&v2, &p);
        assert_eq!((e.status, e.params), (Status::UnrecognisedVersion, PrivateData::DEFAULT));
        // An unknown version is not checked for length: its format is unknown.
        assert_eq!(find(&v2[..5], &p).unwrap(), Lookup::UnrecognisedVersion { at: 0, version: 2 });
        assert_eq!(effective(&[], &p).status, Status::Absent);
    }

    #[test]
    fn thresholds_take_the_smaller_side() {
        let client = PrivateData::new(8192, 4096, true).unwrap();
        let server = PrivateData::new(16384, 2048, true).unwrap();
        let t = inline_thresholds(&client, &server);
        assert_eq!(t.client_to_server, 2048);
        assert_eq!(t.server_to_client, 4096);
        assert!(t.send_with_invalidate);
        let t = inline_thresholds(&client, &PrivateData::DEFAULT);
        assert_eq!((t.client_to_server, t.server_to_client, t.send_with_invalidate), (1024, 1024, false));
    }

    #[test]
    fn display() {
        let s = std::format!("{}", PrivateData::decode(&EXAMPLE).unwrap());
        assert_eq!(s, "RPC-over-RDMA private data v1 send=4096 receive=4096 R=1 reserved=0x00");
    }
}
