//! The commands `main` dispatches, one module each. A command imports the services (the
//! crate's other modules) and never another command: what two commands share is a service.

pub mod bench_null;
pub mod bench_read;
pub mod decode;
pub mod export_tree;
pub mod fuzz;
pub mod fuzz_panic;
pub mod list;
pub mod matrix;
pub mod profile;
pub mod replay;
pub mod report;
pub mod run;
pub mod serve;
pub mod vectors;
