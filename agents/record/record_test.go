package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func sample(i int) Record {
	return Record{
		TS: time.Now(), Agent: fmt.Sprintf("worker-%d", i%3), Thread: fmt.Sprintf("worker-%d", i%3), Role: RoleWorker, Parent: "orchestrator",
		Request: Request{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: fmt.Sprintf("task %d", i)}}},
		Response: &Response{Content: "ok", ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function",
			Function: openai.FunctionCall{Name: "write_file", Arguments: `{"b": 1, "a": 2}`}}}, FinishReason: "tool_calls"},
		Status: StatusOK,
	}
}

func TestWriterConcurrentAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "api_requests.jsonl")
	w, err := Open(p, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.Append(sample(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 40; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
	for i, r := range recs {
		if got, want := r.Seq, int64(i+1); got != want {
			t.Errorf("record %d seq = %d, want %d", i, got, want)
		}
		if got, want := r.Episode, "ep-1"; got != want {
			t.Errorf("episode = %q, want %q", got, want)
		}
		// Arguments keep the model's text (key order) verbatim.
		if got, want := r.Response.ToolCalls[0].Function.Arguments, `{"b": 1, "a": 2}`; got != want {
			t.Errorf("arguments = %q, want %q", got, want)
		}
	}
	if _, err := w.Append(sample(0)); err == nil {
		t.Error("append after close succeeded")
	}
}

func TestReopenCutsTornTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "api_requests.jsonl")
	w, err := Open(p, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := w.Append(sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":4,"ts":"2026-`); err != nil { // a write cut off by kill -9
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, err := ReadFile(p); err != nil || len(recs) != 3 {
		t.Fatalf("ReadFile with torn tail = %d records, %v; want 3, nil", len(recs), err)
	}
	w, err = Open(p, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	seq, err := w.Append(sample(9))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got, want := seq, int64(4); got != want {
		t.Errorf("seq after reopen = %d, want %d", got, want)
	}
	recs, err := ReadFile(p)
	if err != nil || len(recs) != 4 {
		t.Fatalf("after reopen: %d records, %v; want 4", len(recs), err)
	}
}

func TestReadRejects(t *testing.T) {
	good, _ := json.Marshal(Record{Seq: 1, Status: StatusOK})
	tests := []struct {
		name string
		data string
	}{
		{"garbage mid-file", "nope\n" + string(good) + "\n"},
		{"gap", string(good) + "\n" + `{"seq":3,"status":"ok"}` + "\n" + string(good) + "\n"},
		{"bad status", `{"seq":1,"status":"maybe"}` + "\n" + string(good) + "\n"},
		{"first seq not 1", `{"seq":2,"status":"ok"}` + "\n" + `{"seq":3,"status":"ok"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader([]byte(tt.data))); err == nil {
				t.Error("Read succeeded, want error")
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	one, _ := encode(sample(1))
	var r1 Record
	json.Unmarshal(one, &r1)
	r1.Seq = 1
	one, _ = encode(r1)
	f.Add(one)
	f.Add(append(one, []byte(`{"seq":2,"status":"error","response":null}`+"\n")...))
	f.Add([]byte("{\"seq\":1,\"status\":\"ok\"}\n{\"se"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i, r := range recs {
			if r.Seq != int64(i+1) {
				t.Fatalf("accepted seq %d at index %d", r.Seq, i)
			}
		}
	})
}
