//! Typed decode and encode errors: what failed, in which field, at which byte offset.

use core::fmt;

/// The name of an XDR field, spelled as in the specs (`rdma_reads`, `position`, `xchv_data`).
pub type Field = &'static str;

/// Why decoding failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends inside the field.
    Truncated { needed: usize, available: usize },
    /// An XDR bool or optional-data discriminator that is neither 0 nor 1 (RFC 4506 4.4, 4.19).
    NotBool { value: u32 },
    /// An array count whose elements cannot fit in the bytes left.
    CountExceedsInput { count: u32, element_size: usize, available: usize },
    /// rdma_proc is not an arm of the body union.
    UnknownProc { value: u32 },
    /// rdma_err is not an arm of the error union.
    UnknownErrorCode { value: u32 },
    /// rdma_vers names a version this decoder does not implement.
    UnsupportedVersion { value: u32 },
    /// Another enum or union discriminant with an undefined value.
    InvalidEnum { value: u32 },
    /// A nested opaque whose inner structure ends before the opaque does.
    TrailingData { extra: usize },
    /// A length over the maximum the spec allows.
    TooLong { length: u32, max: u32 },
    /// A value the spec forbids in this field.
    Invalid { reason: &'static str },
}

impl ErrorKind {
    /// The kind's stable short name, as used in vector files and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Truncated { .. } => "truncated",
            ErrorKind::NotBool { .. } => "not-bool",
            ErrorKind::CountExceedsInput { .. } => "count-exceeds-input",
            ErrorKind::UnknownProc { .. } => "unknown-proc",
            ErrorKind::UnknownErrorCode { .. } => "unknown-error-code",
            ErrorKind::UnsupportedVersion { .. } => "unsupported-version",
            ErrorKind::InvalidEnum { .. } => "invalid-enum",
            ErrorKind::TrailingData { .. } => "trailing-data",
            ErrorKind::TooLong { .. } => "too-long",
            ErrorKind::Invalid { .. } => "invalid",
        }
    }
}

/// A decode failure: `kind` in `field`, whose encoding starts at byte `offset` of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeError {
    pub field: Field,
    pub offset: usize,
    pub kind: ErrorKind,
}

impl DecodeError {
    pub const fn new(field: Field, offset: usize, kind: ErrorKind) -> Self {
        DecodeError { field, offset, kind }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (field, at) = (self.field, self.offset);
        match self.kind {
            ErrorKind::Truncated { needed, available } => write!(
                f,
                "truncated {field} at offset {at}: needs {needed} bytes, {available} left"
            ),
            ErrorKind::NotBool { value } => write!(
                f,
                "{field} at offset {at}: discriminator {value} is not an XDR bool (0 or 1)"
            ),
            ErrorKind::CountExceedsInput { count, element_size, available } => write!(
                f,
                "{field} at offset {at}: count {count} of {element_size}-byte elements exceeds the {available} bytes left"
            ),
            ErrorKind::UnknownProc { value } => {
                write!(f, "{field} at offset {at}: {value} is not a known procedure")
            }
            ErrorKind::UnknownErrorCode { value } => {
                write!(f, "{field} at offset {at}: {value} is not a known error code")
            }
            ErrorKind::UnsupportedVersion { value } => {
                write!(f, "{field} at offset {at}: version {value} is not supported")
            }
            ErrorKind::InvalidEnum { value } => {
                write!(f, "{field} at offset {at}: {value} is not a valid value")
            }
            ErrorKind::TrailingData { extra } => write!(
                f,
                "{field} at offset {at}: {extra} bytes left over inside the opaque"
            ),
            ErrorKind::TooLong { length, max } => write!(
                f,
                "{field} at offset {at}: length {length} exceeds the maximum {max}"
            ),
            ErrorKind::Invalid { reason } => write!(f, "{field} at offset {at}: {reason}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// An encode failure: the caller's buffer is too small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EncodeError {
    /// Bytes the encoding needed up to and including the field that did not fit.
    pub needed: usize,
    /// Bytes the buffer has.
    pub available: usize,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buffer too small: needs at least {} bytes, has {}", self.needed, self.available)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}
