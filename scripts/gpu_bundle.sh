#!/bin/bash
# Packs programs built here (default: build/default/app/cli/cfp) with the shared libraries a bare
# GPU machine lacks into .devrun/ (git-ignored through .git/info/exclude), with a runner that uses
# that machine's own cuBLASLt and NCCL. For running the profiler and its GPU tests on a lent GPU
# machine without building there (docs/profiler.md, "On a lent GPU machine"):
#
#   bash scripts/gpu_bundle.sh                                    # cfp (34 MB)
#   bash scripts/gpu_bundle.sh build/default/tests/profiler/tst_profiler_gpu   # with Qt: 70 MB, packed
#       as .devpack/devrun.tar.xz (21 MB): carry .devpack, and there first tar xJf .devpack/devrun.tar.xz
#   (on the GPU machine, with .devrun carried)
#   bash .devrun/run.sh cfp profile builtin:gpt3-1.3b --hardware h200 --mesh 8 --db out.db
#   bash .devrun/run.sh tst_profiler_gpu
set -euo pipefail
cd "$(dirname "$0")/.."
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(build/default/app/cli/cfp)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx "/.devrun/" "$exclude" 2>/dev/null || echo "/.devrun/" >> "$exclude"
rm -rf .devrun && mkdir -p .devrun/lib
for bin in "${bins[@]}"; do
    [ -x "$bin" ] || { echo "gpu_bundle: $bin is missing (build first)" >&2; exit 1; }
    cp "$bin" .devrun/ && strip ".devrun/$(basename "$bin")"
    # Everything ldd resolves but the C runtime and the CUDA libraries the GPU machine has itself.
    ldd "$bin" | awk '$3 ~ /^\// {print $3}' | sort -u |
        grep -v -E '/lib(c|m|dl|pthread|rt|gcc_s|stdc\+\+|z)\.so|ld-linux|/libcublas|/libnccl' |
        while read -r lib; do cp -L "$lib" .devrun/lib/; done
done
cat > .devrun/run.sh <<'RUN'
#!/bin/bash
# run.sh PROGRAM ARGS: a bundled program with the carried libraries and the machine's cuBLASLt and NCCL.
here=$(cd "$(dirname "$0")" && pwd)
cublas=$(dirname "$(find /usr /opt -name 'libcublasLt.so.13*' 2>/dev/null | head -1)")
nccl=$(dirname "$(find /usr /opt -name 'libnccl.so.2*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$here/lib:$cublas:$nccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
program=$1
shift
exec "$here/$program" "$@"
RUN
chmod +x .devrun/run.sh
du -sh .devrun
# A lent machine takes 64 MiB with the working tree: a larger bundle (the Qt test programs bring
# ICU's 31 MB of data) travels as .devpack/devrun.tar.xz; there, `tar xJf .devpack/devrun.tar.xz`
# first (carry .devpack instead of .devrun).
if [ "$(du -sm .devrun | cut -f1)" -gt 48 ]; then
    grep -qx "/.devpack/" "$exclude" 2>/dev/null || echo "/.devpack/" >> "$exclude"
    mkdir -p .devpack && tar cf - .devrun | xz -T2 -6 > .devpack/devrun.tar.xz
    du -sh .devpack/devrun.tar.xz
fi
