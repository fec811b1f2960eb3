"""Grader of sales-analysis (a hidden path: no agent sees it). It recomputes
revenue from the shipped data/sales.csv and checks /workspace/summary.json:
total_revenue (within 0.01), revenue_by_month and revenue_by_region (the
same keys, each within 0.01), top_product (equal); and /workspace/report.md
(1 to 300 words). It passes when every check does; the score is the share
of checks passed. The last line of stdout is the verdict {"passed", "score"}."""
import csv
import json
import sys
from collections import defaultdict

TOL = 0.01

def truth():
    month, region, product = defaultdict(float), defaultdict(float), defaultdict(float)
    total = 0.0
    with open("/workspace/data/sales.csv", newline="") as f:
        for r in csv.DictReader(f):
            rev = int(r["units"]) * float(r["unit_price"])
            total += rev
            month[r["date"][:7]] += rev
            region[r["region"]] += rev
            product[r["product"]] += rev
    return total, month, region, max(product, key=product.get)

def close_maps(got, want):
    if not isinstance(got, dict) or set(got) != set(want):
        return False
    try:
        return all(abs(float(got[k]) - v) <= TOL for k, v in want.items())
    except (TypeError, ValueError):
        return False

def main():
    total, month, region, top = truth()
    checks = {}
    try:
        with open("/workspace/summary.json") as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read summary.json: {e}")
        s = {}
    if not isinstance(s, dict):
        s = {}
    try:
        checks["total_revenue"] = abs(float(s.get("total_revenue")) - round(total, 2)) <= TOL
    except (TypeError, ValueError):
        checks["total_revenue"] = False
    checks["revenue_by_month"] = close_maps(s.get("revenue_by_month"), month)
    checks["revenue_by_region"] = close_maps(s.get("revenue_by_region"), region)
    checks["top_product"] = s.get("top_product") == top
    try:
        with open("/workspace/report.md", encoding="utf-8", errors="replace") as f:
            words = len(f.read().split())
    except OSError:
        words = 0
    checks["report_words"] = 1 <= words <= 300
    for k, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {k}")
    score = sum(checks.values()) / len(checks)
    print(json.dumps({"passed": all(checks.values()), "score": round(score, 4)}))
    return 0

if __name__ == "__main__":
    sys.exit(main())
