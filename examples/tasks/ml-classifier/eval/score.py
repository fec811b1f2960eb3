"""Scores /workspace/predictions.csv against the protected test labels."""
import csv
import sys

def load(path, key="id", val="label"):
    with open(path, newline="") as f:
        return {row[key]: row[val].strip() for row in csv.DictReader(f)}

def main():
    truth = load("/workspace/eval/test_labels.csv")
    try:
        pred = load(sys.argv[1] if len(sys.argv) > 1 else "/workspace/predictions.csv")
    except (OSError, KeyError) as e:
        print(f"cannot read predictions: {e}")
        return 2
    missing = [k for k in truth if k not in pred]
    if missing:
        print(f"{len(missing)} test ids have no prediction, e.g. {missing[:3]}")
        return 1
    correct = sum(pred[k] == v for k, v in truth.items())
    print(f"accuracy {correct / len(truth):.4f} ({correct}/{len(truth)})")
    return 0

if __name__ == "__main__":
    sys.exit(main())
