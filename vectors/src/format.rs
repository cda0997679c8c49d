//! Parser for the `.vec` golden-vector format (vectors/README.md).

#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    Ok,
    Error { kind: String, field: String, offset: usize },
}

#[derive(Debug, Clone)]
pub struct Vector {
    pub name: String,
    pub kind: String,
    pub profile: Vec<String>,
    pub role: Option<String>,
    pub expect: Expect,
    pub fields: Vec<(String, String)>,
    /// None: the vector says nothing about the semantic check.
    pub violations: Option<Vec<String>>,
    pub bytes: Vec<u8>,
}

fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Values compare as numbers when both sides are numbers (word by word for
/// space-separated lists), otherwise as text.
pub fn same_value(got: &str, want: &str) -> bool {
    let g: Vec<&str> = got.split_whitespace().collect();
    let w: Vec<&str> = want.split_whitespace().collect();
    g.len() == w.len()
        && g.iter().zip(&w).all(|(a, b)| match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        })
}

impl Vector {
    pub fn parse(text: &str) -> Result<Vector, String> {
        let mut v = Vector {
            name: String::new(),
            kind: String::new(),
            profile: Vec::new(),
            role: None,
            expect: Expect::Ok,
            fields: Vec::new(),
            violations: None,
            bytes: Vec::new(),
        };
        let (mut saw_expect, mut in_hex, mut error_line) = (None::<String>, false, None::<String>);
        for line in text.lines() {
            if in_hex {
                if line.trim_start().starts_with('#') {
                    continue;
                }
                let digits: String = line.chars().filter(|c| c.is_ascii_hexdigit()).collect();
                let stray = line.chars().any(|c| !(c.is_ascii_hexdigit() || c.is_whitespace() || c == '|'));
                if stray || digits.len() % 2 != 0 {
                    return Err(format!("bad hex line: {line}"));
                }
                for i in (0..digits.len()).step_by(2) {
                    v.bytes.push(u8::from_str_radix(&digits[i..i + 2], 16).unwrap());
                }
                continue;
            }
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let (key, value) = t.split_once(':').ok_or(format!("not `key: value`: {t}"))?;
            let value = value.trim();
            match key.trim() {
                "name" => v.name = value.into(),
                "spec" | "description" => {}
                "kind" => v.kind = value.into(),
                "profile" => v.profile = value.split(',').map(|s| s.trim().to_string()).collect(),
                "role" => v.role = Some(value.into()),
                "expect" => saw_expect = Some(value.into()),
                "error" => error_line = Some(value.into()),
                "field" => {
                    let (n, val) = value.split_once('=').ok_or(format!("field without =: {t}"))?;
                    v.fields.push((n.trim().into(), val.trim().into()));
                }
                "violation" => v.violations.get_or_insert_with(Vec::new).push(value.into()),
                "violations" if value == "none" => {
                    v.violations.get_or_insert_with(Vec::new);
                }
                "hex" => {
                    in_hex = true;
                    let digits: String = value.chars().filter(|c| c.is_ascii_hexdigit()).collect();
                    for i in (0..digits.len() / 2 * 2).step_by(2) {
                        v.bytes.push(u8::from_str_radix(&digits[i..i + 2], 16).unwrap());
                    }
                }
                other => return Err(format!("unknown key {other}")),
            }
        }
        if v.name.is_empty() || v.kind.is_empty() {
            return Err("name and kind are required".into());
        }
        v.expect = match saw_expect.as_deref() {
            Some("ok") => Expect::Ok,
            Some("error") => {
                let e = error_line.ok_or("expect: error needs an error: line")?;
                let parts: Vec<&str> = e.split_whitespace().collect();
                if parts.len() != 3 {
                    return Err(format!("error line is not `KIND FIELD OFFSET`: {e}"));
                }
                let offset = number(parts[2]).ok_or(format!("bad offset in {e}"))? as usize;
                Expect::Error { kind: parts[0].into(), field: parts[1].into(), offset }
            }
            other => return Err(format!("expect must be ok or error, is {other:?}")),
        };
        if v.violations.is_some() && v.role.is_none() {
            return Err("violation lines need a role".into());
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_readme_example_shape() {
        let v = Vector::parse(
            "name: x\nkind: header\nrole: call\nexpect: error\nerror: truncated rdma_reads 16\nhex:\n00000001 | 00\n01\n",
        )
        .unwrap();
        assert_eq!(v.bytes, vec![0, 0, 0, 1, 0, 1]);
        assert_eq!(v.expect, Expect::Error { kind: "truncated".into(), field: "rdma_reads".into(), offset: 16 });
        assert!(same_value("0x20", "32"));
        assert!(same_value("0 0x1 2", "0 1 0x2"));
        assert!(!same_value("RDMA_MSG", "RDMA_NOMSG"));
    }
}
