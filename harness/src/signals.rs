//! SIGINT and SIGTERM: the first one asks every subcommand to stop after its current step
//! (the current check, the current connection) and still write its reports; a second one
//! aborts at once. Either way the exit status says the work did not complete: 130 for
//! SIGINT, 143 for SIGTERM (128 + the signal number, as shells report it).
//!
//! The harness crate's only `unsafe` code: installing the handlers, and the two
//! async-signal-safe calls of the second signal.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the first signal; what `run_checks` and the serve loop poll.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst).is_err() {
        // The second signal: abort now. Only async-signal-safe calls here.
        const MSG: &[u8] = b"\naborted\n";
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(128 + sig);
        }
    }
    INTERRUPT.store(true, Ordering::SeqCst);
    let msg: &[u8] = if sig == libc::SIGINT {
        b"\nstopping after the current check; press Ctrl-C again to abort\n"
    } else {
        b"\nterminated: stopping after the current check; signal again to abort\n"
    };
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
}

/// Installs the handlers for SIGINT and SIGTERM.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that interrupted the work, if one did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit status for an interrupted run: 128 + the signal number (130, 143).
pub fn exit_code() -> Option<i32> {
    received().map(|s| 128 + s)
}

/// Set when a signal ended a blocking read ([`interruptible`]).
static INPUT_CUT: AtomicBool = AtomicBool::new(false);

/// Whether a signal ended a blocking read: the error that followed is the signal's doing,
/// so the exit status is the signal's (143), not the error's.
pub fn input_cut() -> bool {
    INPUT_CUT.load(Ordering::SeqCst)
}

/// Runs `f`, a read that may block for ever (a FIFO with no writer blocks in open(2), a
/// terminal in read(2)), on a thread of its own, and waits for it a tenth of a second at a
/// time: the first signal ends the wait (None), where the handler alone could not, as
/// SA_RESTART restarts a blocked read in place. The blocked thread goes with the process.
pub fn interruptible<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(v) => return Some(v),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if INTERRUPT.load(Ordering::SeqCst) => {
                INPUT_CUT.store(true, Ordering::SeqCst);
                return None;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}
