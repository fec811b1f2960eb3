package sft

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func mkRow(task, role, thread string, ids []int32, sup []bool) Row {
	r := Row{InputIDs: ids, Labels: make([]int32, len(ids)), NTokens: len(ids), Task: task, Role: role, Thread: thread, Episode: "ep-" + task}
	for i := range ids {
		r.Labels[i] = IgnoreIndex
		if sup[i] {
			r.Labels[i] = ids[i]
			r.NLossTokens++
		}
	}
	return r
}

func TestRowsRoundTrip(t *testing.T) {
	rows := []Row{
		mkRow("a", RoleOrchestrator, "orchestrator", []int32{1, 2, 3}, []bool{false, true, true}),
		mkRow("b", RoleWorker, "worker-1", []int32{7}, []bool{true}),
	}
	var buf bytes.Buffer
	if err := WriteRows(&buf, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRows(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("got %+v, want %+v", got, rows)
	}
}

func TestReadRowsRejects(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "{", "line 1"},
		{"labels length", `{"input_ids":[1,2],"labels":[1],"n_tokens":2}`, "labels for"},
		{"bad label", `{"input_ids":[1,2],"labels":[5,-100],"n_tokens":2,"n_loss_tokens":1}`, "neither"},
		{"loss count", `{"input_ids":[1,2],"labels":[1,-100],"n_tokens":2,"n_loss_tokens":2}`, "n_loss_tokens"},
		{"empty", `{"input_ids":[],"labels":[]}`, "no tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadRows(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func FuzzReadRows(f *testing.F) {
	var buf bytes.Buffer
	WriteRows(&buf, []Row{mkRow("a", RoleWorker, "w", []int32{5, 6}, []bool{false, true})})
	f.Add(buf.String())
	f.Add(`{"input_ids":[1],"labels":[-100],"n_tokens":1}`)
	f.Add(`{"input_ids":[4,5],"labels":[-100,5]}`)
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ReadRows(strings.NewReader(s))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteRows(&out, rows); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRows(&out)
		if err != nil {
			t.Fatalf("rows written from accepted input do not read back: %v", err)
		}
		if !reflect.DeepEqual(back, rows) {
			t.Fatalf("round trip changed rows")
		}
	})
}

// TestHuggingFaceRows reads rows in the plain Hugging Face form: no counts,
// extra fields such as attention_mask; a count that is given still must hold.
func TestHuggingFaceRows(t *testing.T) {
	in := `{"input_ids":[7,8,9,10],"labels":[-100,8,9,-100],"attention_mask":[1,1,1,1]}
{"input_ids":[3,4],"labels":[3,4],"n_tokens":2}
`
	rows, err := ReadRows(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].NTokens != 4 || rows[0].NLossTokens != 2 || rows[1].NTokens != 2 || rows[1].NLossTokens != 2 {
		t.Fatalf("rows %+v: counts not derived", rows)
	}
	if _, err := ReadRows(strings.NewReader(`{"input_ids":[1,2,3],"labels":[1,2,3],"n_tokens":0}`)); err == nil || !strings.Contains(err.Error(), "n_tokens 0 but 3 input_ids") {
		t.Fatalf("an explicit wrong n_tokens: got %v", err)
	}
}
