#!/usr/bin/env bash
# Run on the build machine (not the GPU machine): fills .gpu_deps/ (git-ignored, never
# committed) with what scripts/gpu_check.sh needs on a GPU machine that lacks some
# development files (docs/gpu.md, "Checking on a GPU machine"):
#   include/  system headers this machine has and the GPU machine may lack (sqlite3.h,
#             curl/, seccomp.h, dlpack/): supplied to a native build there;
#   bin/      stripped kernelevolve and kernelevolve-cpu-harness from BUILD_DIR
#             (default build/), the fallback when the native build fails;
#   lib/      the shared libraries those binaries need beyond glibc and libstdc++;
#             gpu_check.sh links in only the ones the GPU machine lacks; and
#             libhiredis.a, the Redis client for a native build there;
#   redis/    redis-server and its libraries, started by bin/redis-server.
# Usage: scripts/gpu_deps.sh [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
DEPS="$ROOT/.gpu_deps"
rm -rf "$DEPS"
mkdir -p "$DEPS/include" "$DEPS/bin" "$DEPS/lib"
for h in sqlite3.h sqlite3ext.h seccomp.h seccomp-syscalls.h dlpack hiredis; do
  [ -e "/usr/include/$h" ] && cp -r "/usr/include/$h" "$DEPS/include/"
done
curl_dir="$(dirname "$(find /usr/include -path '*/curl/curl.h' | head -1)")"
[ -d "$curl_dir" ] && cp -r "$curl_dir" "$DEPS/include/curl"
for b in kernelevolve kernelevolve-cpu-harness; do
  strip -o "$DEPS/bin/$b" "$BUILD/$b"
done
# Every resolved library except the C runtime and the C++ runtime (newer on the GPU machine).
ldd "$BUILD/kernelevolve" | awk '$3 ~ /^\// {print $3}' |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libresolv)\.so' |
  while read -r lib; do cp -L "$lib" "$DEPS/lib/"; done
# The Redis client (`--queue`, `kernelevolve worker`) as a static library: no runtime
# dependency on the GPU machine (gpu_build.sh passes it as HIREDIS_STATIC_LIBRARY).
hiredis_a="$(ls /usr/lib/x86_64-linux-gnu/libhiredis.a 2>/dev/null | head -1)"
[ -n "$hiredis_a" ] && cp "$hiredis_a" "$DEPS/lib/"
# redis-server for the queue tests (tests/scale, issue 22) where the GPU machine has none:
# the binary and its libraries beyond the C runtime under redis/, started by a wrapper in
# bin/ that points only redis-server at them (put $KE_GPU_DEPS/bin on PATH there).
if command -v redis-server >/dev/null 2>&1; then
  mkdir -p "$DEPS/redis/lib"
  cp -L "$(command -v redis-server)" "$DEPS/redis/redis-server"
  ldd "$DEPS/redis/redis-server" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libresolv)\.so' |
    while read -r lib; do cp -L "$lib" "$DEPS/redis/lib/"; done
  cat > "$DEPS/bin/redis-server" <<'WRAPPER'
#!/bin/sh
here="$(cd "$(dirname "$0")/../redis" && pwd)"
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/redis-server" "$@"
WRAPPER
  chmod +x "$DEPS/bin/redis-server"
fi
# The source folder baked into the binaries (KE_SOURCE_DIR: worker/ is found under it).
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" > "$DEPS/source_dir"
du -sh "$DEPS"/*
