package tools

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, tool, args string
		wantErr          string // substring; "" means success
	}{
		{"ok write", WriteFile, `{"file_path":"/workspace/a.py","content":"x"}`, ""},
		{"ok read paging", ReadFile, `{"file_path":"a.txt","offset":10,"limit":5}`, ""},
		{"ok integral float", ReadFile, `{"file_path":"a.txt","offset":10.0}`, ""},
		{"ok null optional", Grep, `{"pattern":"x","path":null}`, ""},
		{"empty args for tool without required", ListDir, ``, `missing required parameter "path"`},
		{"bad json", WriteFile, `{"file_path": "/workspace/a.py", "content": `, "not a JSON object"},
		{"not an object", WriteFile, `["a"]`, "not a JSON object"},
		{"null", WriteFile, `null`, "got null"},
		{"trailing", WriteFile, `{"file_path":"a","content":"b"} {}`, "trailing data"},
		{"unknown tool", "delete_everything", `{}`, `unknown tool "delete_everything"`},
		{"missing arg", Edit, `{"file_path":"a","old_string":"x"}`, `missing required parameter "new_string"`},
		{"wrong type string", WriteFile, `{"file_path":42,"content":"x"}`, `"file_path" must be a string, got a number`},
		{"wrong type int", ReadFile, `{"file_path":"a","offset":"10"}`, `"offset" must be an integer, got a string`},
		{"fractional int", ReadFile, `{"file_path":"a","limit":1.5}`, `must be an integer`},
		{"wrong type bool", Edit, `{"file_path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, `"replace_all" must be a boolean`},
		{"unknown param", Shell, `{"command":"ls","cwd":"/tmp"}`, `unknown parameter "cwd"`},
		{"bad enum", Agent, `{"description":"d","prompt":"p","subagent_type":"evil"}`, `must be one of general-purpose`},
		{"alias absolute_path", ReadFile, `{"absolute_path":"/workspace/a"}`, ""},
		{"alias twice", ReadFile, `{"file_path":"/workspace/a","path":"/workspace/b"}`, "only once"},
		{"huge number", ReadFile, `{"file_path":"a","offset":1e400}`, "out of range"},
		{"legacy replace", "replace", `{"file_path":"a","old_string":"x","new_string":"y"}`, ""},
		{"legacy task without subagent_type", "task", `{"description":"d","prompt":"p","run_in_background":false}`, ""},
		{"pages range", ReadFile, `{"file_path":"a","pages":"2-4"}`, ""},
		{"pages open-ended", ReadFile, `{"file_path":"a","pages":"3-"}`, "must be a page or a range"},
		{"pages backwards", ReadFile, `{"file_path":"a","pages":"4-2"}`, "must not run backwards"},
		{"pages zero", ReadFile, `{"file_path":"a","pages":"0"}`, "count from 1"},
		{"timeout too long", Shell, `{"command":"ls","timeout":600001}`, "between 1 and 600000"},
		{"timeout zero", Shell, `{"command":"ls","timeout":0}`, "between 1 and 600000"},
		{"empty command", Shell, `{"command":"  "}`, "must not be empty"},
		{"grep limit zero", Grep, `{"pattern":"x","limit":0}`, "positive"},
		{"ignore not strings", ListDir, `{"path":"/w","ignore":[1]}`, `"ignore[0]" must be a string`},
		{"filter option unknown", ListDir, `{"path":"/w","file_filtering_options":{"respect_all":true}}`, `unknown parameter "file_filtering_options.respect_all"`},
		{"todo missing id", TodoWrite, `{"todos":[{"content":"c","status":"pending"}]}`, `missing required parameter "todos[0].id"`},
		{"todo bad status", TodoWrite, `{"todos":[{"id":"1","content":"c","status":"done"}]}`, "must be one of pending"},
		{"todo empty content", TodoWrite, `{"todos":[{"id":"1","content":" ","status":"pending"}]}`, "must not be empty"},
		{"todo duplicate ids", TodoWrite, `{"todos":[{"id":"1","content":"a","status":"pending"},{"id":"1","content":"b","status":"pending"}]}`, "must be unique"},
		{"todo null item", TodoWrite, `{"todos":[null]}`, "must not be null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, a, err := Parse(tt.tool, tt.args)
			if err == nil {
				err = Validate(spec, a)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tt.wantErr)
			}
			if !errors.Is(err, ErrArgs) {
				t.Errorf("error %v does not wrap ErrArgs", err)
			}
			if got, want := err.Error(), tt.wantErr; !strings.Contains(got, want) {
				t.Errorf("error = %q, want it to contain %q", got, want)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	_, a, err := Parse(Edit, `{"file_path":"/workspace/x","old_string":"a","new_string":"b","replace_all":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.String("file_path"), "/workspace/x"; got != want {
		t.Errorf("file_path = %q, want %q", got, want)
	}
	if got, want := a.Bool("replace_all"), true; got != want {
		t.Errorf("replace_all = %v, want %v", got, want)
	}
	_, a, err = Parse(ReadFile, `{"file_path":"x","limit":7}`)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := a.Int("limit")
	if got, want := n, int64(7); !ok || got != want {
		t.Errorf("limit = %d (%v), want %d", got, ok, want)
	}
	if _, ok := a.Int("offset"); ok {
		t.Error("offset reported present, want absent")
	}
}

func TestSchemasMatchParser(t *testing.T) {
	for _, tool := range OpenAI(Orchestrator()) {
		spec, ok := Lookup(tool.Function.Name)
		if !ok {
			t.Fatalf("tool %s has no spec", tool.Function.Name)
		}
		params := tool.Function.Parameters.(map[string]any)
		props := params["properties"].(map[string]any)
		if got, want := len(props), len(spec.Params); got != want {
			t.Errorf("%s: %d properties, want %d", spec.Name, got, want)
		}
	}
	if got, want := len(Worker()), len(Orchestrator())-1; got != want {
		t.Errorf("worker tools = %d, want %d", got, want)
	}
	for _, s := range Worker() {
		if s.Name == Agent {
			t.Error("workers must not get the agent tool")
		}
	}
}

func TestCap(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "0123456789\n[... truncated: 10 of 13 bytes shown ...]"},
		{"ééééé", 3, "é\n[... truncated: 2 of 10 bytes shown ...]"},
	}
	for _, tt := range tests {
		if got := Cap(tt.in, tt.max); got != tt.want {
			t.Errorf("Cap(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestAbs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.py", "/workspace/a.py"},
		{"/workspace/x/../y", "/workspace/y"},
		{"../../etc/passwd", "/etc/passwd"},
		{"/tmp/z", "/tmp/z"},
	}
	for _, tt := range tests {
		if got := Abs(tt.in); got != tt.want {
			t.Errorf("Abs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds := [][2]string{
		{WriteFile, `{"file_path":"/workspace/a.py","content":"print(1)"}`},
		{ReadFile, `{"file_path":"a","offset":1,"limit":2}`},
		{Edit, `{"file_path":"a","old_string":"x","new_string":"y","replace_all":false}`},
		{Shell, `{"command":"ls","timeout":1000}`},
		{Agent, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`},
		{Grep, `{"pattern":"(","glob":"*.py","limit":3}`},
		{TodoWrite, `{"todos":[{"id":"1","content":"c","status":"pending"}]}`},
		{ListDir, `{"path":"/w","ignore":["*.log"],"file_filtering_options":{"respect_git_ignore":false}}`},
		{"task", `{"description":"d","prompt":"p","run_in_background":true}`},
		{ReadFile, `{"file_path":"a","pages":"1-2"}`},
		{"nope", `{`},
		{ReadFile, `{"file_path":"a","offset":-1e308}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		spec, a, err := Parse(name, args)
		if err == nil {
			err = Validate(spec, a)
		}
		if err != nil {
			if !errors.Is(err, ErrArgs) {
				t.Fatalf("error %v does not wrap ErrArgs", err)
			}
			return
		}
		for _, p := range spec.Params {
			if p.Required && !a.Has(p.Name) {
				t.Fatalf("accepted %s without required %s", name, p.Name)
			}
		}
	})
}

func TestIgnoreMatcher(t *testing.T) {
	m := ignoreMatcher([]string{"*.log", "tmp?", "a[1].txt"})
	for name, want := range map[string]bool{"x.log": true, "x.log.1": false, "tmp1": true, "tmp12": false, "a[1].txt": true, "a1.txt": false, "main.py": false} {
		if got := m(name); got != want {
			t.Errorf("ignore(%q) = %v, want %v", name, got, want)
		}
	}
}
