package taskspec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// `task show --json` printed grader.timeout in nanoseconds while the
// limits' wall times were strings.
func TestGraderJSON(t *testing.T) {
	g := Grader{Command: "python3 /workspace/tests/grade.py", Timeout: 2 * time.Minute}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"timeout":"2m0s"`) {
		t.Fatalf("marshal wrote %s", b)
	}
	var back Grader
	if err := json.Unmarshal(b, &back); err != nil || back != g {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"command":"x","timeout":120000000000}`), &back); err != nil || back.Timeout != 2*time.Minute {
		t.Fatalf("legacy nanoseconds: %+v %v", back, err)
	}
	if b, _ := json.Marshal(Grader{Command: "x"}); strings.Contains(string(b), "timeout") {
		t.Errorf("unset timeout written: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"command":"x","timeout":"soon"}`), &back); err == nil || !strings.Contains(err.Error(), "grader.timeout") {
		t.Errorf("bad timeout: %v", err)
	}
}
