#!/usr/bin/env bash
# One-shot staged GPU check for the CUDA backend (issue 20). The GPU host has no Go
# toolchain and lends 10 minutes per command, 15 in all, so the check is built here and run
# there once, in stages that each give an answer on their own:
#
#   scripts/gpu-check.sh build           here: stripped masscuda test binaries into out/gpu-check
#   scripts/gpu-check.sh run             there: the stages below, from out/gpu-check
#   scripts/gpu-check.sh --dry-run       anywhere: print every stage's command and timeout, and their sum
#   scripts/gpu-check.sh                 build when `go` exists, then run when a GPU is visible
#
# The device tool's invocation (one call; the prebuilt folder travels as carry, the tree
# with it, 64 MiB in all; `build` checks that):
#
#   run(command="bash scripts/gpu-check.sh run", carry=["out/gpu-check"], timeout_s=540)
#
# Stages, each under `timeout -k 2`, in order (seconds):
#   preflight 15   nvidia-smi, driver, libcuda / libcublasLt found and their versions, torch
#   smoke     30   cast/fill/add, the GEMMs and one mma.sync tile (the fragment layout the
#                  tensor-core attention assumes) with MASS_CUDA_SYNC=1
#   kernels   60   every kernel against its Go reference (outputs poisoned first), the
#                  tensor-core attention against the reference and the fp32 flash kernels
#   bench-0.6b 75  mass training step, random Qwen3-0.6B, seq 4096, device optimizer,
#                  attention auto (tensor cores)
#   bench-4b  75   the same for Qwen3-4B
#   peft     120   PyTorch+PEFT at equal config (skipped when torch or peft is missing)
#   parity    90   CPU-vs-CUDA on 3 steps against the gorgonia reference backend, the three
#                  attention paths (tc, clear, flash), the clear→flash fallback, stacked
#                  q/k/v + gate/up products, device optimizer vs host AdamW
#   extras         only while the 480 s budget has room, first the hybrid (75 s: the Qwen3.5/3.6
#                  kernels, causal conv + SiLU with state, gated RMSNorm, gdn_chunk_fwd/bwd, column
#                  copies, once with MASS_CUDA_SYNC=1, then the hybrid model on the CUDA backend vs
#                  the reference backend, hybrid-micro 3 steps, then the kernels under compute-
#                  sanitizer racecheck when present; the "kernels" stage already runs them once
#                  asynchronously), devices (60 s: peer copy and the hybrid on a two-device pipeline
#                  and two replicas vs one device; skipped with one GPU), 4B with clear attention (45 s, the
#                  tc-vs-clear comparison), 4B without dropout (45 s, stacked LoRA products),
#                  compute-sanitizer racecheck (45 s), flash path at seq 1024 (45 s)
# Every stage writes $OUT/<stage>.log and appends one status line to $OUT/status.txt as it
# ends, so a kill keeps what finished; the summary (kernel table, parity rows, tokens/s and
# MFU next to PEFT) goes to $OUT/summary.txt. OUT defaults to out/gpu-check/results.
# GPU_CHECK_STAGES=smoke,parity runs only the named stages (a rerun of what failed).
# Environment: MASS_CUBLASLT_DIR (folder of libcublasLt.so.13/.12/.11; searched in the CUDA
# folders and torch's nvidia wheels when unset), SEQ (4096), STEPS (5), PEAK (989.4).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${GPU_CHECK_DIR:-out/gpu-check}
OUT=${OUT:-$dir/results}
budget=480
grace=2
carry_limit=$((64 << 20))
mode=${1:-auto}
[[ ${2:-} == --dry-run ]] && mode=--dry-run

SEQ=${SEQ:-4096} STEPS=${STEPS:-5} PEAK=${PEAK:-989.4}
bench="\"$dir/cudabackend.test\" -test.run '^\$' -test.bench BenchmarkTrainStep -test.benchtime ${STEPS}x -peak-tflops $PEAK"

# name|timeout|required (1) or extra (0)|command
stages=(
  "preflight|15|1|preflight"
  "smoke|30|1|MASS_CUDA_SYNC=1 \"$dir/kernels.test\" -test.v -test.count=1 -test.run '^(TestCastsFillAdd|TestGemm|TestMMAProbe)\$'"
  "kernels|60|1|\"$dir/kernels.test\" -test.v -test.count=1"
  "bench-0.6b|75|1|$bench -seq $SEQ -shapes 0.6b"
  "bench-4b|75|1|$bench -seq $SEQ -shapes 4b"
  "peft|120|1|have_peft && python3 \"$dir/cuda-bench-peft.py\" --shapes 0.6b,4b --seq $SEQ --steps $STEPS --peak-tflops $PEAK"
  "parity|90|1|\"$dir/cudabackend.test\" -test.v -test.count=1 -test.run 'TestParityTiny|TestLinearDropout|TestLinearGroup|TestClear|TestAttnSelection|TestDeviceOptimizerParity' -parity-steps 3"
  "hybrid|75|0|hybrid_check"
  "devices|60|0|devices_check"
  "clear-4096|45|0|$bench -seq $SEQ -shapes 4b -attn clear"
  "nodrop-4096|45|0|$bench -seq $SEQ -shapes 4b -lora-dropout 0"
  "racecheck|45|0|have compute-sanitizer && compute-sanitizer --tool racecheck --error-exitcode 9 \"$dir/kernels.test\" -test.count=1 -test.run '^(TestCastsFillAdd|TestAttention)\$'"
  "flash-1024|45|0|$bench -shapes 0.6b,4b -seq 1024 -attn flash"
)

