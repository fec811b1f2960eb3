package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPythonDumps(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": [true, false, null]}`, `{"b": 1, "a": [true, false, null]}`},
		{`{"z":{"y":"x"},"a":""}`, `{"z": {"y": "x"}, "a": ""}`},
		{`"caf\u00e9 \ud83d\ude00 中"`, `"café 😀 中"`},
		{`"tab\tnl\ncr\rq\"bs\\sl\/ctl\u0001del\u007f"`, `"tab\tnl\ncr\rq\"bs\\sl/ctl\u0001del` + "\x7f" + `"`},
		{`[1.0, 1.5, 1e-5, 1E16, 1e15, 0.0001, -0, -0.0, 12345678901234567890, 2.5e+3, 1e400]`,
			`[1.0, 1.5, 1e-05, 1e+16, 1000000000000000.0, 0.0001, 0, -0.0, 12345678901234567890, 2500.0, Infinity]`},
		{`{"a":1,"a":2,"b":3}`, `{"a": 2, "b": 3}`},
		{`[]`, `[]`},
		{`{}`, `{}`},
	}
	for _, tt := range tests {
		v, err := ParseJSON(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := v.Python(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestParseJSONRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `[1,]`, `01`, `1.`, `"\x"`, "\"a\x01\"", `tru`, `{"a":1}x`, `"\ud83d`, strings.Repeat("[", 600) + strings.Repeat("]", 600)} {
		if _, err := ParseJSON(in); err == nil {
			t.Errorf("%q: want error", in)
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"file_path": "/workspace/a.py", "content": "x"}`, `[1, 2.5e3, null, "\u00e9"]`, `{"a":{"b":[]}}`, `"\ud83d\ude00"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseJSON(s)
		if err != nil {
			return
		}
		// Whatever parses must agree with encoding/json on validity, and the Python form must
		// parse back to the same Python form.
		if !json.Valid([]byte(s)) {
			t.Fatalf("accepted invalid JSON %q", s)
		}
		p := v.Python()
		if strings.Contains(p, "Infinity") || strings.Contains(p, "NaN") {
			return
		}
		w, err := ParseJSON(p)
		if err != nil {
			t.Fatalf("python form %q of %q does not parse: %v", p, s, err)
		}
		if got := w.Python(); got != p {
			t.Fatalf("not stable: %q then %q", p, got)
		}
	})
}
