package taskspec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLimitsJSON(t *testing.T) {
	l := Limits{EpisodeWallTime: 90 * time.Second, AgentTurns: 7, Tokens: 1000, CPUs: 1.5, MemoryBytes: 1 << 30}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"episode_wall_time":"1m30s"`) {
		t.Fatalf("marshal wrote %s, want episode_wall_time as \"1m30s\"", b)
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
	if old.EpisodeWallTime != time.Minute || old.AgentTurns != 3 {
		t.Fatalf("legacy nanoseconds read as %+v", old)
	}
	for _, bad := range []string{`{"episode_wall_time":"soon"}`, `{"episode_wall_time":true}`, `{"episode_wall_time":1.5e400}`} {
		if err := json.Unmarshal([]byte(bad), &old); err == nil || !strings.Contains(err.Error(), "episode_wall_time") {
			t.Errorf("%s: error %v, want one naming episode_wall_time", bad, err)
		}
	}
}

func FuzzLimitsJSON(f *testing.F) {
	f.Add([]byte(`{"episode_wall_time":"30m","agent_turns":3}`))
	f.Add([]byte(`{"episode_wall_time":1800000000000}`))
	f.Add([]byte(`{"episode_wall_time":null}`))
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
