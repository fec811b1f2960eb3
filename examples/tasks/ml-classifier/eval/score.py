"""Grader of ml-classifier (a hidden path: no agent ever sees this file or
the labels beside it). Contract: /workspace/predictions.csv has a header
id,label and one row per id of data/test_features.csv, label 0 or 1. It
passes when the test accuracy is at least PASS_ACCURACY. The last line of
stdout is the verdict {"passed": bool, "score": accuracy}."""
import csv
import json
import sys

PASS_ACCURACY = 0.80

def load(path, key="id", val="label"):
    with open(path, newline="") as f:
        return {row[key].strip(): row[val].strip() for row in csv.DictReader(f)}

def verdict(passed, score, **extra):
    print(json.dumps({"passed": passed, "score": score, **extra}))
    return 0

def main():
    truth = load("/workspace/eval/test_labels.csv")
    try:
        pred = load(sys.argv[1] if len(sys.argv) > 1 else "/workspace/predictions.csv")
    except (OSError, KeyError, UnicodeDecodeError, csv.Error) as e:
        print(f"cannot read predictions: {e}")
        return verdict(False, 0.0, error="unreadable predictions.csv")
    missing = [k for k in truth if k not in pred]
    if missing:
        print(f"{len(missing)} test ids have no prediction, e.g. {missing[:3]}")
        return verdict(False, 0.0, missing=len(missing))
    correct = sum(pred[k] == v for k, v in truth.items())
    acc = correct / len(truth)
    print(f"accuracy {acc:.4f} ({correct}/{len(truth)}), pass at {PASS_ACCURACY}")
    return verdict(acc >= PASS_ACCURACY, round(acc, 4))

if __name__ == "__main__":
    sys.exit(main())
