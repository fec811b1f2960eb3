package app

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestHuggingFaceRowsTrainAndEvaluate strips the toy rows to the plain
// Hugging Face form {"input_ids", "labels"} and trains and evaluates on them:
// the same numbers as on the full rows.
func TestHuggingFaceRowsTrainAndEvaluate(t *testing.T) {
	f := newToy(t)
	hf := filepath.Join(f.dir, "hf.jsonl")
	in, err := os.Open(f.val)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(hf)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var row struct {
			InputIDs []int32 `json:"input_ids"`
			Labels   []int32 `json:"labels"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(row)
		out.Write(append(b, '\n'))
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	full := evalJSON(t, "--model", f.model, "--data", f.val)
	plain := evalJSON(t, "--model", f.model, "--data", hf)
	// Plain rows carry no role, task or episode, so only the totals compare.
	if full.Loss != plain.Loss || full.SupervisedTokens != plain.SupervisedTokens || full.Windows != plain.Windows || full.Skipped != plain.Skipped {
		t.Errorf("eval on Hugging Face rows %+v, on full rows %+v", plain, full)
	}
	mustRun(t, "train", "--model", f.model, "--data", hf, "--out", filepath.Join(f.dir, "run-hf"), "--steps", "2",
		"--rank", "2", "--val-every", "0", "--ckpt-every", "2")
}
