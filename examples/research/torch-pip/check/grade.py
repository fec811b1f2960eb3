"""Grader of the torch-pip example: the metrics exist and the loss fell.

Its last stdout line is the verdict massd reads: {"passed": ..., "score": ...}.
"""
import json

verdict = {"passed": False}
try:
    with open("/workspace/results/metrics.json") as f:
        m = json.load(f)
    l0, l1, steps = float(m["initial_loss"]), float(m["final_loss"]), int(m["steps"])
    verdict["passed"] = 0 < steps <= 200 and 0 <= l1 < l0 / 4
    verdict["score"] = 1 - l1 / l0 if l0 > 0 else 0
    verdict["detail"] = f"loss {l0:.4f} -> {l1:.4f} in {steps} steps (want at most 200 and a 4x drop)"
except Exception as e:  # an unreadable metrics file fails the grade
    verdict["detail"] = f"results/metrics.json: {e}"
print(json.dumps(verdict))
