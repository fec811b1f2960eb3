#!/usr/bin/env bash
# demo.sh: mass end to end on one host, offline. Starts a private massd with the
# built-in `scripted` dry-run model, adds the example tasks, runs an episode in
# real containers (an orchestrator delegates to two workers; the second reads and
# runs the first's Python file), audits it and verifies its ledger, runs the
# sandbox isolation self-test, runs a 3-iteration workflow search (massctl search),
# builds SFT windows from the episodes, trains a
# tiny LoRA on them (directly and as a massd job) and exports a PEFT adapter,
# then runs one cycle on the two train tasks (a short search on each, 18 teacher
# episodes each, the ring of judgments, Bradley–Terry, selection, a short LoRA
# run on the tiny model with mass-train's fast `cpu` backend, adapter, merged
# model, gen-1), printing each stage's wall time, massd's peak memory and tokens.
#
# Needs `make build image` first (make demo does both). Exits non-zero when a
# stage fails and says which. Artifacts: out/demo/ (kept), socket: a temp dir.
#
# Knobs (environment): BIN (default bin), DEMO_OUT (out/demo), DEMO_TASK
# (examples/tasks/projectile-sim/task.yaml), DEMO_TRAIN_STEPS (4),
# DEMO_JOB_STEPS (2), DEMO_RACE_OPS (500 host file operations in the sandbox
# swap race; massctl's default is 10,000), DEMO_SKIP_VERIFY=1 skips stage 6,
# DEMO_GEN_TASKS (ml-classifier,sales-analysis: the example train tasks),
# DEMO_GEN_EPISODES (18 teacher episodes per task), DEMO_GEN_STEPS (10 LoRA steps).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

BIN=${BIN:-bin}
OUT=${DEMO_OUT:-out/demo}
TASK=${DEMO_TASK:-examples/tasks/projectile-sim/task.yaml}
TOKENIZER=trainer/tokenizer/testdata
TRAIN_STEPS=${DEMO_TRAIN_STEPS:-4}
JOB_STEPS=${DEMO_JOB_STEPS:-2}
RACE_OPS=${DEMO_RACE_OPS:-500}
GEN_TASKS=${DEMO_GEN_TASKS:-ml-classifier,sales-analysis}
GEN_EPISODES=${DEMO_GEN_EPISODES:-18}
GEN_STEPS=${DEMO_GEN_STEPS:-10}

