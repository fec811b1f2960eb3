#!/usr/bin/env bash
# trainer-demo.sh: the CPU trainer end to end on a random micro Qwen3 and a toy dataset:
# 200 steps (validation every 50, checkpoint every 50), eval before/after, PEFT export,
# reload check through eval, merge (bf16 and FP8). Prints the validation curve.
# Usage: scripts/trainer-demo.sh [OUT_DIR]   (needs bin/mass-train: make build)
set -euo pipefail
cd "$(dirname "$0")/.."
mt=${MASS_TRAIN:-bin/mass-train}
out=${1:-out/trainer-demo}
rm -rf "$out"
mkdir -p "$out"
"$mt" init-model --config micro --out "$out/micro"
"$mt" toy-data --out "$out/train.jsonl" --n 256 --seed 1
"$mt" toy-data --out "$out/val.jsonl" --n 32 --seed 2
echo "trainer-demo: untrained val: $("$mt" eval --model "$out/micro" --data "$out/val.jsonl" --json)"
"$mt" train --model "$out/micro" --data "$out/train.jsonl" --val "$out/val.jsonl" --out "$out/run" \
	--steps 200 --batch 4 --lr 1e-2 --warmup 10 --rank 8 --alpha 16 --dropout 0 --val-every 50 --ckpt-every 50 --seed 7
grep val_loss "$out/run/metrics.jsonl"
"$mt" export --run "$out/run" --checkpoint best --out "$out/adapter"
echo "trainer-demo: best adapter val: $("$mt" eval --model "$out/micro" --adapter "$out/adapter" --data "$out/val.jsonl" --json)"
"$mt" merge --model "$out/micro" --adapter "$out/adapter" --out "$out/merged" --dtype F32
echo "trainer-demo: merged model val: $("$mt" eval --model "$out/micro" --data "$out/val.jsonl" --json | sed 's/^/(base) /') / $("$mt" eval --model "$out/merged" --data "$out/val.jsonl" --json)"
"$mt" merge --model "$out/micro" --adapter "$out/adapter" --out "$out/merged-fp8" --fp8
ls "$out/adapter" "$out/merged-fp8"
