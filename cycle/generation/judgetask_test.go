package generation

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// A reference task's bare query carries escaped newlines and the
// post-design "Use uv ..." suffix; the reference's ranking and evaluation
// judges read it cut at the marker, unescaped, trimmed
// (tasks/bare/query{q}.txt as its bundles() reads it). A generation's
// judge reads it so; a native task's prompt stays as written.
func TestGenerationJudgeReadsBareQueryAsReference(t *testing.T) {
	bare := "Forecast demand.\\n\\nDeliverables:\\n1) report.md\n\nUse uv for all Python workflows—run code with uv run.\n"
	want := "Forecast demand.\n\nDeliverables:\n1) report.md"
	var mu sync.Mutex
	var users []string
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		mu.Lock()
		users = append(users, r.FirstUser())
		mu.Unlock()
		return scripted.Policy(r)
	})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := model.New(model.Config{Name: "m", BaseURL: srv.URL(), Model: "fake", Backoff: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := datadir.New(t.TempDir())
	for _, ep := range []string{"ep-a", "ep-b"} {
		writeTar(t, filepath.Join(l.Episode(ep), "workspace.tar"), "report.md", "# report of "+ep)
	}
	for _, tc := range []struct {
		spec *taskspec.Spec
		want string
	}{
		{&taskspec.Spec{Prompt: bare, QueryTemplate: "query.txt", RequiredOutputs: []string{"report.md"}}, want},
		{&taskspec.Spec{Prompt: bare, RequiredOutputs: []string{"report.md"}}, strings.TrimSpace(bare)},
	} {
		users = nil
		j := svcJudge{m: judge.Clients(func(string) (model.Client, error) { return c, nil }), l: l,
			spec: func(string) (*taskspec.Spec, error) { return tc.spec, nil }}
		if _, err := j.Judge(context.Background(), JudgeRequest{Task: "query7", Key: "k", Model: "m", A: "ep-a", B: "ep-b"}); err != nil {
			t.Fatal(err)
		}
		if len(users) == 0 {
			t.Fatal("the judge was not asked")
		}
		if !strings.Contains(users[0], "## Task\n"+tc.want+"\n") {
			t.Errorf("template %q: the judge's task is not %q:\n%s", tc.spec.QueryTemplate, tc.want, users[0])
		}
	}
}

func writeTar(t *testing.T, path, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := tar.NewWriter(f)
	if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
