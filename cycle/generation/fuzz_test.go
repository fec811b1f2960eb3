package generation

import (
	"encoding/json"
	"testing"
)

// FuzzParseParams: job params come from any API client; a bad document is
// an error, never a panic, and an accepted one survives a round trip.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{`{"tasks":["a"]}`, `{"tasks":["a","b"],"episodes":18,"opponents":6,"seed":-1}`,
		`{"tasks":[]}`, `{"tasks":["a"],"opponents":3}`, `{"tasks":["a"],"generations":2}`, `null`, `[]`, `{"tasks":["a","a"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseParams(b)
		if err == nil {
			again, _ := json.Marshal(p)
			if _, err := ParseParams(again); err != nil {
				t.Fatalf("accepted %s, refused its round trip %s: %v", b, again, err)
			}
		}
		_, _ = ParseCycleParams(b)
	})
}
