//! Repeats one operation on one representative message N times; benches/icount runs this
//! under `valgrind --tool=callgrind` with N = 0 and N = 10000 and divides the difference by N.
//!
//! ```text
//! icount-driver list                   # FORM OP pairs, one a line
//! icount-driver verify VECTORS_DIR     # every message against the golden vectors
//! icount-driver run FORM OP N          # the measured loop
//! ```
//!
//! Everything that is not the operation (argument parsing, building the message, decoding
//! it once for `check` and `reencode`) happens before the loop, the same for N = 0 and N;
//! inside the loop there is only the operation, with `black_box` on its inputs and result:
//! no I/O, no environment reads, no allocation.

use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;

#[path = "../../../codec/benches/messages.rs"]
mod messages;

use messages::*;

/// The operations measured for each kind of form.
const V1_OPS: &[&str] = &[
    "decode",
    "check",
    "decode-check",
    "encode",
    "reencode",
    "copy",
    "empty",
];
const PD_OPS: &[&str] = &["decode", "decode-check", "encode", "copy", "empty"];

fn ops(form: &str) -> Vec<&'static str> {
    let mut v: Vec<&str> = if form == "cm-private-data" {
        PD_OPS.to_vec()
    } else {
        V1_OPS.to_vec()
    };
    if cfg!(feature = "oracle") && oracle_supports(form) {
        v.push("oracle-decode");
    }
    v
}

#[inline(always)]
fn repeat<T>(n: u64, mut f: impl FnMut() -> T) {
    for _ in 0..n {
        black_box(f());
    }
}

fn run(form: &str, op: &str, n: u64) -> Result<(), String> {
    let b = bytes(form);
    let p = profile();
    let role = role(form);
    let mut out = vec![0u8; b.len()];
    let known = ops(form).contains(&op);
    if !known {
        return Err(format!(
            "no op {op} for {form} (have: {})",
            ops(form).join(" ")
        ));
    }
    match (form, op) {
        (_, "empty") => repeat(n, || black_box(&b).len()),
        (_, "copy") => repeat(n, || copy(black_box(&b), black_box(&mut out))),
        (_, "oracle-decode") => oracle_run(form, &b, n)?,
        ("cm-private-data", "decode") => repeat(n, || pd_find(black_box(&b), black_box(&p))),
        ("cm-private-data", "decode-check") => {
            repeat(n, || pd_effective(black_box(&b), black_box(&p)))
        }
        ("cm-private-data", "encode") => {
            let v = cm_private_data::value();
            repeat(n, || pd_encode(black_box(&v), black_box(&mut out)))
        }
        ("v2-initxch" | "v2-xmtreq", _) => {
            let m = v2_decode(&b, &p).map_err(|e| e.to_string())?;
            let h = if form == "v2-initxch" {
                v2_initxch::builder(&p)
            } else {
                v2_xmtreq::builder(&p)
            };
            match op {
                "decode" => repeat(n, || v2_decode(black_box(&b), black_box(&p))),
                "check" => repeat(n, || v2_check(black_box(&m), black_box(role))),
                "decode-check" => repeat(n, || {
                    v2_decode_check(black_box(&b), black_box(&p), black_box(role))
                }),
                "encode" => repeat(n, || v2_encode(black_box(&h), black_box(&mut out))),
                "reencode" => repeat(n, || v2_reencode(black_box(&m.header), black_box(&mut out))),
                _ => unreachable!(),
            }
        }
        _ => {
            let m = v1_decode(&b, &p).map_err(|e| e.to_string())?;
            let h = match form {
                "msg-null" => msg_null::builder(),
                "msg-read-write2" => msg_read_write2::builder(),
                "nomsg-reply" => nomsg_reply::builder(),
                "err-vers" => err_vers::builder(),
                other => return Err(format!("unknown form {other}")),
            };
            match op {
                "decode" => repeat(n, || v1_decode(black_box(&b), black_box(&p))),
                "check" => repeat(n, || v1_check(black_box(&m), black_box(role))),
                "decode-check" => repeat(n, || {
                    v1_decode_check(black_box(&b), black_box(&p), black_box(role))
                }),
                "encode" => repeat(n, || v1_encode(black_box(&h), black_box(&mut out))),
                "reencode" => repeat(n, || v1_reencode(black_box(&m.header), black_box(&mut out))),
                _ => unreachable!(),
            }
        }
    }
    Ok(())
}

#[cfg(not(feature = "oracle"))]
fn oracle_supports(_form: &str) -> bool {
    false
}

#[cfg(not(feature = "oracle"))]
fn oracle_run(_form: &str, _b: &[u8], _n: u64) -> Result<(), String> {
    Err("built without the oracle feature".into())
}

/// The oracle's side (`src/oracle_ops.rs`, written against the oracle's API once it exists):
/// `oracle_supports(form)`, `oracle_run(form, bytes, n)` and `verify()`.
#[cfg(feature = "oracle")]
mod oracle_ops {
    include!("oracle_ops.rs");
}
#[cfg(feature = "oracle")]
use oracle_ops::{oracle_run, oracle_supports};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["list"] => {
            for (form, _) in FORMS {
                for op in ops(form) {
                    println!("{form} {op}");
                }
            }
        }
        ["forms"] => {
            for (form, what) in FORMS {
                println!("{form}\t{}\t{what}", bytes(form).len());
            }
        }
        ["verify", dir] => {
            for line in verify(Path::new(dir)) {
                println!("golden: {line}");
            }
            #[cfg(feature = "oracle")]
            for line in oracle_ops::verify() {
                println!("oracle: {line}");
            }
        }
        ["run", form, op, n] => {
            let Ok(n) = n.parse::<u64>() else {
                eprintln!("N must be a number, not {n}");
                return ExitCode::from(2);
            };
            if let Err(e) = run(form, op, n) {
                eprintln!("icount-driver: {e}");
                return ExitCode::from(2);
            }
        }
        _ => {
            eprintln!("usage: icount-driver list | forms | verify VECTORS_DIR | run FORM OP N");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
