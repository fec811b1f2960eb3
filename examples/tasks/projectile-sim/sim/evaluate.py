"""Checks /workspace/answer.json with the protected simulator; it is also
the task's grader. Contract: answer.json is {"angle_deg": A, "speed_mps": S}
with 0 <= A <= 90 and 0 < S <= 40; it passes when the simulated landing
distance is within 0.5 m of 60 m. The score rewards a low speed
(1 - S/40). The last line of stdout is the verdict {"passed", "score"}."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simulator import landing_distance  # noqa: E402

TARGET = 60.0
TOLERANCE = 0.5
MAX_SPEED = 40.0

def verdict(passed, score, **extra):
    print(json.dumps({"passed": passed, "score": score, **extra}))
    return 0

def main():
    try:
        with open("/workspace/answer.json") as f:
            ans = json.load(f)
        angle, speed = float(ans["angle_deg"]), float(ans["speed_mps"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"FAIL cannot read answer.json: {e}")
        return verdict(False, 0.0, error="unreadable answer.json")
    if not (0 <= angle <= 90 and 0 < speed <= MAX_SPEED):
        print(f"FAIL out of range: angle {angle}, speed {speed}")
        return verdict(False, 0.0, error="out of range")
    d = landing_distance(angle, speed)
    ok = abs(d - TARGET) <= TOLERANCE
    print(f"{'PASS' if ok else 'FAIL'} distance {d:.3f} m (target {TARGET} m), speed {speed} m/s")
    return verdict(ok, round(1 - speed / MAX_SPEED, 4) if ok else 0.0, distance=round(d, 3))

if __name__ == "__main__":
    sys.exit(main())
