package episode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/agent"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// longWorker is a worker that reads a 4 KB chunk per turn for 24 turns and
// then reports; the orchestrator delegates it once. Compression requests
// are the scripted model's.
func longWorker() fakeopenai.Policy {
	var mu sync.Mutex
	steps := 0
	return func(r *fakeopenai.Request) fakeopenai.Reply {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[0].Content, "<state_snapshot>") {
			return scripted.Policy(r)
		}
		if r.HasTool("agent") {
			if r.Turn() == 0 {
				return fakeopenai.Reply{Calls: []fakeopenai.Call{{Name: "agent",
					Arguments: `{"description":"read chunks","prompt":"Read the chunks one by one, then report."}`}}}
			}
			return fakeopenai.Reply{Content: "the worker read every chunk"}
		}
		mu.Lock()
		steps++
		n := steps
		mu.Unlock()
		if n > 24 {
			return fakeopenai.Reply{Reasoning: "all read", Content: "read 24 chunks"}
		}
		cmd := fmt.Sprintf("echo chunk %d; printf '%%04000d' 0", n)
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return fakeopenai.Reply{Reasoning: fmt.Sprintf("read chunk %d", n), Calls: []fakeopenai.Call{{Name: "run_shell_command", Arguments: string(b)}}}
	}
}

// A long conversation crosses the compression threshold (70% of a 16k
// window): the summary side query is recorded as an auxiliary thread, the
// worker's next call carries the compression, and the SFT builder starts a
// new segment there, so that every response the worker generated is
// supervised exactly once and nothing it did not generate (the summary's
// acknowledgement) is.
func TestCompressionSegments(t *testing.T) {
	d, _ := fakeModel(t, longWorker(), nil)
	d.Compress = agent.Compression{ContextWindow: 16000}
	st, dir := runEpisode(t, d, testTask(t, 3*time.Minute), "")
	if st.Exit != ExitCompleted {
		t.Fatalf("episode ended %s (%s): %s", st.Exit, st.Failure, st.Reason)
	}
	recs, err := record.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	var responses []string // what worker-1 generated, in order
	compressions, marked := 0, 0
	for _, r := range recs {
		switch {
		case r.Purpose == record.PurposeCompression:
			compressions++
			if r.Role != record.RoleAuxiliary || r.Thread != fmt.Sprintf("worker-1/compress-%d", compressions) {
				t.Errorf("compression call recorded as role %q thread %q", r.Role, r.Thread)
			}
		case r.Agent == "worker-1":
			responses = append(responses, responseKey(r.Response.Content, r.Response.ReasoningContent))
			if c := r.Compression; c != nil {
				marked++
				if m := r.Request.Messages; len(m) < 3 || m[2].Content != agent.CompressAck || !strings.Contains(m[1].Content, "<state_snapshot>") {
					t.Errorf("first call after compression does not start with summary and acknowledgement: %+v", m[:min(3, len(m))])
				}
			}
		}
	}
	if compressions == 0 || marked != compressions {
		t.Fatalf("%d compression side queries, %d calls marked after one; want at least one of each, equal", compressions, marked)
	}
	for _, row := range auditEpisode(t, dir, st.EpisodeID).Agents {
		if row.Agent == "worker-1" && row.Turns != len(responses) {
			t.Errorf("audit counts %d turns of worker-1, want %d (side queries are not turns)", row.Turns, len(responses))
		}
	}
	ep, err := sft.LoadEpisode(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stats sft.Stats
	segs := sft.Segments(ep, true, &stats)
	var supervised []string
	workerSegs := 0
	for _, s := range segs {
		if s.Thread != "worker-1" {
			if strings.HasPrefix(s.Thread, "worker-1/compress-") && s.SupervisedFrom != len(s.Messages)-1 {
				t.Errorf("summary thread %s supervises from %d of %d messages; want only its response", s.Thread, s.SupervisedFrom, len(s.Messages))
			}
			continue
		}
		workerSegs++
		for i := s.SupervisedFrom; i < len(s.Messages); i++ {
			if m := s.Messages[i]; m.Role == "assistant" {
				supervised = append(supervised, responseKey(m.Content, deref(m.Reasoning)))
			}
		}
	}
	if workerSegs != compressions+1 {
		t.Errorf("worker-1 has %d SFT segments, want %d (one more than its compressions)", workerSegs, compressions+1)
	}
	if got, want := strings.Join(supervised, "|"), strings.Join(responses, "|"); got != want {
		t.Errorf("supervised worker turns differ from what the worker generated:\n got  %s\n want %s", got, want)
	}
	t.Logf("%d compressions, %d worker segments, %d supervised worker turns", compressions, workerSegs, len(supervised))
	checkWindows(t, segs, "worker-1", workerSegs)
}

// checkWindows renders and windows the thread's segments: every segment
// gives at least one window with supervised tokens, and no supervised
// token spells the acknowledgement nobody generated.
func checkWindows(t *testing.T, segs []sft.Segment, thread string, want int) {
	t.Helper()
	const fixtures = "../../trainer/tokenizer/testdata"
	tok, err := tokenizer.Load(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.LoadTemplate(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	withRows := 0
	for i := range segs {
		s := &segs[i]
		if s.Thread != thread {
			continue
		}
		r, err := tmpl.Render(s.Messages, s.Tools, chat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sft.Windows(s, r, chat.Encode(tok, r), sft.DefaultWindowConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			withRows++
		}
		for _, row := range rows {
			var ids []int32
			for _, l := range row.Labels {
				if l != sft.IgnoreIndex {
					ids = append(ids, l)
				}
			}
			text, _ := tok.Decode(ids)
			if strings.Contains(text, agent.CompressAck) {
				t.Errorf("segment %d window %d supervises the compression acknowledgement", s.Index, row.Window)
			}
		}
	}
	if withRows != want {
		t.Errorf("%d of the %d segments of %s gave windows", withRows, want, thread)
	}
}

func responseKey(content, reasoning string) string { return reasoning + "/" + content }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
