#!/usr/bin/python3
"""Writes SciPy's answers for cycle/stats's golden tests.

Random inputs (seeded) for the Welch t-test, Fisher's exact test, the
exact sign test and the Clopper-Pearson interval, each with SciPy's result, as JSON. The Go test
(golden_test.go) recomputes every case and compares. Regenerate the
checked-in file with:  go test ./cycle/stats -run TestSciPyGolden -update
Needs Debian's python3-scipy.
"""
import argparse
import json
import math
import random

import scipy
from scipy import stats


def welch_cases(rng):
    cases = []
    # The paper's MLR-Bench shape: 12 tasks x 5 trials per model, the test
    # over the 60 trial scores of each side.
    for i in range(3):
        x, y = [], []
        for _ in range(12):
            level = rng.uniform(2, 8)
            x += [level + rng.gauss(0, 0.8) for _ in range(5)]
            y += [level + 0.6 * i + rng.gauss(0, 0.8) for _ in range(5)]
        cases.append({"name": f"mlr-bench-12x5-{i}", "x": x, "y": y})
    for i in range(24):
        nx, ny = rng.randint(2, 40), rng.randint(2, 40)
        scale = rng.choice([1e-3, 1, 1, 10, 1e3])
        sx, sy = scale * rng.uniform(0.1, 3), scale * rng.uniform(0.1, 3)
        shift = scale * rng.choice([0, 0.1, 1, 3, 40])
        x = [rng.gauss(0, sx) for _ in range(nx)]
        y = [rng.gauss(shift, sy) for _ in range(ny)]
        cases.append({"name": f"random-{i}", "x": x, "y": y})
    for c in cases:
        r = stats.ttest_ind(c["x"], c["y"], equal_var=False)
        c["t"], c["p"] = float(r.statistic), float(r.pvalue)
        df = getattr(r, "df", None)
        if df is None:  # SciPy < 1.11 does not return df
            vx, vy = stats.tvar(c["x"]) / len(c["x"]), stats.tvar(c["y"]) / len(c["y"])
            df = (vx + vy) ** 2 / (vx ** 2 / (len(c["x"]) - 1) + vy ** 2 / (len(c["y"]) - 1))
        c["df"] = float(df)
    return cases


def fisher_cases(rng):
    tables = [[[3, 5], [5, 3]], [[0, 5], [5, 0]], [[10, 0], [0, 10]], [[1, 1], [1, 1]],
              [[0, 0], [3, 4]], [[12, 18], [25, 5]], [[7, 2], [2, 7]], [[1, 9], [11, 3]]]
    for _ in range(30):
        top = rng.choice([3, 10, 30, 100, 400])
        tables.append([[rng.randint(0, top), rng.randint(0, top)], [rng.randint(0, top), rng.randint(0, top)]])
    cases = []
    for t in tables:
        r = stats.fisher_exact(t, alternative="two-sided")
        odds = float(r[0])
        cases.append({"table": t, "p": float(r[1]), "odds_ratio": odds if math.isfinite(odds) else None,
                      "odds_ratio_kind": "finite" if math.isfinite(odds) else ("inf" if odds > 0 else "nan")})
    return cases


def task_means(tasks):
    return [sum(t) / len(t) for t in tasks]


def sign_cases(rng):
    cases = []
    # The paper's case: 12 tasks, one tied, gen-1 ahead on 8 of the other 11.
    x, y = [], []
    for task in range(12):
        base = [rng.randint(0, 10) for _ in range(5)]
        x.append(base)
        if task == 11:
            y.append(list(base))
        elif task < 8:
            y.append([min(10, s + 1) for s in base] if sum(base) < 50 else base[:4] + [base[4] + 1])
        else:
            y.append([max(0, s - 1) for s in base] if sum(base) > 0 else base[:4] + [base[4] - 1])
    cases.append({"name": "paper-8-of-11", "x": y, "y": x})
    for i in range(24):
        ntask, ntrial = rng.randint(1, 30), rng.randint(1, 6)
        shift = rng.choice([0, 0, 1, 2])
        x = [[rng.randint(0, 10) for _ in range(ntrial)] for _ in range(ntask)]
        y = [[min(10, max(0, s + rng.randint(-2, 2 + shift))) for s in t] for t in x]
        for t in range(ntask):
            if rng.random() < 0.15:
                y[t] = list(x[t])
        cases.append({"name": f"random-{i}", "x": [[float(s) for s in t] for t in y], "y": [[float(s) for s in t] for t in x]})
    for c in cases:
        mx, my = task_means(c["x"]), task_means(c["y"])
        k = sum(1 for a, b in zip(mx, my) if a > b)
        n = sum(1 for a, b in zip(mx, my) if a != b)
        c["n"], c["positive"] = n, k
        c["p"] = float(stats.binomtest(k, n, 0.5).pvalue) if n > 0 else 1.0
    return cases


def exact_cases(rng):
    """Clopper-Pearson intervals: binomtest's proportion_ci(method="exact")."""
    kn = [(3, 3), (0, 3), (1, 3), (8, 11), (0, 1), (1, 1), (15, 29), (29, 29)]
    for _ in range(24):
        n = rng.randint(1, 60)
        kn.append((rng.randint(0, n), n))
    cases = []
    for k, n in kn:
        for level in (0.95, 0.9):
            ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
            cases.append({"k": k, "n": n, "level": level, "low": float(ci.low), "high": float(ci.high)})
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    doc = {"generator": f"scipy_golden.py --seed {a.seed}", "scipy": scipy.__version__,
           "welch": welch_cases(rng), "fisher": fisher_cases(rng), "sign": sign_cases(rng),
           "exact": exact_cases(rng)}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
