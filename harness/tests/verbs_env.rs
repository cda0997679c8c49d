//! `run --peer` on machines that cannot do verbs: one clear line on stderr and exit 2, both
//! without rdma-core and with rdma-core but no RDMA device.

use assert_cmd::Command;

fn run_peer(envs: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::cargo_bin("rpcrdma-harness").unwrap();
    cmd.args(["run", "--timeout", "1", "--peer", "192.0.2.1"]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn rdma_devices() -> Vec<String> {
    std::fs::read_dir("/sys/class/infiniband")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn without_rdma_core_one_line_and_exit_2() {
    for var in ["RPCRDMA_LIBIBVERBS", "RPCRDMA_LIBRDMACM"] {
        let (code, stdout, stderr) = run_peer(&[(var, "/nonexistent/lib.so.1")]);
        assert_eq!(code, 2, "{var}: stdout {stdout:?} stderr {stderr:?}");
        assert_eq!(stdout, "", "{var}");
        assert_eq!(stderr.lines().count(), 1, "{var}: {stderr:?}");
        assert!(stderr.starts_with("error: no RDMA verbs: rdma-core"), "{var}: {stderr:?}");
        assert!(stderr.contains("run without --peer"), "{stderr:?}");
    }
}

#[test]
fn without_rdma_device_one_line_and_exit_2() {
    if !rdma_devices().is_empty() {
        eprintln!("skipped: this machine has RDMA devices {:?}", rdma_devices());
        return;
    }
    let (code, stdout, stderr) = run_peer(&[]);
    assert_eq!(code, 2, "stdout {stdout:?} stderr {stderr:?}");
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    if stderr.starts_with("error: no RDMA verbs:") {
        // This machine has no rdma-core at all: that is the line it must print.
        assert!(stderr.contains("rdma-core"), "{stderr:?}");
    } else {
        assert!(stderr.starts_with("error: no RDMA device: rdma-core found, but /sys/class/infiniband"), "{stderr:?}");
        assert!(stderr.contains("rdma_rxe"), "{stderr:?}");
    }
}