case $BIN in /*) ;; *) BIN=$root/$BIN ;; esac
case $OUT in /*) ;; *) OUT=$root/$OUT ;; esac
MASSD=$BIN/massd
MASSCTL=$BIN/massctl
TRAIN=$BIN/mass-train

declare -a STAGE_NAMES=() STAGE_RESULTS=() STAGE_SECS=()
massd_pid=""
sockdir=""
EP1="" EP2="" EXPORT="" DATASET="" ADAPTER=""
declare -A FACT=()

banner() { printf '\n\033[1m==== %s ====\033[0m\n' "$*"; }
note() { printf 'demo: %s\n' "$*"; }

# step echoes a command, runs it and reports a failure with its exit status.
step() {
	printf '+ %s\n' "$*"
	"$@"
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		printf 'demo: FAILED (exit %d): %s\n' "$rc" "$*" >&2
		return 1
	fi
}

# stage N TITLE FUNC runs FUNC under a numbered banner and records the result.
stage() {
	local n=$1 title=$2 fn=$3 t0 rc
	banner "stage $n/$(($(grep -c "^stage [0-9]" "${BASH_SOURCE[0]}") - 1)): $title"
	t0=$(date +%s)
	"$fn"
	rc=$?
	STAGE_NAMES+=("$n. $title")
	STAGE_SECS+=($(($(date +%s) - t0)))
	case $rc in
	0) STAGE_RESULTS+=(ok) ;;
	2) STAGE_RESULTS+=(skipped) ;;
	*) STAGE_RESULTS+=(FAILED) ;;
	esac
	return "$rc"
}

json_get() { # json_get FILE EXPR: print a field of a JSON file (EXPR in Python on `d`)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

stop_massd() {
	[ -n "$massd_pid" ] || return 0
	if kill -0 "$massd_pid" 2>/dev/null; then
		kill -TERM "$massd_pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$massd_pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$massd_pid" 2>/dev/null; then
			note "massd did not stop within 10s; sending SIGKILL"
			kill -KILL "$massd_pid" 2>/dev/null
		fi
	fi
	wait "$massd_pid" 2>/dev/null
	massd_pid=""
}

summary() {
	local failed=0 i
	banner "summary"
	printf '%-58s %-8s %6s\n' STAGE RESULT SECONDS
	for i in "${!STAGE_NAMES[@]}"; do
		printf '%-58s %-8s %6s\n' "${STAGE_NAMES[$i]}" "${STAGE_RESULTS[$i]}" "${STAGE_SECS[$i]}"
		[ "${STAGE_RESULTS[$i]}" = ok ] || failed=1
	done
	echo
	for k in episode audit search sandbox dataset eval_base eval_adapter hybrid train_job generation gen_model report; do
		[ -n "${FACT[$k]:-}" ] && printf '%-14s %s\n' "$k" "${FACT[$k]}"
	done
	echo
	echo "artifacts in $OUT:"
	local a
	for a in \
		"massd.yaml|the daemon's config" "massd.log|the daemon's log" \
		"data|massd's data dir: SQLite, episodes/<id>/ (api_requests.jsonl, ledger.jsonl, workspace.tar, ...), runs/" \
		"run.json|massctl run --json summary" "search.json|massctl search --json summary" "audit.txt|behavioural audit" "audit.json|audit as JSON" \
		"audit.html|audit page for reviewers (open in a browser)" "sandbox-policy.txt|effective sandbox policy" \
		"sandbox-verify.txt|isolation self-test, one line per probe" \
		"dataset|SFT windows: rows.jsonl, windows.bin, manifest.json, val.jsonl" "window0.txt|window 0 as text" \
		"model|tiny random Qwen3 model" "hybrid-merged|merged hybrid-tiny (Qwen3.5/3.6 layout)" "run|direct training run (checkpoints, metrics.jsonl, best/)" \
		"adapter|exported PEFT adapter" "eval-base.json|val loss without the adapter" \
		"eval-adapter.json|val loss with the adapter" "cycle.json|massctl cycle run --json result" \
		"generation.json|massctl generation show 1 --json" \
		"report.html|evaluation report page (massctl report --html)" "report.png|its screenshot (headless Chromium)"; do
		[ -e "$OUT/${a%%|*}" ] && printf '  %-20s %s\n' "${a%%|*}" "${a#*|}"
	done
	if [ $failed -ne 0 ]; then
		printf '\nfailed stages:' >&2
		for i in "${!STAGE_NAMES[@]}"; do
			[ "${STAGE_RESULTS[$i]}" = ok ] || printf ' [%s: %s]' "${STAGE_NAMES[$i]}" "${STAGE_RESULTS[$i]}" >&2
		done
		echo >&2
	fi
	return $failed
}

on_exit() {
	local rc=$?
	stop_massd
	[ -n "$sockdir" ] && rm -rf "$sockdir"
	if [ "${#STAGE_NAMES[@]}" -gt 0 ]; then
		summary || rc=1
	fi
	if [ "$rc" -ne 0 ]; then
		printf '\ndemo: FAILED; see the stage output above and %s/massd.log\n' "$OUT" >&2
	else
		printf '\ndemo: all stages passed\n'
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'note "interrupted"; exit 130' INT TERM

# ---- stages ----

s_preflight() {
	local b ok=0
	for b in massd massctl mass-train; do
		[ -x "$BIN/$b" ] || { note "missing $BIN/$b: run make build"; ok=1; }
	done
	# The static isolation probe (and the sandbox helper, mounted read-only into
	# every agent container) live outside ./cmd; build them as `make build`
	# builds the helper (incremental, so cheap when up to date).
	CGO_ENABLED=0 step go build -trimpath -o "$BIN/" ./sandbox/helper/cmd/mass-sandbox-helper ./sandbox/probe/cmd/mass-probe || ok=1
	command -v python3 >/dev/null || { note "python3 is needed to read JSON summaries"; ok=1; }
	docker info >/dev/null 2>&1 || { note "no Docker engine reachable: start dockerd"; ok=1; }
	if ! docker image inspect mass-agent:latest >/dev/null 2>&1; then
		note "image mass-agent:latest missing: building images (make image)"
		step "$MASSCTL" image build --all || ok=1
	fi
	return $ok
}

s_start() {
	# Only ever remove a previous demo's output, never an arbitrary DEMO_OUT.
	if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/massd.yaml" ]; then
		note "$OUT exists and is not a previous demo's output; set DEMO_OUT to another directory"
		return 1
	fi
	rm -rf "$OUT"
	mkdir -p "$OUT"
	sockdir=$(mktemp -d /tmp/mass-demo.XXXXXX)
	export MASS_SOCKET=$sockdir/massd.sock
	cat >"$OUT/massd.yaml" <<YAML
# demo massd: private socket and data dir; models: only the built-in scripted dry-run policy
socket: $MASS_SOCKET
data_dir: $OUT/data
log:
  format: text
  level: info
jobs:
  concurrency: 2
sandbox:
  image: mass-agent:latest
  helper: $BIN/mass-sandbox-helper
trainer:
  binary: $TRAIN
  cuda_binary: ""   # the demo trains a tiny model on the CPU, GPU or not
YAML
	printf '+ %s --config %s &\n' "$MASSD" "$OUT/massd.yaml"
	"$MASSD" --config "$OUT/massd.yaml" >"$OUT/massd.log" 2>&1 &
	massd_pid=$!
	for _ in $(seq 150); do
		"$MASSCTL" status >/dev/null 2>&1 && { note "massd pid $massd_pid on $MASS_SOCKET, data $OUT/data"; return 0; }
		kill -0 "$massd_pid" 2>/dev/null || break
		sleep 0.2
	done
	note "massd did not come up; last log lines:"
	tail -20 "$OUT/massd.log" >&2
	return 1
}

s_tasks() {
	local f ok=0
	step "$MASSCTL" status || return 1
	for f in examples/tasks/*/task.yaml; do
		step "$MASSCTL" task validate "$f" || ok=1
		step "$MASSCTL" task add "$f" || ok=1
	done
	step "$MASSCTL" task list || ok=1
	return $ok
}

