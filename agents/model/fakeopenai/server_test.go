package fakeopenai

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func serve(t *testing.T, p Policy) *Server {
	t.Helper()
	s := New(p)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestErrorsAreOpenAIShaped(t *testing.T) {
	s := serve(t, func(*Request) Reply { return Reply{Status: 429, Error: "slow down"} })
	tests := []struct {
		name, body string
		code       int
		msg        string
	}{
		{"not json", `{"model":`, 400, "not a JSON object"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, 400, "model parameter"},
		{"no messages", `{"model":"m","messages":[]}`, 400, "non-empty"},
		{"policy error", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 429, "slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, s, tt.body)
			if got, want := resp.StatusCode, tt.code; got != want {
				t.Errorf("status = %d, want %d", got, want)
			}
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(e.Error.Message, tt.msg) || e.Error.Type == "" {
				t.Errorf("error = %+v, want message containing %q and a type", e.Error, tt.msg)
			}
		})
	}
}

func TestStreamFraming(t *testing.T) {
	s := serve(t, func(*Request) Reply {
		return Reply{Reasoning: "hmm", Content: strings.Repeat("é", 20), Calls: []Call{{Name: "glob", Arguments: `{"pattern": "**/*.py"}`}}}
	})
	resp := post(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`)
	if got, want := resp.Header.Get("Content-Type"), "text/event-stream"; got != want {
		t.Fatalf("content type = %q, want %q", got, want)
	}
	var content, args strings.Builder
	var finish string
	usage, done := false, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct{ Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *Usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		usage = usage || ch.Usage != nil
		for _, c := range ch.Choices {
			content.WriteString(c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if got, want := content.String(), strings.Repeat("é", 20); got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if got, want := args.String(), `{"pattern": "**/*.py"}`; got != want {
		t.Errorf("arguments = %q, want %q", got, want)
	}
	if got, want := finish, "tool_calls"; got != want {
		t.Errorf("finish = %q, want %q", got, want)
	}
	if !usage || !done {
		t.Errorf("usage chunk %v, [DONE] %v; want both", usage, done)
	}
}

func TestModels(t *testing.T) {
	s := New(func(*Request) Reply { return Reply{} }, WithModelID("m1"))
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"id":"m1"`) {
		t.Errorf("models = %s, want m1 listed", b)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"x","arguments":"{}"}}]}],"stream":true}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		if r.Model == "" || len(r.Messages) == 0 {
			t.Fatalf("accepted a request without model or messages: %s", b)
		}
		_ = r.Turn()
		_ = r.FirstUser()
	})
}
