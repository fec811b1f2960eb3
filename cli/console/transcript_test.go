package console

import (
	"bytes"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/trainer/sft"
)

func synthRequests(tb testing.TB, workers, turns int) []byte {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "ep")
	if err := sft.WriteSyntheticEpisode(dir, sft.SynthSpec{EpisodeID: "ep-synth", TaskID: "t", Workers: workers,
		Turns: turns, ResponseWords: 60, ToolWords: 40, Seed: 1}); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, episodefmt.RequestsFile))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestReadTranscriptNestsThreads(t *testing.T) {
	ts, err := ReadTranscript(bytes.NewReader(synthRequests(t, 2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].Depth != 0 || ts[0].Parent != "" {
		t.Fatalf("threads = %d, first %+v; want the orchestrator first and two workers", len(ts), ts[0])
	}
	for _, th := range ts[1:] {
		if th.Depth != 1 || th.Parent != ts[0].ID || len(th.Calls) != 3 {
			t.Errorf("worker thread %s: depth %d parent %q calls %d", th.ID, th.Depth, th.Parent, len(th.Calls))
		}
		for i, c := range th.Calls {
			if len(c.New) == 0 {
				t.Errorf("%s call %d shows no new messages", th.ID, i)
			}
			if i > 0 && len(c.New) >= len(c.Request.Messages) {
				t.Errorf("%s call %d repeats the whole history (%d of %d)", th.ID, i, len(c.New), len(c.Request.Messages))
			}
		}
	}
	if _, err := ReadTranscript(strings.NewReader("{\"seq\":1}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v, want an error naming line 2", err)
	}
}

func renderTranscript(tb testing.TB, tmpl *template.Template, b []byte, w io.Writer) {
	ts, err := ReadTranscript(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	data := map[string]any{"Title": "t", "Where": "test", "Data": map[string]any{"ID": "ep-synth", "Threads": ts}}
	if err := tmpl.ExecuteTemplate(w, "transcript.html", data); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTranscriptPage reads and renders the transcript of an episode
// with 2,000 model calls (an orchestrator and 39 workers, 50 calls each).
func BenchmarkTranscriptPage(b *testing.B) {
	c, err := New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	reqs := synthRequests(b, 39, 50)
	b.SetBytes(int64(len(reqs)))
	b.ResetTimer()
	for range b.N {
		renderTranscript(b, c.tmpl, reqs, io.Discard)
	}
}

func FuzzReadTranscript(f *testing.F) {
	f.Add([]byte(`{"seq":1,"thread":"a","parent":"b"}` + "\n" + `{"seq":2,"thread":"b","parent":"a"}` + "\n"))
	f.Add([]byte(`{"seq":1,"agent":"o","request":{"messages":[{"role":"user","content":"x"}]}}`))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ReadTranscript(bytes.NewReader(b))
		if err != nil {
			return
		}
		n := 0
		seen := map[*Thread]bool{}
		for _, th := range ts {
			if seen[th] {
				t.Fatalf("thread %q listed twice", th.ID)
			}
			seen[th] = true
			n += len(th.Calls)
		}
		if n != bytes.Count(b, []byte("\n"))+1 && n > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("%d calls from %d lines", n, bytes.Count(b, []byte("\n"))+1)
		}
	})
}