s_episode() {
	step "$MASSCTL" run --task "$TASK" --model scripted || return 1
	note "again with --json (a second episode) for the ids and paths"
	printf '+ %s run --task %s --model scripted --json > run.json\n' "$MASSCTL" "$TASK"
	"$MASSCTL" run --task "$TASK" --model scripted --json >"$OUT/run.json" || { cat "$OUT/run.json"; return 1; }
	cat "$OUT/run.json"
	# The scripted policy exercises the machinery and does not attempt the
	# task: the run completes as a dry run; success would need the task's
	# outputs and its grader to pass.
	[ "$(json_get "$OUT/run.json" 'd["exit"] == "completed" and d["dry_run"]')" = True ] || { note "episode did not complete as a dry run"; return 1; }
	EP2=$(json_get "$OUT/run.json" 'd["episode_id"]')
	EXPORT=$(json_get "$OUT/run.json" 'd["workspace_export"]')
	EP1=$(ls "$OUT/data/episodes" | grep -v "^$EP2\$" | head -1)
	[ -s "$EXPORT" ] || { note "workspace export $EXPORT missing"; return 1; }
	note "workspace export: $EXPORT ($(tar -tf "$EXPORT" | wc -l) entries)"
	tar -tvf "$EXPORT"
	local py
	py=$(tar -tf "$EXPORT" | grep -E '^dryrun/.*\.py$' | head -1)
	if [ -n "$py" ]; then
		note "the Python file worker-1 wrote and worker-2 read and ran ($py):"
		tar -xOf "$EXPORT" "$py" | sed 's/^/    /'
	fi
	FACT[episode]="$EP2 (and $EP1), export $EXPORT"
}

