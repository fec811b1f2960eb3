package sft

import (
	"strings"
	"testing"
)

func TestParseSelection(t *testing.T) {
	s, err := ParseSelection([]byte(`{"train":["ep-1","ep-2"],"val":["ep-3"]}`))
	if err != nil || len(s.Train) != 2 || len(s.Val) != 1 {
		t.Fatalf("%+v %v", s, err)
	}
	train, val, err := s.Split([]string{"/d/ep-1", "/d/ep-2", "/d/ep-3", "/d/ep-4"})
	if err != nil || len(train) != 2 || val[0] != "/d/ep-3" {
		t.Fatalf("split %v %v %v", train, val, err)
	}
	if _, _, err := s.Split([]string{"/d/ep-1"}); err == nil {
		t.Error("split with a missing episode: no error")
	}
	for doc, want := range map[string]string{
		`{"train":["a"],"val":["a"]}`: "appears in",
		`{"train":["../x"]}`:          "not an episode id",
		`{"train":[]}`:                "empty",
		`{"train":["a"],"extra":1}`:   "unknown field",
		`[1]`:                         "parse selection",
		`{"train":["a"]} {}`:          "trailing",
	} {
		if _, err := ParseSelection([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}

func FuzzParseSelection(f *testing.F) {
	f.Add([]byte(`{"train":["ep-1"],"val":["ep-2"]}`))
	f.Add([]byte(`{"train":["a","a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSelection(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, id := range append(append([]string{}, s.Train...), s.Val...) {
			if seen[id] || id == "" || strings.ContainsRune(id, '/') {
				t.Fatalf("accepted %q in %+v", id, s)
			}
			seen[id] = true
		}
	})
}
