#!/usr/bin/env bash
# Builds the codec's cargo-fuzz targets for ClusterFuzzLite and OSS-Fuzz, and their seed
# corpora from the golden vectors: each target's binary in $OUT, and $OUT/<target>_seed_corpus.zip.
#
# Run from the repository's root (the Dockerfile's WORKDIR), with the environment those
# builders set: OUT (where the fuzzers go, required), WORK (scratch, default a temporary
# directory), SANITIZER (address, the only one for Rust; coverage builds are handled by
# OSS-Fuzz's cargo wrapper). .ci/fuzz-smoke runs this same script outside Docker, on the stable
# toolchain (RUSTC_BOOTSTRAP=1: the sanitizer flags are unstable).
set -euo pipefail

root=$PWD
[ -f "$root/fuzz/Cargo.toml" ] || { echo "build.sh: run it from the repository's root (no fuzz/Cargo.toml in $root)" >&2; exit 2; }
: "${OUT:?build.sh: set OUT to the directory the fuzzers go to}"
work=${WORK:-$(mktemp -d)}
mkdir -p "$OUT" "$work"
export RUSTC_BOOTSTRAP=${RUSTC_BOOTSTRAP:-1}

# Release mode with debug assertions and overflow checks (cargo-fuzz's default build; `-O`
# alone would drop the assertions): an overflow in the codec is a finding.
sanitizer=${SANITIZER:-address}
case $sanitizer in address|none) ;; *) sanitizer=address ;; esac
(cd "$root/fuzz" && cargo fuzz build -O --debug-assertions --sanitizer "$sanitizer")

target_dir=${CARGO_TARGET_DIR:-$root/fuzz/target}
triple=$(rustc -vV | sed -n 's/^host: //p')
mapfile -t targets < <(cd "$root/fuzz" && cargo fuzz list)
[ ${#targets[@]} -gt 0 ] || { echo "build.sh: cargo fuzz list named no targets" >&2; exit 1; }

# Seeds: every golden vector's bytes, for the targets that decode its kind.
cargo run -q --locked --manifest-path "$root/fuzz/seed-corpora/Cargo.toml" -- "$root/vectors" "$work/seeds" >/dev/null

for t in "${targets[@]}"; do
  bin="$target_dir/$triple/release/$t"
  [ -x "$bin" ] || { echo "build.sh: $bin was not built" >&2; exit 1; }
  cp "$bin" "$OUT/$t"
  rm -f "$OUT/${t}_seed_corpus.zip"
  if [ -d "$work/seeds/$t" ]; then
    (cd "$work/seeds/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
done
echo "build.sh: ${#targets[@]} fuzzers in $OUT: ${targets[*]}"
