//! The text the subcommands print: where it goes (standard output, or standard error when a
//! report takes standard output), whether it is coloured, which marks it uses, and what
//! happens when it cannot be written.
//!
//! A reader that goes away (`| head -1`, EPIPE) is not an error: the text after it is dropped
//! quietly and the subcommand finishes its work (reports are still written). Any other write
//! error (a full disk, `> /dev/full`) is remembered and turns the exit status into 2 at the
//! end, with one line on standard error saying why.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;

/// When to colour the text (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when the text goes to a terminal, `NO_COLOR` is unset or empty, and `TERM` is not `dumb`.
    #[default]
    Auto,
    /// Always colour (ANSI escapes), even into a file or a pipe.
    Always,
    /// Never colour, and use ASCII marks only.
    Never,
}

static TEXT_TO_STDERR: AtomicBool = AtomicBool::new(false);
static COLOR: AtomicBool = AtomicBool::new(false);
static ASCII: AtomicBool = AtomicBool::new(false);
/// 0: fine; 1: the reader went away (EPIPE); 2: another error (kept in ERROR).
static STATE: AtomicU8 = AtomicU8::new(0);
static ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Sends the text to standard error from now on (a report is taking standard output).
pub fn text_to_stderr(yes: bool) {
    TEXT_TO_STDERR.store(yes, Ordering::SeqCst);
}

/// Whether the locale names UTF-8: the first non-empty of `LC_ALL`, `LC_CTYPE`, `LANG`
/// decides; when none is set the marks are UTF-8 (CI logs and terminals today are).
pub fn locale_is_utf8(get: impl Fn(&str) -> Option<String>) -> bool {
    for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = get(var).filter(|v| !v.is_empty()) {
            let v = v.to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8");
        }
    }
    true
}

/// Decides colour and marks for `choice`, given whether the text goes to a terminal and the
/// environment: (colour, ASCII marks).
pub fn decide(choice: ColorChoice, terminal: bool, get: impl Fn(&str) -> Option<String>) -> (bool, bool) {
    let no_color = get("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = get("TERM").is_some_and(|t| t == "dumb");
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && !no_color && !dumb,
    };
    let ascii = choice == ColorChoice::Never || !locale_is_utf8(&get);
    (color, ascii)
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Sets colour and marks for this process from `--color` and the environment; call again
/// (with [`reconfigure`]) after the text moved to standard error.
pub fn configure(choice: ColorChoice) {
    CHOICE.store(choice as u8, Ordering::SeqCst);
    reconfigure();
}

/// Decides colour and marks again, for the stream the text now goes to.
pub fn reconfigure() {
    let choice = match CHOICE.load(Ordering::SeqCst) {
        1 => ColorChoice::Always,
        2 => ColorChoice::Never,
        _ => ColorChoice::Auto,
    };
    let terminal = if TEXT_TO_STDERR.load(Ordering::SeqCst) {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    };
    let (color, ascii) = decide(choice, terminal, |k| std::env::var(k).ok());
    COLOR.store(color, Ordering::SeqCst);
    ASCII.store(ascii, Ordering::SeqCst);
}

pub fn color() -> bool {
    COLOR.load(Ordering::SeqCst)
}

pub fn ascii() -> bool {
    ASCII.load(Ordering::SeqCst)
}

/// `text` in the ANSI colour `code` (e.g. "32" green) when colouring.
pub fn paint(text: &str, code: &str) -> String {
    if color() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn record(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        let _ = STATE.compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst);
    } else if STATE.swap(2, Ordering::SeqCst) != 2 {
        *ERROR.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
    }
}

/// Writes `s` to standard output, unless an earlier write failed.
pub fn stdout_str(s: &str) {
    if STATE.load(Ordering::SeqCst) != 0 {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        record(&e);
    }
}

/// Writes `s` where the text goes (standard output, or standard error under `--json -`).
pub fn text_str(s: &str) {
    if TEXT_TO_STDERR.load(Ordering::SeqCst) {
        let _ = std::io::stderr().write_all(s.as_bytes());
    } else {
        stdout_str(s);
    }
}

/// Flushes standard output; the write error to report, if any (EPIPE is none).
pub fn finish() -> Option<String> {
    if STATE.load(Ordering::SeqCst) == 0 {
        if let Err(e) = std::io::stdout().flush() {
            record(&e);
        }
    }
    match STATE.load(Ordering::SeqCst) {
        2 => ERROR.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        _ => None,
    }
}

/// Writes a line of text (see [`text_str`]).
#[macro_export]
macro_rules! textln {
    () => { $crate::output::text_str("\n") };
    ($($arg:tt)*) => { $crate::output::text_str(&format!("{}\n", format_args!($($arg)*))) };
}

/// Writes a line to standard output (see [`stdout_str`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::output::stdout_str("\n") };
    ($($arg:tt)*) => { $crate::output::stdout_str(&format!("{}\n", format_args!($($arg)*))) };
}

/// Writes to standard error, ignoring errors (a closed or broken standard error must not turn
/// into a panic, as `eprintln!` does).
pub fn stderr_str(s: &str) {
    let _ = std::io::stderr().write_all(s.as_bytes());
}

/// A line on standard error (see [`stderr_str`]).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::stderr_str(&format!("{}\n", format_args!($($arg)*))) };
}

/// Text on standard error without a newline (see [`stderr_str`]).
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => { $crate::output::stderr_str(&format!($($arg)*)) };
}

/// `n thing` or `n things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn colour_rule() {
        assert_eq!(decide(ColorChoice::Auto, true, env(&[])), (true, false));
        assert_eq!(decide(ColorChoice::Auto, false, env(&[])), (false, false));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("NO_COLOR", "1")])), (false, false));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("NO_COLOR", "")])), (true, false));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("TERM", "dumb")])), (false, false));
        assert_eq!(decide(ColorChoice::Always, false, env(&[("NO_COLOR", "1")])), (true, false));
        assert_eq!(decide(ColorChoice::Never, true, env(&[])), (false, true));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("LANG", "C")])), (true, true));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("LC_ALL", "en_US.UTF-8"), ("LANG", "C")])), (true, false));
        assert_eq!(decide(ColorChoice::Auto, true, env(&[("LC_ALL", ""), ("LANG", "de_DE.utf8")])), (true, false));
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "check", "checks"), "1 check");
        assert_eq!(plural(0, "check", "checks"), "0 checks");
        assert_eq!(plural(2, "connection", "connections"), "2 connections");
    }
}
