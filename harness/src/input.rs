//! Reading the bytes to decode: a hex argument, a file, or standard input.
//! Text made only of hex digits, whitespace, `:` and `|` (after dropping `#` comments) is
//! read as hex; so is the harness's own hex dump (an offset column, two spaces, the bytes);
//! a `.vec` golden-vector file contributes its bytes and its `kind:`, `profile:` and `role:`;
//! anything else is taken as raw bytes.
//!
//! Input is bounded: at most [`MAX_INPUT`] bytes are read, and the message is at most
//! [`MAX_MESSAGE`] bytes, so memory stays proportional to a real message whatever is fed in.

use std::fmt;
use std::io::Read;

/// The most input read (file, standard input or argument): 1 MiB.
pub const MAX_INPUT: usize = 1 << 20;
/// The largest message decoded: 256 KiB, the largest inline message RFC 8797 private data
/// can advertise (a transport header alone is at most a few KiB).
pub const MAX_MESSAGE: usize = 256 << 10;

#[derive(Debug, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses hex text, ignoring whitespace, `:`, `|`, a leading `0x` and `#` comments.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, InputError> {
    let mut digits = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        for word in line.split(|c: char| c.is_whitespace() || c == ':' || c == '|') {
            let word = word.strip_prefix("0x").unwrap_or(word);
            if let Some(bad) = word.chars().find(|c| !c.is_ascii_hexdigit()) {
                return Err(InputError(format!("not hex: {bad:?} in {word:?}")));
            }
            digits.push_str(word);
        }
    }
    if digits.len() % 2 != 0 {
        return Err(InputError(format!("odd number of hex digits ({})", digits.len())));
    }
    Ok((0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap()).collect())
}

/// Reads `r` to its end if that is at most `limit` bytes, reading no further than one byte
/// past it: None for a longer (or endless) input.
pub fn read_at_most(r: impl Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    r.take(limit + 1).read_to_end(&mut buf)?;
    Ok((buf.len() as u64 <= limit).then_some(buf))
}

/// Reads at most [`MAX_INPUT`] bytes from `r`; more is an error that says why.
pub fn read_bounded(r: impl Read, what: &str) -> Result<Vec<u8>, InputError> {
    read_at_most(r, MAX_INPUT as u64).map_err(|e| InputError(format!("{what}: {e}")))?.ok_or_else(|| too_large(what))
}

fn too_large(what: &str) -> InputError {
    InputError(format!(
        "{what}: more than {} KiB of input; a transport header is at most a few KiB and an inline \
         message at most {} KiB (RFC 8797), so this cannot be one message",
        MAX_INPUT >> 10,
        MAX_MESSAGE >> 10
    ))
}

/// The most read of a file that is not a message: a profile, a report, a reproducer, a
/// console log. Each is text the harness wrote or a person reviewed; `--expect /dev/urandom`
/// must end in an error, not in an allocation as large as the machine.
pub const MAX_PROFILE: u64 = 4 << 20;
pub const MAX_REPORT: u64 = 256 << 20;
pub const MAX_REPRODUCER: u64 = 64 << 20;
pub const MAX_CONSOLE: u64 = 256 << 20;

/// Reads a text file of at most `limit` bytes: a longer one (or an endless one, a device) is
/// an error naming the file and the limit, read no further than the limit; invalid UTF-8 is
/// an error too.
pub fn read_text(path: &std::path::Path, what: &str, limit: u64) -> Result<String, String> {
    // A FIFO or a device may block in open or read: the first signal ends the wait.
    let p = path.to_path_buf();
    let read = crate::signals::interruptible(move || std::fs::File::open(&p).and_then(|f| read_at_most(f, limit)))
        .unwrap_or_else(|| {
            Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted by a signal while reading"))
        });
    let buf = read.map_err(|e| format!("{what} {}: {e}", path.display()))?.ok_or_else(|| {
        format!(
            "{what} {}: longer than {} MiB; not a {what} this harness reads (is it the right file?)",
            path.display(),
            limit >> 20
        )
    })?;
    String::from_utf8(buf).map_err(|e| format!("{what} {}: not UTF-8 text ({e})", path.display()))
}

/// Refuses a message larger than [`MAX_MESSAGE`].
pub fn check_size(bytes: Vec<u8>) -> Result<Vec<u8>, InputError> {
    if bytes.len() > MAX_MESSAGE {
        return Err(InputError(format!(
            "the message is {} bytes; the largest inline message is {} KiB (RFC 8797)",
            bytes.len(),
            MAX_MESSAGE >> 10
        )));
    }
    Ok(bytes)
}