build() {
  mkdir -p "$dir"
  go build -tags masscuda ./cuda/... ./trainer/cudabackend/ || return 1
  local flags=(-tags masscuda -trimpath -ldflags '-s -w')
  go test "${flags[@]}" -c -o "$dir/kernels.test" ./cuda/kernels || return 1
  go test "${flags[@]}" -c -o "$dir/cudabackend.test" ./trainer/cudabackend || return 1
  go test "${flags[@]}" -c -o "$dir/device.test" ./cuda/device || return 1
  cp scripts/cuda-bench-peft.py "$dir/"
  local carried tree total
  carried=$(du -sb "$dir" | cut -f1)
  tree=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  total=$((carried + tree))
  echo "gpu-check: built $(ls "$dir" | tr '\n' ' ')"
  echo "gpu-check: carry $((carried >> 20)) MiB + tree $((tree >> 20)) MiB = $((total >> 20)) MiB (limit $((carry_limit >> 20)) MiB)"
  if ((total > carry_limit)); then
    echo "gpu-check: the carried folder and the tree exceed the carry limit" >&2
    return 1
  fi
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

preflight() {
  echo "== gpu-check preflight $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,compute_cap --format=csv || return 1
  ldconfig -p | grep -m1 'libcuda.so.1' || { echo "libcuda.so.1 not in the loader cache"; return 1; }
  echo "MASS_CUBLASLT_DIR=${MASS_CUBLASLT_DIR:-<loader path>}"
  ls -l "${MASS_CUBLASLT_DIR:-/nonexistent}"/libcublasLt.so.1[123]* 2>/dev/null || echo "libcublasLt: not found in a known folder (loader path used)"
  ldd "$dir/kernels.test" | grep -E 'libcuda|not found'
  python3 -c 'import torch, peft; print("torch", torch.__version__, "cuda", torch.version.cuda, "peft", peft.__version__)' 2>&1 | tail -1
  ls -l "$dir"
}

have() {
  command -v "$1" >/dev/null && return 0
  echo "$1 not found: stage skipped"
  return 3
}

# hybrid_check runs the hybrid's kernel checks with synchronous launches (an error names its
# kernel), then the Qwen3.5/3.6 hybrid on the CUDA backend against the reference backend
# (hybrid-micro, 3 steps, tensor-core attention: PARITY rows), then the kernel checks under
# compute-sanitizer's racecheck when it is installed.
hybrid_check() {
  local run='^(TestHybridConvNorm|TestGDNLaunchers|TestGDNPrepAttnGate|TestPartialRoPE|TestCopyColsAdd)$'
  MASS_CUDA_SYNC=1 "$dir/kernels.test" -test.v -test.count=1 -test.run "$run" || return 1
  "$dir/cudabackend.test" -test.v -test.count=1 -test.run '^TestHybridParity$/^tc$' -hybrid-steps 3 || return 1
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found: racecheck skipped"; return 0; }
  compute-sanitizer --tool racecheck --error-exitcode 9 "$dir/kernels.test" -test.count=1 -test.run "$run"
}

# devices_check runs the peer copy and the hybrid on two devices (pipeline 0,1 and two
# replicas) against one; both skip on a host with a single GPU.
devices_check() {
  "$dir/device.test" -test.v -test.count=1 -test.run '^TestCopyPeer$' || return 1
  "$dir/cudabackend.test" -test.v -test.count=1 -test.run '^TestHybridDevices$' -hybrid-steps 3
}

have_peft() {
  python3 -c 'import torch, peft' 2>/dev/null && return 0
  echo "torch or peft missing: PEFT comparison skipped"
  return 3
}

# stage NAME TIMEOUT CMD: runs CMD under timeout, logs to $OUT/NAME.log, appends a status line.
stage() {
  local name=$1 limit=$2 cmd=$3 t0=$SECONDS rc status
  export -f preflight have have_peft hybrid_check devices_check
  export dir MASS_CUBLASLT_DIR
  timeout -k "$grace" "$limit" bash -c "$cmd" >"$OUT/$name.log" 2>&1
  rc=$?
  case $rc in
    0) status=PASS ;;
    3) status=SKIP ;;
    124 | 137) status=TIMEOUT ;;
    *) status=FAIL ;;
  esac
  printf '%-11s %-7s rc %-3d %4d s / %3d s  %s\n' "$name" "$status" "$rc" $((SECONDS - t0)) "$limit" "$OUT/$name.log" | tee -a "$OUT/status.txt"
  [[ $status == PASS || $status == SKIP ]]
}

