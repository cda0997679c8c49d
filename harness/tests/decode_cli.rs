//! `rpcrdma-harness decode` end to end: exit codes, JSON field names, errors.

use serde_json::Value;

mod common;
use common::harness;

/// RFC 8166 4.7: RDMA_MSG, xid 0x2a, credit 16, a Reply chunk "1 2 HLOO HLOO", then an NFSv3
/// NULL call (RFC 5531 9) with the same xid.
const MSG_WITH_REPLY_CHUNK: &str = "0000002a 00000001 00000010 00000000
    00000000 00000000
    00000001 00000002
    00000101 00001000 00000000 10000000
    00000102 00000800 00000000 20000000
    0000002a 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000 00000000";

#[test]
fn json_uses_the_xdr_field_names() {
    let out = harness().args(["decode", "--json", MSG_WITH_REPLY_CHUNK]).assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["rdma_xid"], 42);
    assert_eq!(v["rdma_vers"], 1);
    assert_eq!(v["rdma_credit"], 16);
    assert_eq!(v["rdma_proc"], "RDMA_MSG");
    assert_eq!(v["rdma_reads"].as_array().unwrap().len(), 0);
    assert_eq!(v["rdma_writes"].as_array().unwrap().len(), 0);
    let reply = v["rdma_reply"]["target"].as_array().unwrap();
    assert_eq!(reply.len(), 2);
    assert_eq!(reply[0]["handle"], 0x101);
    assert_eq!(reply[1]["length"], 2048);
    assert_eq!(reply[1]["offset"], 0x2000_0000u64);
    // 16 fixed + empty read list 4 + empty write list 4 + reply chunk (4 + 4 + 2 * 16) = 64
    assert_eq!(v["payload_offset"], 64);
    assert_eq!(v["rpc"]["xid"], 42);
    assert_eq!(v["rpc"]["mtype"], "CALL");
    assert_eq!(v["rpc"]["prog"], 100003);
}

#[test]
fn role_adds_violations() {
    // An RDMA_NOMSG call with no chunks at all (RFC 8166 4.2.4: one MUST be present).
    let out = harness()
        .args(["decode", "--json", "--role", "call", "00000001 00000001 00000001 00000001 00000000 00000000 00000000"])
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let ids: Vec<&str> = v["violations"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["rfc8166/4.2.4/nomsg-without-chunks"]);
    assert_eq!(v["violations"][0]["key_word"], "MUST");
}

#[test]
fn malformed_input_exits_1_with_the_typed_error() {
    // The read-list discriminator at offset 16 is 7, not an XDR bool.
    let out = harness().args(["decode", "--json", "00000001 00000001 00000001 00000000 00000007"]).assert().code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["error"]["kind"], "not-bool");
    assert_eq!(v["error"]["field"], "rdma_reads");
    assert_eq!(v["error"]["offset"], 16);

    let out = harness().args(["decode", "00000001 00000001"]).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("truncated rdma_credit at offset 8"), "{err}");
}

#[test]
fn text_output_and_stdin() {
    let out = harness()
        .args(["decode", "-"])
        .write_stdin("# ERR_VERS reply\n00000005 00000001 00000001 00000004\n00000001 00000001 00000001\n")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("rdma_proc: RDMA_ERROR"), "{text}");
    assert!(text.contains("rdma_err: ERR_VERS"), "{text}");
    assert!(text.contains("rdma_vers_high: 1"), "{text}");
}

#[test]
fn rpc_kind_and_usage_errors() {
    // MSG_DENIED / RPC_MISMATCH low 2 high 2.
    let out = harness()
        .args(["decode", "--json", "--kind", "rpc", "00000009 00000001 00000001 00000000 00000002 00000002"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["reply_stat"], "MSG_DENIED");
    assert_eq!(v["reject_stat"], "RPC_MISMATCH");
    assert_eq!(v["mismatch_info"]["high"], 2);

    harness().args(["decode"]).assert().code(2);
    harness().args(["decode", "xyz"]).assert().code(2);
    harness().args(["decode", "--profile", "nonsense", "00"]).assert().code(2);
}

#[test]
fn rfc5666_profile_decodes_the_extra_arm() {
    let mut hex = String::from("00000001 00000001 00000001 00000004 00000009");
    hex.push_str(&" 00000000".repeat(8));
    harness().args(["decode", &hex]).assert().code(1);
    harness().args(["decode", "--profile", "rfc5666-error-arm", &hex]).assert().success();
}

#[test]
fn private_data_kind() {
    // RFC 8797 4 (wire notes 3.1 example): 4 KiB both ways, R set, zero-padded by the CM.
    let mut hex = String::from("f6ab0e18 01 01 03 03");
    hex.push_str(&" 00".repeat(48));
    let out = harness().args(["decode", "--json", "--kind", "private-data", &hex]).assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["pd.status"], "ok");
    assert_eq!(v["pd.found_at"], 0);
    assert_eq!(v["pd.send_size"], 4096);
    assert_eq!(v["pd.receive_size"], 4096);
    assert_eq!(v["pd.remote_invalidation"], true);
}

#[test]
fn version_two_is_detected_from_rdma_vers() {
    // draft-cel-nfsv4-rpcrdma-version-two-01: RDMA2_OPTIONAL (5), rdma_optdir CALL,
    // rdma_opttype 42 (unknown), empty rdma_optinfo.
    let out = harness()
        .args(["decode", "--json", "00000009 00000002 00000001 00000005 00000000 0000002a 00000000"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["rdma_vers"], 2);
    assert_eq!(v["rdma_proc"], "RDMA2_OPTIONAL");
    assert_eq!(v["rdma_optdir"], "CALL");
    assert_eq!(v["rdma_opttype"], 42);
}