/// The bytes of a hex dump as the harness prints it (`0000  00000001 00000001 ...`, 16
/// bytes a line, each line's offset the count of bytes before it), or None when `text` is not
/// one. Lines of `... N bytes in all` are skipped.
pub fn parse_dump(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut lines = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || (line.starts_with("...") && line.ends_with("bytes in all")) {
            continue;
        }
        let (offset, rest) = line.split_once("  ")?;
        if offset.len() < 4 || !offset.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        if usize::from_str_radix(offset, 16).ok()? != bytes.len() {
            return None;
        }
        let b = parse_hex(rest).ok()?;
        if b.is_empty() || b.len() > 16 {
            return None;
        }
        bytes.extend(b);
        lines += 1;
    }
    (lines > 0).then_some(bytes)
}

/// What a `.vec` golden-vector file says about its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VectorMeta {
    pub kind: Option<String>,
    pub profile: Vec<String>,
    pub role: Option<String>,
}

/// Interprets file or stdin contents: a `.vec` file's hex (with its kind, profile and role),
/// a hex dump, hex text, or raw bytes.
pub fn from_contents_meta(raw: Vec<u8>) -> Result<(Vec<u8>, Option<VectorMeta>), InputError> {
    let Ok(text) = std::str::from_utf8(&raw) else { return Ok((check_size(raw)?, None)) };
    if let Some(i) = text.find("\nhex:").map(|i| i + 1).or_else(|| text.starts_with("hex:").then_some(0)) {
        let meta = match rpcrdma_vectors::Vector::parse(text) {
            Ok(v) => VectorMeta { kind: Some(v.kind), profile: v.profile, role: v.role },
            // Not a whole vector (a `hex:` block alone): its bytes, nothing else.
            Err(_) => VectorMeta::default(),
        };
        return Ok((check_size(parse_hex(&text[i + 4..])?)?, Some(meta)));
    }
    if let Some(b) = parse_dump(text) {
        return Ok((check_size(b)?, None));
    }
    match parse_hex(text) {
        Ok(b) if !b.is_empty() => Ok((check_size(b)?, None)),
        _ => Ok((check_size(raw)?, None)),
    }
}

/// Interprets file or stdin contents: a `.vec` file's hex, a hex dump, hex text, or raw bytes.
pub fn from_contents(raw: Vec<u8>) -> Result<Vec<u8>, InputError> {
    from_contents_meta(raw).map(|(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_forms() {
        assert_eq!(parse_hex("0x0001 | ff:0a # note\n 10").unwrap(), vec![0, 1, 0xff, 0x0a, 0x10]);
        assert!(parse_hex("abc").is_err());
        assert!(parse_hex("zz").is_err());
    }

    #[test]
    fn vec_files_and_raw_bytes() {
        let vec_file = b"name: x\nkind: header\nhex:\n0000 0001\n".to_vec();
        assert_eq!(from_contents(vec_file).unwrap(), vec![0, 0, 0, 1]);
        let raw = vec![0u8, 0, 0, 1, 0xff];
        assert_eq!(from_contents(raw.clone()).unwrap(), raw);
        assert_eq!(from_contents(b"  \n".to_vec()).unwrap(), b"  \n".to_vec());
    }

    #[test]
    fn hex_dumps_with_an_offset_column() {
        let dump = "    0000  00000001 00000002 00000003 00000004\n    0010  0a0b\n";
        assert_eq!(
            from_contents(dump.as_bytes().to_vec()).unwrap(),
            [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 10, 11]
        );
        // An offset that does not count the bytes before it: not a dump.
        assert_eq!(parse_dump("0000  00000001\n0020  00000002\n"), None);
        assert_eq!(parse_dump("00000001 00000002\n"), None);
    }

    #[test]
    fn bounded() {
        assert!(read_bounded(std::io::repeat(0).take(MAX_INPUT as u64), "x").is_ok());
        let e = read_bounded(std::io::repeat(0), "stdin").unwrap_err();
        assert!(e.0.contains("stdin") && e.0.contains("1024 KiB"), "{e}");
        assert!(check_size(vec![0; MAX_MESSAGE]).is_ok());
        assert!(check_size(vec![0; MAX_MESSAGE + 1]).is_err());
    }
}