dry_run() {
  local sum=0 extra=0 n=0 name limit req cmd
  for s in "${stages[@]}"; do
    IFS='|' read -r name limit req cmd <<<"$s"
    if [[ $req == 1 ]]; then
      sum=$((sum + limit + grace)) n=$((n + 1))
      printf '%-11s timeout -k %d %3d  %s\n' "$name" "$grace" "$limit" "$cmd"
    else
      extra=$((extra + limit + grace))
      printf '%-11s timeout -k %d %3d  (only with time left) %s\n' "$name" "$grace" "$limit" "$cmd"
    fi
  done
  echo "gpu-check: $n required stages sum to $sum s with kill grace (budget $budget s); extras ($extra s) run only inside what is left"
  ((sum <= budget))
}

run() {
  local start=$SECONDS fail=0 name limit req cmd
  [[ -x $dir/kernels.test ]] || { echo "gpu-check: $dir/kernels.test missing; run '$0 build' on a host with Go" >&2; return 1; }
  mkdir -p "$OUT"
  : >"$OUT/status.txt"
  find_cublaslt
  for s in "${stages[@]}"; do
    IFS='|' read -r name limit req cmd <<<"$s"
    if [[ -n ${GPU_CHECK_STAGES:-} && ,$GPU_CHECK_STAGES, != *,$name,* ]]; then continue; fi
    local left=$((budget - (SECONDS - start)))
    if ((left < limit + grace)); then
      printf '%-11s SKIP    (%d s left of %d)\n' "$name" "$left" "$budget" | tee -a "$OUT/status.txt"
      [[ $req == 1 ]] && fail=1
      continue
    fi
    stage "$name" "$limit" "$cmd" || { [[ $req == 1 ]] && fail=1; }
    [[ $name == preflight && $fail == 1 ]] && { echo "gpu-check: preflight failed; stopping" | tee -a "$OUT/status.txt"; break; }
  done
  summary >"$OUT/summary.txt"
  cat "$OUT/summary.txt"
  echo "gpu-check: $((SECONDS - start)) s, results in $OUT, $([[ $fail == 0 ]] && echo PASS || echo FAIL)" | tee -a "$OUT/status.txt"
  return $fail
}

summary() {
  echo "================ gpu-check summary ================"
  cat "$OUT/status.txt"
  echo
  awk '/^kernel checks/{on=1} on&&NF==0{on=0} on' "$OUT/kernels.log" 2>/dev/null
  cat "$OUT"/*.log 2>/dev/null | awk '/^--- FAIL/'
  echo
  printf '%-6s %-24s %10s %8s\n' attn "parity (cpu vs cuda)" "rel err" tol
  awk '/^PARITY/{sub(/^PARITY /, ""); print} /^DEVOPT/' "$OUT/parity.log" "$OUT/hybrid.log" "$OUT/devices.log" 2>/dev/null
  echo
  cat "$OUT"/bench-*.log "$OUT/peft.log" "$OUT/clear-4096.log" "$OUT/nodrop-4096.log" "$OUT/flash-1024.log" 2>/dev/null | awk '
    /^BenchmarkTrainStep/ { split($1, p, "/"); shape=p[2] "/" p[3]; if (p[4] != "") shape=shape "/" p[4]; sub(/-[0-9]+$/, "", shape);
      for (i=2;i<=NF;i++) { if ($(i)=="tokens/s") mt[shape]=$(i-1); if ($(i)=="MFU") mm[shape]=$(i-1) } ; order[++n]=shape }
    /^PEFT / { pt[$2]=$5; pm[$2]=$7 }
    END {
      printf "%-24s %12s %8s %12s %8s %8s\n", "shape", "mass tok/s", "MFU", "PEFT tok/s", "MFU", "ratio"
      for (i=1;i<=n;i++) { s=order[i]; k=s; sub(/\/.*/, "", k);
        r = (pt[k] > 0 && index(s, "seq4096")) ? sprintf("%.2f", mt[s]/pt[k]) : "-";
        printf "%-24s %12s %8s %12s %8s %8s\n", s, mt[s], mm[s], (k in pt)?pt[k]:"-", (k in pm)?pm[k]:"-", r }
    }'
}

case $mode in
  build) build ;;
  run) run ;;
  --dry-run | dry-run) dry_run ;;
  auto)
    if command -v go >/dev/null; then build || exit 1; fi
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then run
    else echo "gpu-check: no GPU visible here; carry $dir to a GPU host and run '$0 run' there"; fi ;;
  *) echo "usage: $0 [build|run|--dry-run]" >&2; exit 2 ;;
esac
