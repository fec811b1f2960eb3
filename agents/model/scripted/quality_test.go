package scripted

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/cycle/judge"
)

// teamExport is the workspace tar a three-agent team of the model leaves
// on sales-analysis at a seed: every file its workers write.
func teamExport(t *testing.T, modelID string, seed int) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, id := range []string{"analyst", "reporter", "checker-3"} {
		r := &fakeopenai.Request{Model: modelID, Seed: &seed}
		for _, c := range workerWrites(r, assignment{agent: id, recipe: "sales-analysis", index: i + 1, of: 3}, nil) {
			var args struct {
				FilePath string `json:"file_path"`
				Content  string `json:"content"`
			}
			if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(args.FilePath, "/workspace/")
			if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(args.Content))}); err != nil {
				t.Fatal(err)
			}
			tw.Write([]byte(args.Content))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// verdict asks the scripted evaluator through the real evaluator prompt
// about two exports' evidence bundles.
func verdict(t *testing.T, a, b []byte) string {
	t.Helper()
	req := []string{"report.md", "summary.json"}
	ba, err := judge.Build(bytes.NewReader(a), req)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := judge.Build(bytes.NewReader(b), req)
	if err != nil {
		t.Fatal(err)
	}
	p, err := judge.RenderPrompt(judge.Task{ID: "sales-analysis", Prompt: "p", Required: req}, ba.Render(), bb.Render())
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Winner string }
	if out := chat(t, Name, p.User, 1); json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("verdict %s", out)
	}
	return v.Winner
}

// TestSeedQualityVisibleInBundle: the seed's secondary quality and the
// per-model offset reach the evaluator only through the export's check
// files, and it ranks by them: higher quality wins, equal quality ties.
func TestSeedQualityVisibleInBundle(t *testing.T) {
	q := map[int]int{3: 0, 1: 1, 2: 2, 6: 0}
	for seed, want := range q {
		if SeedQuality(seed) != want {
			t.Fatalf("SeedQuality(%d) = %d, want %d", seed, SeedQuality(seed), want)
		}
	}
	ex := func(seed int) []byte { return teamExport(t, ModelID, seed) }
	for _, c := range []struct {
		a, b int
		want string
	}{{2, 3, "A"}, {1, 2, "B"}, {3, 1, "B"}, {3, 6, "tie"}} {
		if got := verdict(t, ex(c.a), ex(c.b)); got != c.want {
			t.Errorf("seed %d vs %d: winner %s, want %s", c.a, c.b, got, c.want)
		}
	}
	if got := verdict(t, teamExport(t, ModelID, 3), teamExport(t, ModelID+"-gen-1", 3)); got != "B" {
		t.Errorf("scripted vs scripted-gen-1 at one seed: winner %s, want B", got)
	}
}