s_search() {
	printf '+ %s search --task %s --iterations 3 --model scripted --json > search.json\n' "$MASSCTL" "$TASK"
	"$MASSCTL" search --task "$TASK" --iterations 3 --model scripted --json >"$OUT/search.json" || { cat "$OUT/search.json"; return 1; }
	cat "$OUT/search.json"
	local task champ beats
	task=$(json_get "$OUT/search.json" 'd["task"]')
	champ=$(json_get "$OUT/search.json" 'd["champion_version"]')
	beats=$(json_get "$OUT/search.json" 'd["beats_reference"]')
	step "$MASSCTL" workflow list "$task" || return 1
	step "$MASSCTL" workflow diff "$task" v0 "v$champ" || return 1
	FACT[search]="champion v$champ, beats reference $beats, files in $(json_get "$OUT/search.json" 'd["dir"]')"
	[ "$beats" = True ] && [ "$champ" != 0 ] || { note "search: want a new champion that beats the reference"; return 1; }
}

s_audit() {
	[ -n "$EP2" ] || { note "skipped: no episode"; return 2; }
	local ok=0
	printf '+ %s audit %s --html %s\n' "$MASSCTL" "$EP2" "$OUT/audit.html"
	"$MASSCTL" audit "$EP2" --html "$OUT/audit.html" | tee "$OUT/audit.txt" || ok=1
	"$MASSCTL" audit "$EP2" --json >"$OUT/audit.json" || ok=1
	step "$MASSCTL" audit verify "$EP2" || ok=1
	[ -s "$OUT/audit.html" ] || { note "audit.html not written"; ok=1; }
	if [ -s "$OUT/audit.json" ]; then
		local del ho
		del=$(json_get "$OUT/audit.json" 'd["delegation"]')
		ho=$(json_get "$OUT/audit.json" 'd["code_handoff"]')
		FACT[audit]="delegation $del, code handoff $ho (expected 2 and 1), ledger verified"
		[ "$del" = 2 ] && [ "$ho" = 1 ] || { note "audit: want delegation 2 and code handoff 1, got $del and $ho"; ok=1; }
	fi
	return $ok
}

s_sandbox() {
	local ok=0
	printf '+ %s sandbox policy\n' "$MASSCTL"
	"$MASSCTL" sandbox policy | tee "$OUT/sandbox-policy.txt" || ok=1
	if [ "${DEMO_SKIP_VERIFY:-0}" = 1 ]; then
		note "sandbox verify skipped (DEMO_SKIP_VERIFY=1)"
		return $ok
	fi
	printf '+ %s sandbox verify --race-ops %s\n' "$MASSCTL" "$RACE_OPS"
	timeout -s INT -k 30 900 "$MASSCTL" sandbox verify --race-ops "$RACE_OPS" 2>&1 | tee "$OUT/sandbox-verify.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || ok=1
	FACT[sandbox]=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT/sandbox-verify.txt" | tail -1)
	[ -n "${FACT[sandbox]}" ] || FACT[sandbox]="no verify result (see sandbox-verify.txt)"
	[ $ok -eq 0 ] || FACT[sandbox]="${FACT[sandbox]}: $(grep -E '^massctl: ' "$OUT/sandbox-verify.txt" | tail -1)"
	return $ok
}

