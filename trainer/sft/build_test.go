package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

const fixtureDir = "../tokenizer/testdata"

var (
	fixOnce sync.Once
	fixTok  *tokenizer.Tokenizer
	fixTmpl *chat.Template
	fixErr  error
)

func fixtures(tb testing.TB) (*tokenizer.Tokenizer, *chat.Template) {
	tb.Helper()
	fixOnce.Do(func() {
		if fixTok, fixErr = tokenizer.Load(fixtureDir); fixErr == nil {
			fixTmpl, fixErr = chat.LoadTemplate(fixtureDir)
		}
	})
	if fixErr != nil {
		tb.Fatal(fixErr)
	}
	return fixTok, fixTmpl
}

// rec builds one api_requests.jsonl record.
type rec struct {
	seq            int
	thread, role   string
	msgs           []map[string]any
	content, think string
	call           string // tool call command, "" for none
	finish, status string
}

func (r rec) line() []byte {
	var calls []map[string]any
	if r.call != "" {
		args, _ := json.Marshal(map[string]string{"command": r.call})
		calls = append(calls, map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "run_shell_command", "arguments": string(args)}})
	}
	status := r.status
	if status == "" {
		status = "ok"
	}
	finish := r.finish
	if finish == "" {
		finish = "stop"
	}
	m := map[string]any{"seq": r.seq, "agent": r.thread, "thread": r.thread, "role": r.role, "status": status,
		"request":  map[string]any{"messages": r.msgs, "tools": []any{}},
		"response": map[string]any{"content": r.content, "reasoning_content": r.think, "tool_calls": calls, "finish_reason": finish}}
	if status != "ok" {
		m["response"] = nil
	}
	b, _ := json.Marshal(m)
	return append(b, '\n')
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func asst(content, call string) map[string]any {
	m := msg("assistant", content)
	if call != "" {
		args, _ := json.Marshal(map[string]string{"command": call})
		m["tool_calls"] = []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "run_shell_command", "arguments": string(args)}}}
	}
	return m
}

const (
	bareTask = "Forecast the series in /workspace/data.csv."
	teacher  = bareTask + "\n\nWORKFLOW: use a data worker.\nDIRECTIVE: delegate."
)

