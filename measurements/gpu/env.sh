# What every GPU-machine script needs first, sourced from the checkout's root by run.sh and
# learn.sh. Unpacks what pack.sh packed. Expects SELF_TEST (1: the host emulator, no GPU), ENV_LOG and a `log` function; sets
# NODE (the carried node binary, unpacked: the GPU machine has none; node in a self-test), PY (the Python with
# PyTorch), ADDON (the addon to load), SOCIALWORLD_CUBLAS (found in PyTorch's wheels or the
# toolkit), STATUS and PROBE_RC (the addon's cuda(), and whether the device is available). Where
# the carried addon's kernels were not compiled for the GPU found, it recompiles the CUDA units
# for it with nvcc and relinks the addon from the carried objects.

# What pack.sh packed (dist/, native/build/, .device/node_modules and data), unpacked in place in a
# checkout without a build (a self-test's copy of the working tree); a built checkout keeps its own.
# On the GPU machine always: a warm machine keeps the last call's build, but the carried .device
# replaces the one unpacked there, node_modules and data with it.
if [ -f .device/pack.tar.xz ] && { [ "$SELF_TEST" = 0 ] || [ ! -f native/build/Release/socialworld_native.node ]; }; then
  if command -v xz >/dev/null; then tar -xJf .device/pack.tar.xz; else python3 -c 'import tarfile; tarfile.open(".device/pack.tar.xz", "r:xz").extractall(".")'; fi \
    && log "unpacked .device/pack.tar.xz" || log "could not unpack .device/pack.tar.xz"
fi
# The carried node on the GPU machine (it has none), this machine's in a self-test.
NODE=node
if [ "$SELF_TEST" = 0 ] && [ -f .device/node.xz ]; then
  NODE=/tmp/socialworld-node
  if [ ! -x "$NODE" ]; then
    if command -v xz >/dev/null; then xz -dc .device/node.xz >"$NODE"; else python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(".device/node.xz").read())' >"$NODE"; fi
    chmod +x "$NODE"
  fi
fi
log "node: $("$NODE" --version 2>&1)"

PY=python3
[ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
if [ "$SELF_TEST" = 1 ]; then
  ADDON=native/build/Release/socialworld_native_emulated.node
  [ -f "$ADDON" ] || "$NODE" native/build.mjs --emulator >>"$ENV_LOG" 2>&1
else
  ADDON=native/build/Release/socialworld_native.node
  (nvidia-smi; nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,power.limit --format=csv; head -2 /etc/os-release; ldd --version | head -1) >>"$ENV_LOG" 2>&1
  if [ -z "${SOCIALWORLD_CUBLAS:-}" ]; then
    SOCIALWORLD_CUBLAS=$("$PY" - <<'PYEOF' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
found = [f for r in roots for sub in ("nvidia/cu13/lib", "nvidia/cublas/lib", "nvidia/cu12/lib") for f in sorted(glob.glob(os.path.join(r, sub, "libcublas.so.*")))]
print(found[0] if found else "")
PYEOF
    )
    for f in /usr/local/cuda/lib64/libcublas.so.13 /usr/local/cuda-13*/lib64/libcublas.so.13; do
      [ -z "$SOCIALWORLD_CUBLAS" ] && [ -f "$f" ] && SOCIALWORLD_CUBLAS=$f
    done
    [ -z "$SOCIALWORLD_CUBLAS" ] && SOCIALWORLD_CUBLAS=$(find /usr /opt -name 'libcublas.so.*' 2>/dev/null | head -1)
    export SOCIALWORLD_CUBLAS
  fi
  log "cuBLAS: ${SOCIALWORLD_CUBLAS:-not found}"
fi

# Prints the addon's cuda() and succeeds when the device is available.
probe() { "$NODE" -e 'const s = require(require("path").resolve(process.argv[1])).cuda(); console.log(JSON.stringify(s)); process.exit(s.available ? 0 : 1)' "$ADDON" 2>&1; }
STATUS=$(probe)
PROBE_RC=$?
log "cuda: $STATUS"
if [ "$PROBE_RC" -ne 0 ] && [ "$SELF_TEST" = 0 ] && [[ "$STATUS" == *"cannot run this build's kernels"* ]]; then
  # The GPU is not one the kernels were compiled for: recompile the CUDA units for it with nvcc
  # and relink the addon from the carried objects. (No GPU, no driver or no cuBLAS: nothing to do.)
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  CUDA_HOME_=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
  log "the carried addon does not run here; recompiling the CUDA units for sm_${ARCH:-90} with $NVCC"
  mkdir -p /tmp/sw-cuda
  for u in cuda_backend.cu attention.cu cublas.cpp; do
    "$NVCC" -O3 -std=c++17 -Xcompiler -fPIC -Xcompiler -fexceptions -gencode "arch=compute_${ARCH:-90},code=sm_${ARCH:-90}" \
      -DSW_CUDA_ARCHS="\"sm_${ARCH:-90}\"" -c "native/src/kernels/cuda/$u" -o "/tmp/sw-cuda/${u%.*}.o" >>"$ENV_LOG" 2>&1 &
  done
  wait
  OBJS=$(find native/build/Release/obj.target/socialworld_native -name '*.o' | grep -v cuda_absent)
  g++ -shared -pthread -rdynamic -m64 -o native/build/Release/socialworld_native.node $OBJS /tmp/sw-cuda/*.o \
    "$CUDA_HOME_/lib64/libcudart_static.a" -ldl -lrt -lpthread >>"$ENV_LOG" 2>&1
  STATUS=$(probe)
  PROBE_RC=$?
  log "cuda after the rebuild: $STATUS"
fi