s_data() {
	[ -n "$EP2" ] || { note "skipped: no episode"; return 2; }
	DATASET=$OUT/dataset
	step "$MASSCTL" data build --tokenizer "$TOKENIZER" --episodes "$OUT/data/episodes/$EP1" \
		--episodes "$OUT/data/episodes/$EP2" --out "$DATASET" --force --dry-run --include-ineligible || return 1
	local n
	n=$(wc -l <"$DATASET/rows.jsonl")
	[ "$n" -gt 0 ] || { note "dataset has no windows"; return 1; }
	# Validation: the shortest window, so that evaluation stays quick on a CPU.
	python3 - "$DATASET/rows.jsonl" "$DATASET/val.jsonl" <<'PY' || return 1
import json, sys
rows = [l for l in open(sys.argv[1]) if l.strip()]
best = min(rows, key=lambda l: json.loads(l)["n_tokens"])
open(sys.argv[2], "w").write(best if best.endswith("\n") else best + "\n")
PY
	printf '+ %s data show --tokenizer %s %s 0 | head -40\n' "$MASSCTL" "$TOKENIZER" "$DATASET"
	"$MASSCTL" data show --tokenizer "$TOKENIZER" "$DATASET" 0 >"$OUT/window0.txt" || return 1
	head -40 "$OUT/window0.txt"
	echo "... (full window: $OUT/window0.txt; supervised spans between « »)"
	FACT[dataset]="$n windows, $(json_get "$DATASET/manifest.json" 'd["total"]["tokens"]') tokens, $(json_get "$DATASET/manifest.json" 'd["total"]["supervised_tokens"]') supervised ($DATASET)"
}

s_train() {
	[ -n "$DATASET" ] && [ -s "$DATASET/rows.jsonl" ] || { note "skipped: no dataset"; return 2; }
	local ok=0 job=""
	step "$TRAIN" init-model --config tiny --out "$OUT/model" || return 1
	# The daemon job runs mass-train as massd's subprocess, started first so that
	# it can use the second core while the direct run below trains.
	printf '+ %s train --model %s --data %s --val %s --name demo-job --steps %s ...\n' \
		"$MASSCTL" "$OUT/model" "$DATASET/rows.jsonl" "$DATASET/val.jsonl" "$JOB_STEPS"
	job=$("$MASSCTL" train --model "$OUT/model" --data "$DATASET/rows.jsonl" --val "$DATASET/val.jsonl" \
		--name demo-job --steps "$JOB_STEPS" --batch 1 --lr 1e-3 --warmup 1 --rank 8 --alpha 16 \
		--val-every "$JOB_STEPS" --ckpt-every "$JOB_STEPS" --seed 1 | head -1) || ok=1
	note "train job: ${job:-none}"
	step "$TRAIN" train --model "$OUT/model" --data "$DATASET/rows.jsonl" --val "$DATASET/val.jsonl" \
		--out "$OUT/run" --steps "$TRAIN_STEPS" --batch 1 --lr 1e-3 --warmup 1 --rank 8 --alpha 16 \
		--dropout 0 --val-every "$TRAIN_STEPS" --ckpt-every "$TRAIN_STEPS" --seed 1 || return 1
	ADAPTER=$OUT/adapter
	step "$TRAIN" export --run "$OUT/run" --checkpoint best --out "$ADAPTER" || return 1
	ls -l "$ADAPTER"
	# The paper's architecture: a random Qwen3.5/3.6-style hybrid (three Gated
	# DeltaNet layers to one gated full-attention layer), a few LoRA steps on
	# the same windows with every reference target, exported and merged.
	step "$TRAIN" init-model --config hybrid-tiny --out "$OUT/hybrid-model" || return 1
	step "$TRAIN" train --model "$OUT/hybrid-model" --data "$DATASET/rows.jsonl" --out "$OUT/hybrid-run" --steps 3 \
		--batch 1 --lr 1e-3 --warmup 1 --rank 8 --alpha 16 --dropout 0 --ckpt-every 3 --seed 1 || return 1
	step "$TRAIN" export --run "$OUT/hybrid-run" --checkpoint latest --out "$OUT/hybrid-adapter" || return 1
	step "$TRAIN" merge --model "$OUT/hybrid-model" --adapter "$OUT/hybrid-adapter" --out "$OUT/hybrid-merged" || return 1
	FACT[hybrid]="hybrid-tiny (Gated DeltaNet + gated attention): 3 LoRA steps, adapter $OUT/hybrid-adapter, merged $OUT/hybrid-merged"
	printf '+ %s eval --model %s --data %s --json\n' "$TRAIN" "$OUT/model" "$DATASET/val.jsonl"
	"$TRAIN" eval --model "$OUT/model" --data "$DATASET/val.jsonl" --json | tee "$OUT/eval-base.json" || ok=1
	printf '+ %s eval --model %s --adapter %s --data %s --json\n' "$TRAIN" "$OUT/model" "$ADAPTER" "$DATASET/val.jsonl"
	"$TRAIN" eval --model "$OUT/model" --adapter "$ADAPTER" --data "$DATASET/val.jsonl" --json | tee "$OUT/eval-adapter.json" || ok=1
	[ -s "$OUT/eval-base.json" ] && FACT[eval_base]="val loss $(json_get "$OUT/eval-base.json" 'round(d["loss"], 4)') without the adapter"
	[ -s "$OUT/eval-adapter.json" ] && FACT[eval_adapter]="val loss $(json_get "$OUT/eval-adapter.json" 'round(d["loss"], 4)') with the adapter ($TRAIN_STEPS steps)"
	if [ -n "$job" ]; then
		printf '+ %s job watch %s\n' "$MASSCTL" "$job"
		timeout -s INT 900 "$MASSCTL" job watch "$job" || ok=1
		"$MASSCTL" job show "$job" --json >"$OUT/train-job.json" 2>/dev/null || "$MASSCTL" job show "$job"
		local state
		state=$(json_get "$OUT/train-job.json" 'd.get("state", "?")' 2>/dev/null || echo "?")
		FACT[train_job]="massd job $job: $state, run in $OUT/data/runs/demo-job"
		[ "$state" = succeeded ] || { note "train job ended $state"; ok=1; }
	fi
	return $ok
}

