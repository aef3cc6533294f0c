#!/usr/bin/env bash
# Native build on a GPU machine that may lack some development headers (docs/gpu.md):
# a header missing under /usr/include is taken from $KE_GPU_DEPS/include (filled by
# scripts/gpu_deps.sh on a build machine), linked against the GPU machine's own
# shared libraries (libsqlite3.so.0, libcurl.so.4, libseccomp.so.2 where there is no
# unversioned .so). Builds kernelevolve and the CPU harness (gpu_check.sh then builds
# gpu_tests in the same folder).
# Usage: scripts/gpu_build.sh [BUILD_DIR]      (default: build-gpu); exit 0 when built.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${1:-build-gpu}"
DEPS="$(cd "${KE_GPU_DEPS:-.gpu_deps}" 2>/dev/null && pwd || echo /nonexistent)"
JOBS="${KE_GPU_JOBS:-$(nproc)}"
# The first file matching a library name in the system's library folders.
find_lib() { ls /usr/lib/x86_64-linux-gnu/"$1"* /lib/x86_64-linux-gnu/"$1"* 2>/dev/null | head -1; }
ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
EXTRA_INCLUDE=""
if [ ! -f /usr/include/sqlite3.h ]; then
  ARGS+=(-DSQLite3_INCLUDE_DIR="$DEPS/include" -DSQLite3_LIBRARY="$(find_lib libsqlite3.so)")
fi
if [ ! -f /usr/include/dlpack/dlpack.h ]; then ARGS+=(-DDLPACK_INCLUDE_DIR="$DEPS/include"); fi
if [ ! -f /usr/include/seccomp.h ]; then EXTRA_INCLUDE="-isystem $DEPS/include"; fi
ARGS+=(-DSECCOMP_LIBRARY="$(find_lib libseccomp.so)")
if [ ! -f /usr/include/curl/curl.h ] && [ ! -f /usr/include/x86_64-linux-gnu/curl/curl.h ]; then
  ARGS+=(-DCURL_INCLUDE_DIR="$DEPS/include" -DCURL_LIBRARY="$(find_lib libcurl.so)")
fi
# The Redis client: pkg-config's hiredis where present, else the shipped static library.
if ! { command -v pkg-config >/dev/null && pkg-config --exists hiredis; } && [ -f "$DEPS/lib/libhiredis.a" ]; then
  ARGS+=(-DHIREDIS_STATIC_LIBRARY="$DEPS/lib/libhiredis.a")
  EXTRA_INCLUDE="-isystem $DEPS/include"
fi
[ -n "$EXTRA_INCLUDE" ] && ARGS+=(-DCMAKE_CXX_FLAGS="$EXTRA_INCLUDE")
echo "cmake ${ARGS[*]}"
cmake -S . -B "$BUILD" "${ARGS[@]}" || exit 1
cmake --build "$BUILD" -j "$JOBS" --target kernelevolve kernelevolve-cpu-harness