// writeKnownEpisode writes an episode whose threads exercise every reconstruction rule.
func writeKnownEpisode(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(EpisodeMeta{EpisodeID: "ep-known", TaskID: "task-a", Mode: "workflow", Prompt: bareTask, TeacherPrompt: teacher})
	if err := os.WriteFile(filepath.Join(dir, "episode.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteCleanStatus(dir, "ep-known"); err != nil {
		t.Fatal(err)
	}
	sys := msg("system", "You are the orchestrator.")
	u1 := msg("user", teacher)
	a1 := asst("Delegating ORCH-ONE.", "echo step-one")
	t1 := map[string]any{"role": "tool", "content": "step-one TOOL-OUTPUT", "tool_call_id": "c"}
	a2 := asst("ORCH-TWO done.", "")
	u2 := msg("user", "SECOND-QUESTION please")
	wsys := msg("system", "You are worker-1.")
	wu := msg("user", "ASSIGNMENT: write /workspace/a.py")
	w1 := asst("WORKER-RETRY-ANSWER", "python3 /workspace/a.py")
	wt := map[string]any{"role": "tool", "content": "ok", "tool_call_id": "c"}
	records := []rec{
		{seq: 1, thread: "orchestrator", role: "orchestrator", msgs: []map[string]any{sys, u1}, content: "Delegating ORCH-ONE.", think: "REASON-ONE", call: "echo step-one", finish: "tool_calls"},
		{seq: 2, thread: "worker-1", role: "worker", msgs: []map[string]any{wsys, wu}, content: "WORKER-FIRST-TRY", think: "w", call: "python3 /workspace/a.py", finish: "tool_calls"},
		{seq: 3, thread: "worker-1", role: "worker", msgs: []map[string]any{wsys, wu}, content: "WORKER-RETRY-ANSWER", think: "WORKER-REASON", call: "python3 /workspace/a.py", finish: "tool_calls"},
		{seq: 4, thread: "worker-1", role: "worker", msgs: []map[string]any{wsys, wu, w1, wt}, content: "WORKER-DONE", think: "w2"},
		{seq: 5, thread: "orchestrator", role: "orchestrator", msgs: []map[string]any{sys, u1, a1, t1}, content: "ORCH-TWO done.", think: "REASON-TWO"},
		{seq: 6, thread: "orchestrator", role: "orchestrator", status: "error", msgs: []map[string]any{sys, u1, a1, t1, a2, u2}},
		{seq: 7, thread: "orchestrator", role: "orchestrator", msgs: []map[string]any{sys, u1, a1, t1, a2, u2}, content: "ANSWER-THREE", think: "REASON-THREE"},
		{seq: 8, thread: "orchestrator", role: "orchestrator", msgs: []map[string]any{sys, msg("user", "UNRELATED")}, content: "CUT", think: "x", finish: "length"},
	}
	var b []byte
	for _, r := range records {
		b = append(b, r.line()...)
	}
	if err := os.WriteFile(filepath.Join(dir, "api_requests.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func build(t *testing.T, epDir string, w WindowConfig) (*Manifest, []Row, string) {
	t.Helper()
	tok, tmpl := fixtures(t)
	out := t.TempDir()
	m, err := Build(context.Background(), BuildConfig{Tokenizer: tok, Template: tmpl, Window: w, Workers: 2}, []string{epDir}, out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadRows(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, rows, out
}

func decode(t *testing.T, ids []int32) string {
	tok, _ := fixtures(t)
	s, err := tok.Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// supervisedText decodes the supervised tokens of a row, runs separated by "|".
func supervisedText(t *testing.T, r Row) string {
	var parts []string
	var cur []int32
	for i, l := range r.Labels {
		if l != IgnoreIndex {
			cur = append(cur, r.InputIDs[i])
		} else if len(cur) > 0 {
			parts, cur = append(parts, decode(t, cur)), nil
		}
	}
	if len(cur) > 0 {
		parts = append(parts, decode(t, cur))
	}
	return strings.Join(parts, "|")
}

func TestBuildKnownEpisode(t *testing.T) {
	ep := filepath.Join(t.TempDir(), "ep-known")
	writeKnownEpisode(t, ep)
	m, rows, _ := build(t, ep, DefaultWindowConfig())

	type key struct {
		thread  string
		segment int
	}
	byKey := map[key]Row{}
	for _, r := range rows {
		if r.Window != 0 {
			t.Errorf("%s/%d: unexpected window %d with the default size", r.Thread, r.Segment, r.Window)
		}
		byKey[key{r.Thread, r.Segment}] = r
	}
	if got, want := len(rows), 3; got != want {
		t.Fatalf("rows: got %d, want %d", got, want)
	}
	o0, o1, w0 := byKey[key{"orchestrator", 0}], byKey[key{"orchestrator", 1}], byKey[key{"worker-1", 0}]

	tests := []struct {
		name string
		got  string
		want string
	}{
		{"orchestrator segment 0 supervision", supervisedText(t, o0),
			"<think>\nREASON-ONE\n</think>\n\nDelegating ORCH-ONE.\n<tool_call>\n{\"name\": \"run_shell_command\", \"arguments\": {\"command\": \"echo step-one\"}}\n</tool_call><|im_end|>|" +
				"<think>\nREASON-TWO\n</think>\n\nORCH-TWO done.<|im_end|>"},
		{"orchestrator segment 1 supervision", supervisedText(t, o1), "<think>\nREASON-THREE\n</think>\n\nANSWER-THREE<|im_end|>"},
		{"worker supervision", supervisedText(t, w0),
			"<think>\nWORKER-REASON\n</think>\n\nWORKER-RETRY-ANSWER\n<tool_call>\n{\"name\": \"run_shell_command\", \"arguments\": {\"command\": \"python3 /workspace/a.py\"}}\n</tool_call><|im_end|>|" +
				"<think>\nw2\n</think>\n\nWORKER-DONE<|im_end|>"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}

	// Teacher prompt replaced by the bare task; worker assignment kept as sent.
	for _, r := range []Row{o0, o1} {
		text := decode(t, r.InputIDs)
		if strings.Contains(text, "DIRECTIVE") || !strings.Contains(text, "<|im_start|>user\n"+bareTask+"<|im_end|>") {
			t.Errorf("orchestrator segment %d: teacher prompt not replaced:\n%s", r.Segment, text)
		}
	}
	if text := decode(t, w0.InputIDs); !strings.Contains(text, "ASSIGNMENT: write /workspace/a.py") || strings.Contains(text, "WORKER-FIRST-TRY") {
		t.Errorf("worker: assignment or retry handling wrong:\n%s", text)
	}
	// Segment 1 sees the earlier turns as the server showed them: reasoning dropped.
	if text := decode(t, o1.InputIDs); strings.Contains(text, "REASON-ONE") || !strings.Contains(text, "ORCH-TWO done.") {
		t.Errorf("segment 1 history wrong:\n%s", text)
	}
	// The header (system + first user turn) is masked; loss starts right after the
	// assistant header of the first assistant turn.
	text := decode(t, o0.InputIDs)
	first := 0
	for o0.Labels[first] == IgnoreIndex {
		first++
	}
	if got, want := decode(t, o0.InputIDs[:first]), text[:strings.Index(text, "<|im_start|>assistant\n")+len("<|im_start|>assistant\n")]; got != want {
		t.Errorf("masked prefix:\n got %q\nwant %q", got, want)
	}

	if got, want := m.Stats, (Stats{Calls: 8, ErrorCalls: 1, Retries: 1, LengthCut: 1, TeacherReplaced: 1, TeacherMissing: 1}); got != want {
		t.Errorf("stats: got %+v, want %+v", got, want)
	}
	if got, want := m.Dropped["no_supervised_tokens"], 1; got != want {
		t.Errorf("dropped: got %d, want %d", got, want)
	}
	var sup int64
	for _, r := range rows {
		sup += int64(r.NLossTokens)
	}
	if got, want := m.Total.SupervisedTokens, sup; got != want {
		t.Errorf("manifest supervised: got %d, want %d", got, want)
	}
	if got, want := m.ByTask["task-a"].ByRole[RoleOrchestrator].Windows, 2; got != want {
		t.Errorf("orchestrator windows: got %d, want %d", got, want)
	}
}

// TestBuildSmallWindows forces one loss block per window and checks the masked context.
func TestBuildSmallWindows(t *testing.T) {
	ep := filepath.Join(t.TempDir(), "ep-known")
	writeKnownEpisode(t, ep)
	_, big, _ := build(t, ep, DefaultWindowConfig())
	var full Row
	for _, r := range big {
		if r.Thread == "orchestrator" && r.Segment == 0 {
			full = r
		}
	}
	// Locate the two blocks of segment 0 in the full window: block 2 starts at the
	// "<|im_start|>" of the tool response turn.
	tok, _ := fixtures(t)
	imStart, _ := tok.TokenID("<|im_start|>")
	var starts []int
	for i, id := range full.InputIDs {
		if id == imStart {
			starts = append(starts, i)
		}
	}
	// turns: system, user, assistant, user(tool), assistant
	if len(starts) != 5 {
		t.Fatalf("want 5 turns, got %d", len(starts))
	}
	h, b2 := starts[2], starts[3]
	const ctxTokens = 5
	// Room for block 1 alone, or for the context and block 2, but not for both blocks.
	maxTok := h + max(b2-h, ctxTokens+len(full.InputIDs)-b2)
	if len(full.InputIDs) <= maxTok {
		t.Fatalf("test needs block 1 (%d tokens) longer than the context", b2-h)
	}
	_, rows, out := build(t, ep, WindowConfig{MaxTokens: maxTok, ContextTokens: ctxTokens})
	var w []Row
	for _, r := range rows {
		if r.Thread == "orchestrator" && r.Segment == 0 {
			w = append(w, r)
		}
		if r.NTokens > maxTok {
			t.Errorf("window of %d tokens exceeds %d", r.NTokens, maxTok)
		}
	}
	if len(w) != 2 {
		t.Fatalf("want 2 windows for segment 0, got %d", len(w))
	}
	if got, want := w[0].InputIDs, full.InputIDs[:b2]; !reflect.DeepEqual(got, want) {
		t.Errorf("window 0: got %d tokens, want header + block 1 (%d)", len(got), len(want))
	}
	want1 := append(append([]int32{}, full.InputIDs[:h]...), full.InputIDs[b2-ctxTokens:]...)
	if !reflect.DeepEqual(w[1].InputIDs, want1) {
		t.Errorf("window 1: got %q\nwant %q", decode(t, w[1].InputIDs), decode(t, want1))
	}
	for i := 0; i < h+ctxTokens; i++ {
		if w[1].Labels[i] != IgnoreIndex {
			t.Fatalf("window 1: header/context token %d is supervised", i)
		}
	}
	if got, want := w[0].NLossTokens+w[1].NLossTokens, full.NLossTokens; got != want {
		t.Errorf("supervised tokens split over windows: got %d, want %d", got, want)
	}

	// The binary form holds the same rows.
	bin, m, err := ReadDataset(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Total.Windows, len(rows); got != want {
		t.Errorf("manifest windows: got %d, want %d", got, want)
	}
	if !reflect.DeepEqual(bin, rows) {
		t.Error("windows.bin differs from rows.jsonl")
	}
}

func TestBuildRejectsBadEpisode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ep-bad")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"episode.json":       `{"episode_id":"x","task_id":"t"}`,
		"api_requests.jsonl": "{\"seq\":1}\n{not json\n",
		"run_status.json":    `{"exit":"completed","outputs_present":true,"guards":{"integrity_checked":true}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tok, tmpl := fixtures(t)
	out := t.TempDir()
	_, err := Build(context.Background(), BuildConfig{Tokenizer: tok, Template: tmpl, Window: DefaultWindowConfig()}, []string{dir}, out)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("failed build left files: %v", ents)
	}
}

// TestBuildSplitsLongTurns uses windows smaller than one assistant turn: turns are cut into
// pieces, no window exceeds the limit, and every supervised token is kept exactly once.
func TestBuildSplitsLongTurns(t *testing.T) {
	ep := filepath.Join(t.TempDir(), "ep-known")
	writeKnownEpisode(t, ep)
	_, big, _ := build(t, ep, DefaultWindowConfig())
	want := map[string]int{}
	for _, r := range big {
		want[fmt.Sprintf("%s/%d", r.Thread, r.Segment)] += r.NLossTokens
	}
	// The largest header is the orchestrator's (system + bare task): about 30 tokens.
	const maxTok = 48
	m, rows, _ := build(t, ep, WindowConfig{MaxTokens: maxTok, ContextTokens: 4})
	got := map[string]int{}
	for _, r := range rows {
		if r.NTokens > maxTok {
			t.Errorf("%s/%d/%d: %d tokens > %d", r.Thread, r.Segment, r.Window, r.NTokens, maxTok)
		}
		got[fmt.Sprintf("%s/%d", r.Thread, r.Segment)] += r.NLossTokens
	}
	if len(m.Dropped) > 1 || m.Dropped["header_too_long"] != 0 {
		t.Fatalf("unexpected drops %v (header too long for the test window?)", m.Dropped)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("supervised tokens per segment: got %v, want %v", got, want)
	}
	if len(rows) <= len(big) {
		t.Errorf("got %d windows, want more than %d", len(rows), len(big))
	}
}