s_generation() {
	local out=$OUT/cycle.json gen=$OUT/generation.json t0 secs hwm
	# One whole cycle at the paper's per-task sizes: a 3-iteration search on
	# each train task, then generation 1 with massd's defaults — 18 teacher
	# episodes per task (top-ups to 24 while fewer than 16 are eligible),
	# each episode against 6 ring neighbours, Bradley–Terry, ranks 1–15 train
	# and rank 16 validates — and a short LoRA run on the tiny model (massd
	# runs mass-train, whose default CPU backend is the fast `cpu` one).
	# The sizes are examples/cycle-demo.yaml's; DEMO_GEN_* flags override them.
	step "$MASSCTL" cycle run --config examples/cycle-demo.yaml --dry-run || return 1
	printf '+ %s cycle run --config examples/cycle-demo.yaml --tasks %s --episodes %s --train-steps %s --json > cycle.json\n' \
		"$MASSCTL" "$GEN_TASKS" "$GEN_EPISODES" "$GEN_STEPS"
	t0=$(date +%s)
	"$MASSCTL" cycle run --config examples/cycle-demo.yaml --tasks "$GEN_TASKS" --episodes "$GEN_EPISODES" \
		--train-steps "$GEN_STEPS" --json >"$out" || { cat "$out"; return 1; }
	secs=$(($(date +%s) - t0))
	hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$massd_pid/status" 2>/dev/null)
	"$MASSCTL" generation show 1 --json >"$gen" || return 1
	step "$MASSCTL" generation show 1 || return 1
	python3 - "$out" "$gen" "$secs" "${hwm:-0}" <<'PY' || return 1
import json, sys
cyc, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
secs, hwm = int(sys.argv[3]), int(sys.argv[4])
print(f"cycle wall time {secs}s; massd peak RSS (VmHWM) {hwm / 1024:.0f} MiB")
for task, s in sorted(cyc["generations"][0].get("search_seconds", {}).items()):
    print(f"  search {task:<16} {s:7.1f}s")
for st in d["stages"]:
    print(f"  stage  {st['name']:<16} {st['seconds']:7.1f}s")
for t in d["tasks"]:
    print(f"task {t['id']}: {t['episodes']} runs, {t['successful']} eligible, {t['judgments']} judgments ({t['invalid_judgments']} invalid), train {len(t['train'])}, val {len(t['val'])}")
tok = d["tokens"]
print(f"tokens: generated {tok['generated']}, stored supervised {tok['stored_supervised']}, processed supervised {tok['processed_supervised']}")
ok = d["status"] == "done" and d["adapter"] and d["merged"] and len(d["tasks"]) >= 1 and \
    all(len(t["train"]) == 15 and len(t["val"]) == 1 for t in d["tasks"])
sys.exit(0 if ok else 1)
PY
	step "$MASSCTL" model list || return 1
	"$MASSCTL" model list --json | python3 -c 'import json,sys; ms=json.load(sys.stdin); sys.exit(0 if any(m["name"] == "gen-1" for m in ms) else 1)' ||
		{ note "gen-1 is not registered"; return 1; }
	FACT[generation]="generation 1 of $GEN_TASKS in ${secs}s (massd VmHWM ${hwm:-?} kB): adapter $(json_get "$gen" 'd["adapter"]'), merged $(json_get "$gen" 'd["merged"]'), tokens $(json_get "$gen" 'json.dumps(d["tokens"])')"
	FACT[gen_model]="gen-1 registered (massctl model list)"
}

