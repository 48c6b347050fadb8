#!/bin/bash
# Packs the built `cfp` (build/default) with the shared libraries a bare GPU machine lacks into
# .devrun/ (git-ignored through .git/info/exclude), with a runner that finds the machine's own CUDA
# runtime libraries (cuBLASLt, NCCL). For running the profiler on a lent GPU machine without
# building there (docs/profiler.md, "On a lent GPU machine"):
#
#   bash scripts/gpu_bundle.sh
#   (on the GPU machine, with .devrun carried)  bash .devrun/cfp.sh profile builtin:gpt3-1.3b --hardware h200 --mesh 8 --db out.db
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/default/app/cli/cfp
[ -x "$bin" ] || { echo "gpu_bundle: build first ($bin is missing)" >&2; exit 1; }
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx "/.devrun/" "$exclude" 2>/dev/null || echo "/.devrun/" >> "$exclude"
rm -rf .devrun && mkdir -p .devrun/lib
cp "$bin" .devrun/cfp && strip .devrun/cfp
# Everything ldd resolves but the C runtime and the CUDA libraries the GPU machine has itself
# (cudart is small and carried, so that the runtime matches the build).
ldd "$bin" | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/lib(c|m|dl|pthread|rt|gcc_s|stdc\+\+|z)\.so|ld-linux|/libcublas|/libnccl' |
    while read -r lib; do cp -L "$lib" .devrun/lib/; done
cat > .devrun/cfp.sh <<'RUN'
#!/bin/bash
# cfp with the carried libraries and the machine's cuBLASLt and NCCL.
here=$(cd "$(dirname "$0")" && pwd)
cublas=$(dirname "$(find /usr /opt -name 'libcublasLt.so.13*' 2>/dev/null | head -1)")
nccl=$(dirname "$(find /usr /opt -name 'libnccl.so.2*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$here/lib:$cublas:$nccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
exec "$here/cfp" "$@"
RUN
chmod +x .devrun/cfp.sh
du -sh .devrun
