#!/usr/bin/env bash
# One-shot GPU check for the CUDA backend (issue 7). Two halves, because the GPU host has
# no Go toolchain:
#   scripts/gpu-check.sh build   here: compile the masscuda test binaries into out/gpu-check
#   scripts/gpu-check.sh run     there: run them from out/gpu-check (carry that folder)
#   scripts/gpu-check.sh         build when `go` exists, then run when a GPU is visible
# The run: every kernel against its Go reference on fresh random inputs (outputs poisoned
# first), CPU-vs-CUDA parity on the tiny model (loss, LoRA grads, 10 steps), then training
# tokens/s and MFU for random Qwen3-0.6B and -4B shapes at seq 4096 against PyTorch+PEFT in
# the same run. Full output goes to out/gpu-check/gpu-check.log; one table is printed last.
# Environment: MASS_CUBLASLT_DIR (folder of libcublasLt.so.13/.12/.11; found in torch's
# nvidia wheels when unset), SHAPES (default 0.6b,4b), SEQ (4096), STEPS (5), PEAK (989.4).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${GPU_CHECK_DIR:-out/gpu-check}
mode=${1:-auto}

build() {
  mkdir -p "$dir"
  go build -tags masscuda ./cuda/... ./trainer/cudabackend/ || return 1
  go test -tags masscuda -c -o "$dir/kernels.test" ./cuda/kernels || return 1
  go test -tags masscuda -c -o "$dir/cudabackend.test" ./trainer/cudabackend || return 1
  cp scripts/cuda-bench-peft.py "$dir/"
  echo "gpu-check: built $(ls "$dir" | tr '\n' ' ')"
}

find_cublaslt() {
  [[ -n ${MASS_CUBLASLT_DIR:-} ]] && return
  for lib in /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if compgen -G "$lib/libcublasLt.so.1[123]" >/dev/null; then export MASS_CUBLASLT_DIR=$lib; return; fi
  done
  local d
  d=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
try:
    import torch; roots.append(os.path.dirname(os.path.dirname(torch.__file__)))
except Exception: pass
for r in roots:
    for p in sorted(glob.glob(os.path.join(r, "nvidia", "**", "libcublasLt.so.1[123]"), recursive=True), reverse=True):
        print(os.path.dirname(p)); raise SystemExit
PY
)
  [[ -n $d ]] && export MASS_CUBLASLT_DIR=$d
}

run() {
  local log=$dir/gpu-check.log start=$SECONDS fail=0
  [[ -x $dir/kernels.test ]] || { echo "gpu-check: $dir/kernels.test missing; run '$0 build' on a host with Go" >&2; return 1; }
  find_cublaslt
  : >"$log"
  {
    echo "== gpu-check $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
    echo "MASS_CUBLASLT_DIR=${MASS_CUBLASLT_DIR:-<loader path>}"
  } | tee -a "$log"
  echo "== kernels vs Go references" | tee -a "$log"
  timeout 180 "$dir/kernels.test" -test.v -test.count=1 >>"$log" 2>&1 || fail=1
  echo "== CPU-vs-CUDA parity (tiny, 10 steps)" | tee -a "$log"
  timeout 240 "$dir/cudabackend.test" -test.run 'TestParityTiny|TestLinearDropout' -test.v >>"$log" 2>&1 || fail=1
  echo "== training speed: mass (cuda backend)" | tee -a "$log"
  timeout 300 "$dir/cudabackend.test" -test.run '^$' -test.bench 'BenchmarkTrainStep' \
    -test.benchtime "${STEPS:-5}x" -shapes "${SHAPES:-0.6b,4b}" -seq "${SEQ:-4096}" \
    -peak-tflops "${PEAK:-989.4}" >>"$log" 2>&1 || fail=1
  echo "== training speed: PyTorch + PEFT" | tee -a "$log"
  timeout 300 python3 "$dir/cuda-bench-peft.py" --shapes "${SHAPES:-0.6b,4b}" --seq "${SEQ:-4096}" \
    --steps "${STEPS:-5}" --peak-tflops "${PEAK:-989.4}" >>"$log" 2>&1 || fail=1
  summary "$log"
  echo "gpu-check: $((SECONDS - start)) s, log $log, $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
  return $fail
}

summary() {
  local log=$1
  echo
  echo "================ gpu-check summary ================"
  awk '/^kernel checks/{on=1} on&&NF==0{on=0} on' "$log"
  awk '/^--- FAIL/' "$log"
  echo
  printf '%-6s %-24s %10s %8s\n' attn "parity (cpu vs cuda)" "rel err" tol
  awk '/^PARITY/{sub(/^PARITY /, ""); print}' "$log"
  echo
  awk '
    /^BenchmarkTrainStep/ { split($1, p, "/"); sub("BenchmarkTrainStep/", "", $1); shape=p[2];
      for (i=2;i<=NF;i++) { if ($(i)=="tokens/s") mt[shape]=$(i-1); if ($(i)=="MFU") mm[shape]=$(i-1) } ; order[++n]=shape }
    /^PEFT / { pt[$2]=$5; pm[$2]=$7 }
    END {
      printf "%-14s %12s %8s %12s %8s %8s\n", "shape", "mass tok/s", "MFU", "PEFT tok/s", "MFU", "ratio"
      for (i=1;i<=n;i++) { s=order[i]; r = (pt[s] > 0) ? sprintf("%.2f", mt[s]/pt[s]) : "-";
        printf "%-14s %12s %8s %12s %8s %8s\n", s, mt[s], mm[s], (s in pt)?pt[s]:"-", (s in pm)?pm[s]:"-", r }
      for (s in pt) if (!(s in mt)) printf "%-14s %12s %8s %12s %8s %8s\n", s, "-", "-", pt[s], pm[s], "-"
    }' "$log"
}

case $mode in
  build) build ;;
  run) run ;;
  auto)
    if command -v go >/dev/null; then build || exit 1; fi
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then run
    else echo "gpu-check: no GPU visible here; carry $dir to a GPU host and run '$0 run' there"; fi ;;
  *) echo "usage: $0 [build|run]" >&2; exit 2 ;;
esac