# s_report: the evaluation (issue 14). Restarts massd with two scripted
# external judges (seeds 42, 43, 44 each), rolls out the scripted base model,
# gen-1 (when the generation stage registered it) and scripted-gen-1 on the
# held-out task, judges every pair, writes the report page and a screenshot.
s_report() {
	local models=scripted,scripted-gen-1 gens=scripted-gen-1 n=${DEMO_EVAL_EPISODES:-3} i
	if "$MASSCTL" model list --json | python3 -c 'import json,sys; sys.exit(0 if any(m["name"] == "gen-1" for m in json.load(sys.stdin)) else 1)'; then
		models=scripted,gen-1,scripted-gen-1 gens="1 scripted-gen-1"
	fi
	stop_massd
	printf 'judges:  # the evaluation'"'"'s external judges, kept out of search and generation\n  - model: scripted-judge-1\n  - model: scripted-judge-2\n' >>"$OUT/massd.yaml"
	printf '+ %s --config %s &  (restarted with judges)\n' "$MASSD" "$OUT/massd.yaml"
	"$MASSD" --config "$OUT/massd.yaml" >>"$OUT/massd.log" 2>&1 &
	massd_pid=$!
	for i in $(seq 150); do "$MASSCTL" status >/dev/null 2>&1 && break; sleep 0.2; done
	"$MASSCTL" status >/dev/null 2>&1 || { note "massd did not come back with judges"; return 1; }
	step "$MASSCTL" eval rollout --tasks projectile-sim --models "$models" --episodes "$n" --name demo-eval --seed 3 --json >"$OUT/rollout.json" || return 1
	step "$MASSCTL" eval judge --rollout demo-eval --json >"$OUT/judgement.json" || return 1
	# shellcheck disable=SC2086 # gens is a list of arguments
	step "$MASSCTL" report --eval demo-eval --html "$OUT/report.html" $gens || return 1
	# shellcheck disable=SC2086
	"$MASSCTL" report --eval demo-eval --json $gens >"$OUT/report.json" || return 1
	# shellcheck disable=SC2086
	step "$MASSCTL" report --eval demo-eval $gens || return 1
	if command -v chromium >/dev/null; then
		local prof rc
		prof=$(mktemp -d)
		step chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$prof" \
			--window-size=1200,2400 --screenshot="$OUT/report.png" "file://$OUT/report.html" 2>/dev/null
		rc=$?
		rm -rf "$prof"
		[ "$rc" -eq 0 ] || return 1
	else
		note "chromium is not installed (scripts/setup-host.sh): no report.png"
	fi
	FACT[report]="$OUT/report.html ($(json_get "$OUT/report.json" 'len(d["runs"])') episodes, $(json_get "$OUT/report.json" 'd["verdicts"]') verdicts)"
}

s_stop() {
	step "$MASSCTL" job list
	printf '+ kill -TERM %s (massd)\n' "$massd_pid"
	stop_massd
	local left
	local ep left=0 n
	for ep in $EP1 $EP2; do
		n=$(($(docker ps -aq --filter "label=mass.episode=$ep" | wc -l) + $(docker volume ls -q --filter "label=mass.episode=$ep" | wc -l)))
		[ "$n" -eq 0 ] || note "episode $ep left $n containers/volumes behind"
		left=$((left + n))
	done
	[ "$left" -eq 0 ] || return 1
	note "massd stopped; no container or volume of the demo episodes left"
}

