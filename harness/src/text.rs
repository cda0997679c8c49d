//! Readable text from a JSON description: one `name: value` line per field, nested
//! objects and arrays indented beneath their name.

use serde_json::Value;

fn scalar(name: &str, v: &Value, in_segment: bool) -> String {
    // XIDs and R_keys read best in hex, and so does a segment's offset (an address).
    let hex = matches!(name, "rdma_xid" | "xid" | "handle") || (in_segment && name == "offset");
    match v {
        Value::Number(n) if hex && n.as_u64().is_some() => format!("{:#x}", n.as_u64().unwrap()),
        Value::String(s) => s.clone(),
        Value::Null => "absent".into(),
        other => other.to_string(),
    }
}

fn walk(name: &str, v: &Value, depth: usize, in_segment: bool, out: &mut String) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            out.push_str(&format!("{pad}{name}:\n"));
            let segment = m.contains_key("handle");
            for (k, x) in m {
                walk(k, x, depth + 1, segment, out);
            }
        }
        Value::Array(a) if a.is_empty() => out.push_str(&format!("{pad}{name}: (empty)\n")),
        Value::Array(a) => {
            out.push_str(&format!("{pad}{name}: {} entries\n", a.len()));
            for (i, x) in a.iter().enumerate() {
                walk(&format!("[{i}]"), x, depth + 1, false, out);
            }
        }
        other => out.push_str(&format!("{pad}{name}: {}\n", scalar(name, other, in_segment))),
    }
}

/// Renders `v` (an object) under the title `title`.
pub fn render(title: &str, v: &Value) -> String {
    let mut out = String::new();
    walk(title, v, 0, false, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_fields_are_indented() {
        let t = render(
            "header",
            &json!({"rdma_xid": 1, "rdma_reply": null, "rdma_reads": [], "rdma_writes": [{"target": [{"handle": 255, "length": 5, "offset": 4096}]}]}),
        );
        assert_eq!(
            t,
            "header:\n  rdma_xid: 0x1\n  rdma_reply: absent\n  rdma_reads: (empty)\n  rdma_writes: 1 entries\n    [0]:\n      target: 1 entries\n        [0]:\n          handle: 0xff\n          length: 5\n          offset: 0x1000\n"
        );
    }
}
