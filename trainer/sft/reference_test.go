package sft

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// refRow is a row as the reference's prepare_sft_data.py writes it (json.dumps of its
// window dict): an integer task and the reference's extra fields.
const refRow = `{"input_ids": [1, 2, 3, 4], "labels": [-100, -100, 3, 4], "n_tokens": 4, "n_loss_tokens": 2, ` +
	`"blocks": [2, 4], "ctx_blocks": [], "loss_blocks": [2, 3], "header_tokens": 2, "segment": 0, ` +
	`"episode": "t51_teacher_v10_s1", "condition": "t51_teacher_v10", "seed": 1, "thread": "a1b2c3d4e5", "task": 51, ` +
	`"is_main": true, "role": "orchestrator", "match_mode": "exact", "window": 0, "n_windows": 1, "success": true, "weight": 1.0}`

// TestReferenceRowLoads: e9e71d1 failed this with "rows line 1: json: cannot unmarshal
// number into Go struct field Row.task of type string".
func TestReferenceRowLoads(t *testing.T) {
	rows, err := ReadRows(strings.NewReader(refRow + "\n" + strings.Replace(refRow, `"task": 51`, `"task": null`, 1) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Task != "51" || r.Condition != "t51_teacher_v10" || r.HeaderTokens != 2 || r.Weight == nil || *r.Weight != 1 ||
			r.Role != RoleOrchestrator || !r.IsMain || r.NLossTokens != 2 || len(r.LossBlocks) != 2 {
			t.Errorf("got %+v", r)
		}
	}
	if _, err := ReadRows(strings.NewReader(strings.Replace(refRow, `"task": 51`, `"task": 5.5`, 1))); err == nil {
		t.Error("a fractional task loaded")
	}
}

// TestReferenceRowsWritten checks rows written in the reference format against what the
// reference's load_windows and samplers index: condition, an int()-able task (agreeing
// with the condition's t<N>_ prefix), labels with a supervised token after the first,
// role, is_main, episode; and that they load back here.
func TestReferenceRowsWritten(t *testing.T) {
	var buf bytes.Buffer
	rw := newRowsWriter(&buf, FormatReference)
	in := []Row{
		mkRow("task-b", RoleWorker, "th1", []int32{5, 6, 7}, []bool{false, true, true}),
		mkRow("7", RoleOrchestrator, "th2", []int32{5, 6}, []bool{false, true}),
		mkRow("task-a", RoleOrchestrator, "th3", []int32{5, 6}, []bool{false, true}),
		mkRow("task-b", RoleOrchestrator, "th4", []int32{5, 6}, []bool{false, true}),
	}
	for i := range in {
		if err := rw.write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.flush(); err != nil {
		t.Fatal(err)
	}
	wantTask := []int{0, 7, 1, 0}
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		cond, _ := r["condition"].(string)
		task, ok := r["task"].(float64)
		if !ok || int(task) != wantTask[i] || !strings.HasPrefix(cond, fmt.Sprintf("t%d_", wantTask[i])) {
			t.Errorf("row %d: task %v condition %q", i, r["task"], cond)
		}
		for _, k := range []string{"input_ids", "labels", "role", "is_main", "episode", "weight", "thread", "window", "segment"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %d lacks %s", i, k)
			}
		}
	}
	back, err := ReadRows(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(in) || back[0].Role != RoleWorker || back[1].Task != "7" {
		t.Errorf("read back %+v", back)
	}
}

// FuzzRowReader reads arbitrary rows.jsonl text: rows or an error, never a panic, and
// every row it returns is valid.
func FuzzRowReader(f *testing.F) {
	f.Add(refRow + "\n")
	f.Add(`{"input_ids":[1,2],"labels":[-100,2],"task":"t","role":"worker"}` + "\n")
	f.Add(`{"input_ids":[1],"labels":[1],"task":null,"condition":"t3_x"}` + "\n\n{}")
	f.Fuzz(func(t *testing.T, s string) {
		rr := NewRowReader(strings.NewReader(s))
		for {
			r, err := rr.Next()
			if err != nil {
				return
			}
			if err := r.Validate(); err != nil {
				t.Fatalf("returned an invalid row: %v", err)
			}
		}
	})
}
