#!/usr/bin/python3
"""Side-by-side CPU benchmark: mass-train's LoRA step against plain PyTorch.

For each shape it writes a random model folder (mass-train init-model), lets
mass-train draw the windows and the initial adapter (bench-train --dump), then
runs mass-train bench-train and scripts/torch_lora_bench.py in turn, ROUNDS
times interleaved, on the same folder, windows, LoRA init and order, with the
same thread count. Prints one table: medians of CPU-seconds per step, the
ratio mass / torch, peak RSS of each, and the largest relative difference of
the per-step losses (the two compute the same thing).

Torch runs on OpenBLAS when Debian's libopenblas0-pthread is installed (its
libblas.so.3 is preloaded: Debian's torch links the reference BLAS); the
table's last line says which BLAS each torch run mapped.

Environment: MASS_TRAIN (bin/mass-train), BENCH_OUT (out/bench/torch),
BENCH_SHAPES (names below, comma-separated; default all), BENCH_ROUNDS (2),
BENCH_STEPS (timed steps per run, 2), BENCH_THREADS (nproc), BENCH_BACKEND (cpu).
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
Q06 = ["--config", "tiny", "--hidden", "1024", "--intermediate", "3072", "--heads", "16", "--kv-heads", "8", "--head-dim", "128"]
SHAPES = {
    "micro": (["--config", "micro"], [256, 1024, 4096]),
    "tiny": (["--config", "tiny"], [256, 1024, 4096]),
    "h512-l4": (["--config", "tiny", "--hidden", "512", "--intermediate", "1536", "--layers", "4",
                 "--heads", "8", "--kv-heads", "4", "--head-dim", "64"], [256, 1024]),
    "q06-l2": (Q06 + ["--layers", "2"], [256]),
    "q06-l4": (Q06 + ["--layers", "4"], [256]),
}
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"


def run_json(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"torch_bench: {' '.join(cmd)} failed ({p.returncode})")
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    return json.loads(lines[-1]), p.stderr


def main():
    mt = os.environ.get("MASS_TRAIN", os.path.join(ROOT, "bin", "mass-train"))
    out = os.environ.get("BENCH_OUT", os.path.join(ROOT, "out", "bench", "torch"))
    shapes = [s for s in (os.environ.get("BENCH_SHAPES") or ",".join(SHAPES)).split(",") if s]
    rounds = int(os.environ.get("BENCH_ROUNDS", "2"))
    steps = os.environ.get("BENCH_STEPS", "2")
    threads = os.environ.get("BENCH_THREADS", str(os.cpu_count()))
    backend = os.environ.get("BENCH_BACKEND", "cpu")
    os.makedirs(out, exist_ok=True)
    tenv = dict(os.environ, OMP_NUM_THREADS=threads)
    if os.path.exists(OPENBLAS):
        tenv["LD_PRELOAD"] = OPENBLAS
    menv = dict(os.environ, GOMAXPROCS=threads)
    rows, blas = [], set()
    for name in shapes:
        init, seqs = SHAPES[name]
        mdir = os.path.join(out, name)
        if not os.path.exists(os.path.join(mdir, "config.json")):
            subprocess.run([mt, "init-model", "--out", mdir] + init, check=True, capture_output=True)
        for seq in seqs:
            dump = os.path.join(out, f"{name}-T{seq}")
            common = ["--model", mdir, "--seq", str(seq), "--steps", steps, "--backend", backend]
            res = {"mass": [], "torch": []}
            for r in range(rounds):
                m, _ = run_json([mt, "bench-train", "--dump", dump] + common, env=menv)
                t, err = run_json([sys.executable, os.path.join(ROOT, "scripts", "torch_lora_bench.py"), mdir, dump,
                                   "--threads", threads], env=tenv)
                blas.update(t.get("blas", []))
                res["mass"].append(m)
                res["torch"].append(t)
                print(f"torch_bench: {name} T{seq} round {r + 1}: mass {m['cpu_s_per_step']:.3f} "
                      f"torch {t['cpu_s_per_step']:.3f} cpu-s/step", file=sys.stderr)
            rows.append((name, seq, res))
    print_table(rows, threads, blas)


def print_table(rows, threads, blas):
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    print(f"{'shape':<9} {'T':>5} {'mass cpu-s/step':>16} {'torch f32 cpu-s/step':>21} {'mass/torch':>10} "
          f"{'mass RSS MiB':>13} {'torch RSS MiB':>14} {'max loss diff':>14}")
    for name, seq, res in rows:
        m, t = med(res["mass"], "cpu_s_per_step"), med(res["torch"], "cpu_s_per_step")
        diff = max(abs(a - b) / abs(b) for a, b in zip(res["mass"][0]["losses"], res["torch"][0]["losses"]))
        print(f"{name:<9} {seq:>5} {m:>16.3f} {t:>21.3f} {m / t:>10.2f} "
              f"{med(res['mass'], 'peak_rss_mib'):>13.0f} {med(res['torch'], 'peak_rss_mib'):>14.0f} {diff:>14.1e}")
    print(f"threads {threads}; load {open('/proc/loadavg').read().split()[:3]}; torch BLAS: {', '.join(sorted(blas)) or 'none'}")


if __name__ == "__main__":
    main()
