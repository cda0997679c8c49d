#!/usr/bin/env bash
# Draft OSS-Fuzz build script: the repository's own ClusterFuzzLite build (one script for both,
# so the two cannot drift): the codec's cargo-fuzz targets and their seed corpora into $OUT.
set -euo pipefail
cd "$SRC/rpcrdma-conformance"
exec .clusterfuzzlite/build.sh
