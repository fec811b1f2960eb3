package judge

import (
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	ok := map[string]string{
		`{"winner":"A","rationale":"r"}`: "A",
		"thinking {not json} then\n```json\n{\"winner\":\" b \",\"rationale\":\"x\"}\n```": "B",
		`{"winner":"A","rationale":"first"} {"winner":"tie","rationale":"final"}`:          "tie",
		`{"winner":"A","rationale":"has } and { in it","extra":1}`:                         "A",
	}
	for in, want := range ok {
		v, err := ParseVerdict(in)
		if err != nil || v.Winner != want {
			t.Errorf("%q: %v %v", in, v, err)
		}
	}
	bad := []string{"", "A wins", `{"winner":"C","rationale":"r"}`, `{"winner":"A"}`, `{"winner":"A","rationale":"  "}`,
		`{"rationale":"r"}`, `{"winner":1,"rationale":"r"}`, strings.Repeat("{", MaxReply+1)}
	for _, in := range bad {
		if _, err := ParseVerdict(in); err == nil {
			t.Errorf("%.40q parsed", in)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	f.Add(`{"winner":"A","rationale":"r"}`)
	f.Add("```json\n{\"winner\":\"tie\",\"rationale\":\"\\\"}\"}\n```")
	f.Add(strings.Repeat(`{"a":[`, 1000))
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerdict(s)
		if err != nil {
			return
		}
		if v.Winner != WinnerA && v.Winner != WinnerB && v.Winner != WinnerTie {
			t.Fatalf("winner %q", v.Winner)
		}
		if strings.TrimSpace(v.Rationale) == "" {
			t.Fatal("empty rationale accepted")
		}
	})
}
