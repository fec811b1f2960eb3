"""Checks /workspace/answer.json with the protected simulator."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simulator import landing_distance  # noqa: E402

TARGET = 60.0

def main():
    try:
        with open("/workspace/answer.json") as f:
            ans = json.load(f)
        angle, speed = float(ans["angle_deg"]), float(ans["speed_mps"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"FAIL cannot read answer.json: {e}")
        return 1
    if not (0 <= angle <= 90 and 0 < speed <= 40):
        print(f"FAIL out of range: angle {angle}, speed {speed}")
        return 1
    d = landing_distance(angle, speed)
    ok = abs(d - TARGET) <= 0.5
    print(f"{'PASS' if ok else 'FAIL'} distance {d:.3f} m (target {TARGET} m), speed {speed} m/s")
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
