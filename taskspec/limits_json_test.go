package taskspec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLimitsJSON(t *testing.T) {
	l := Limits{EpisodeWallTime: 90 * time.Second, AgentWallTime: 45 * time.Second, AgentTurns: 7, Tokens: 1000, CPUs: 1.5, MemoryBytes: 1 << 30}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"episode_wall_time":"1m30s"`) {
		t.Fatalf("marshal wrote %s, want episode_wall_time as \"1m30s\"", b)
	}
	if !strings.Contains(string(b), `"agent_wall_time":"45s"`) {
		t.Fatalf("marshal wrote %s, want agent_wall_time as \"45s\"", b)
	}
	var back Limits
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != l {
		t.Fatalf("round trip: %+v, want %+v", back, l)
	}
	// Rows written before the string form hold nanoseconds.
	var old Limits
	if err := json.Unmarshal([]byte(`{"episode_wall_time":60000000000,"agent_turns":3}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.EpisodeWallTime != time.Minute || old.AgentTurns != 3 || old.AgentWallTime != 0 {
		t.Fatalf("legacy nanoseconds read as %+v", old)
	}
	for _, bad := range []string{`{"episode_wall_time":"soon"}`, `{"episode_wall_time":true}`, `{"episode_wall_time":1.5e400}`} {
		if err := json.Unmarshal([]byte(bad), &old); err == nil || !strings.Contains(err.Error(), "episode_wall_time") {
			t.Errorf("%s: error %v, want one naming episode_wall_time", bad, err)
		}
	}
	for _, bad := range []string{`{"agent_wall_time":"soon"}`, `{"agent_wall_time":true}`, `{"agent_wall_time":60000000000}`} {
		if err := json.Unmarshal([]byte(bad), &old); err == nil || !strings.Contains(err.Error(), "agent_wall_time") {
			t.Errorf("%s: error %v, want one naming agent_wall_time", bad, err)
		}
	}
}

// JSON written before agent_wall_time existed reads as unset, and an unset
// agent_wall_time is left out, so older readers see what they always saw.
func TestLimitsJSONWithoutAgentWallTime(t *testing.T) {
	const old = `{"episode_wall_time":"10m0s","agent_turns":3,"tokens":0,"cpus":0,"memory_bytes":0}`
	var l Limits
	if err := json.Unmarshal([]byte(old), &l); err != nil {
		t.Fatal(err)
	}
	if got, want := l, (Limits{EpisodeWallTime: 10 * time.Minute, AgentTurns: 3}); got != want {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "agent_wall_time") {
		t.Errorf("marshal wrote %s, want no agent_wall_time when unset", b)
	}
}

// A spec marshalled to JSON (the API's and the store's form) parses back to
// the same spec.
func TestSpecJSONRoundTrip(t *testing.T) {
	s, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"agent_wall_time":"10m0s"`) {
		t.Fatalf("spec JSON %s lacks agent_wall_time", b)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Limits, s.Limits; got != want {
		t.Errorf("json.Unmarshal: limits %+v, want %+v", got, want)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse of the spec's JSON: %v", err)
	}
	if got, want := again.Limits, s.Limits; got != want {
		t.Errorf("Parse: limits %+v, want %+v", got, want)
	}
}

func FuzzLimitsJSON(f *testing.F) {
	f.Add([]byte(`{"episode_wall_time":"30m","agent_turns":3}`))
	f.Add([]byte(`{"episode_wall_time":1800000000000}`))
	f.Add([]byte(`{"episode_wall_time":null}`))
	f.Add([]byte(`{"episode_wall_time":"30m","agent_wall_time":"5m"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Limits
		if json.Unmarshal(b, &l) != nil {
			return
		}
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("marshal of a decoded value: %v", err)
		}
		var again Limits
		if err := json.Unmarshal(out, &again); err != nil || again != l {
			t.Fatalf("round trip of %s: %+v (%v), want %+v", out, again, err, l)
		}
	})
}
