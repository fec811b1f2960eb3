package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func runRank(stdin string, args ...string) (stdout, stderr string, err error) {
	app := App("test")
	var out, errb bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = strings.NewReader(stdin), &out, &errb
	err = app.Run(append([]string{"massctl"}, args...))
	return out.String(), errb.String(), err
}

const rankMatches = `{"a":"ep-1","b":"ep-2","winner":"ep-1","rationale":"r","model":"m","seed":42,"metrics":{}}
{"a":"ep-2","b":"ep-3","winner":"A"}
{"a":"ep-3","b":"ep-1","winner":"B"}
{"a":"ep-1","b":"ep-4","winner":"tie"}
{"a":"ep-4","b":"ep-3","winner":"ep-4"}
{"a":"ep-2","b":"ep-4","winner":"error"}
{"a":"ep-2","b":"ep-4","winner":"B"}
{"a":"ep-3","b":"ep-2","winner":"error"}
`

func TestRankJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "task0_matches.jsonl")
	if err := os.WriteFile(path, []byte(rankMatches), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runRank("", "rank", "--matches", path, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var out struct {
		Episodes []struct {
			ID                 string
			Score, Strength    float64
			Rank               int
			Wins, Losses, Ties int
		}
		Excluded *int
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decode %s: %v", stdout, err)
	}
	if out.Excluded == nil || *out.Excluded != 2 {
		t.Errorf("excluded %v, want 2", out.Excluded)
	}
	// ep-1 and ep-4 have mirror records (each beat ep-2 and ep-3 and tied
	// the other): equal scores, ordered by id. Then ep-2 (W1 L2), ep-3 (L3).
	wantOrder := []string{"ep-1", "ep-4", "ep-2", "ep-3"}
	wantRec := map[string][3]int{"ep-1": {2, 0, 1}, "ep-4": {2, 0, 1}, "ep-2": {1, 2, 0}, "ep-3": {0, 3, 0}}
	if len(out.Episodes) != 4 {
		t.Fatalf("episodes %+v", out.Episodes)
	}
	sum := 0.0
	for i, e := range out.Episodes {
		if e.Rank != i+1 {
			t.Errorf("position %d has rank %d", i, e.Rank)
		}
		if rec := [3]int{e.Wins, e.Losses, e.Ties}; rec != wantRec[e.ID] {
			t.Errorf("%s: record %v, want %v", e.ID, rec, wantRec[e.ID])
		}
		sum += e.Strength
	}
	if got := []string{out.Episodes[0].ID, out.Episodes[1].ID, out.Episodes[2].ID, out.Episodes[3].ID}; strings.Join(got, ",") != strings.Join(wantOrder, ",") {
		t.Errorf("order %v, want %v", got, wantOrder)
	}
	if sum < 3.999999 || sum > 4.000001 {
		t.Errorf("strengths sum to %v, want mean 1", sum)
	}

	// Text output and stdin give the same ranking.
	text, _, err := runRank(rankMatches, "rank", "--matches", "-", "--iterations", "50", "--prior", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "RANK") || !strings.Contains(text, "6 valid judgments, 2 invalid excluded") {
		t.Errorf("text output:\n%s", text)
	}
}

func TestRankSchedule(t *testing.T) {
	stdout, _, err := runRank("", "rank", "schedule", "--episodes", "18", "--opponents", "6", "--seed", "7", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Pairs []struct{ A, B string } }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pairs) != 54 {
		t.Fatalf("%d pairs, want 54", len(out.Pairs))
	}
	meets := map[string]int{}
	for _, p := range out.Pairs {
		meets[p.A]++
		meets[p.B]++
	}
	for i := 0; i < 18; i++ {
		if id := strconv.Itoa(i); meets[id] != 6 {
			t.Errorf("episode %s meets %d, want 6", id, meets[id])
		}
	}
	again, _, _ := runRank("", "rank", "schedule", "--episodes", "18", "--opponents", "6", "--seed", "7", "--json")
	if again != stdout {
		t.Error("same seed printed a different schedule")
	}
}

func TestRankErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"a":"x","b":"y","winner":"x"}`+"\nnot json\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rank"}, "needs --matches FILE"},
		{[]string{"rank", "--matches", filepath.Join(dir, "missing.jsonl")}, "open matches"},
		{[]string{"rank", "--matches", bad}, "bad.jsonl: matches line 2: not a JSON object"},
		{[]string{"rank", "--matches", bad, "--prior", "0"}, "--prior 0 must be positive"},
		{[]string{"rank", "--matches", bad, "--iterations", "0"}, "--iterations 0 must be positive"},
		{[]string{"rank", "file.jsonl"}, "takes no arguments"},
		{[]string{"rank", "schedule", "--episodes", "5", "--opponents", "3"}, "must be even"},
		{[]string{"rank", "schedule"}, `"episodes"`},
	} {
		_, _, err := runRank("", c.args...)
		if err == nil || !strings.Contains(Explain(err), c.want) {
			t.Errorf("massctl %v: error %v, want %q", c.args, err, c.want)
		}
	}
}