# ---- main ----

stage 0 "preflight: binaries, Docker engine, images" s_preflight || exit 1
stage 1 "start massd (private socket, scripted dry-run model)" s_start || exit 1
stage 2 "status, validate and add the example tasks" s_tasks
stage 3 "run an episode with the scripted model" s_episode
stage 4 "audit the episode and verify its ledger" s_audit
stage 5 "workflow search: 3 iterations, scripted executor/judge/optimizer" s_search
stage 6 "sandbox policy and isolation self-test" s_sandbox
stage 7 "build and show SFT windows" s_data
stage 8 "train, export and evaluate a tiny LoRA" s_train
stage 9 "cycle: search, collect, rank, select, train, export, gen-1" s_generation
stage 10 "evaluation: rollout, external judges, report page" s_report
stage 11 "stop massd" s_stop

# ---- console screenshots (massctl ui over the demo's data, headless Chromium) ----
# PNGs of the main console pages in $OUT/screenshots; skipped without chromium.
s_screenshots() {
	local browser ui_pid addr token ep task search p name cj
	browser=$(command -v chromium || command -v chromium-browser) || { note "chromium not installed (scripts/setup-host.sh): no screenshots"; return 2; }
	"$MASSD" --config "$OUT/massd.yaml" >>"$OUT/massd.log" 2>&1 &
	massd_pid=$!
	for _ in $(seq 150); do "$MASSCTL" status >/dev/null 2>&1 && break; sleep 0.2; done
	"$MASSCTL" ui --listen 127.0.0.1:0 >"$OUT/ui.log" 2>&1 &
	ui_pid=$!
	# massctl ui prints "console at http://ADDR/?token=TOKEN (...)"; every
	# page needs the token (each screenshot is a fresh browser profile).
	for _ in $(seq 50); do addr=$(sed -n 's|^console at \(http://[^/ ]*\)/?token=.*|\1|p' "$OUT/ui.log"); [ -n "$addr" ] && break; sleep 0.2; done
	token=$(sed -n 's|^console at http://[^/ ]*/?token=\([^ ]*\) .*|\1|p' "$OUT/ui.log")
	[ -n "$addr" ] || { note "massctl ui did not start: $(cat "$OUT/ui.log")"; kill "$ui_pid"; stop_massd; return 1; }
	ep=$(json_get "$OUT/generation.json" 'd["tasks"][0]["train"][0]')
	# The search of stage 5 (its folder is search/<task>/<search id>).
	search=$(json_get "$OUT/search.json" 'd["dir"]')
	task=$(basename "$(dirname "$search")")
	search=$(basename "$search")
	# The cycle job of stage 9: its page shows the stage and its numbers.
	cj=$("$MASSCTL" job list --kind cycle --json | python3 -c 'import json,sys; js=json.load(sys.stdin); print(js[0]["id"] if js else "")')
	mkdir -p "$OUT/screenshots"
	for p in "jobs|/" "transcript|/episodes/$ep/transcript" "audit|/episodes/$ep/audit" "workspace|/episodes/$ep/workspace" \
		"search|/searches/$task/$search" "generation|/generations/1" "cyclejob|/jobs/$cj"; do
		name=${p%%|*}
		"$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$sockdir/chromium-$name" \
			--window-size=1280,1500 --screenshot="$OUT/screenshots/$name.png" "$addr${p#*|}?token=$token" >/dev/null 2>&1 &&
			note "screenshot $OUT/screenshots/$name.png ($addr${p#*|})" || note "screenshot of ${p#*|} failed"
	done
	kill "$ui_pid"
	wait "$ui_pid" 2>/dev/null
	stop_massd
	[ -s "$OUT/screenshots/generation.png" ] && [ -s "$OUT/screenshots/transcript.png" ]
}
stage 12 "console screenshots (massctl ui, headless Chromium)" s_screenshots
exit 0
