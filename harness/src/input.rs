//! Reading the bytes to decode: a hex argument, a file, or standard input.
//! Text made only of hex digits, whitespace, `:` and `|` (after dropping `#` comments) is
//! read as hex; a `.vec` golden-vector file contributes the lines after its `hex:` key;
//! anything else is taken as raw bytes.

use std::fmt;

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

/// Interprets file or stdin contents: a `.vec` file's hex, hex text, or raw bytes.
pub fn from_contents(raw: Vec<u8>) -> Result<Vec<u8>, InputError> {
    let Ok(text) = std::str::from_utf8(&raw) else { return Ok(raw) };
    if let Some(i) = text.find("\nhex:").map(|i| i + 1).or_else(|| text.starts_with("hex:").then_some(0)) {
        return parse_hex(&text[i + 4..]);
    }
    match parse_hex(text) {
        Ok(b) if !b.is_empty() => Ok(b),
        _ => Ok(raw),
    }
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
}
