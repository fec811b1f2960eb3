package judge

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// endpoint serves replies in order over the OpenAI wire protocol.
func endpoint(t *testing.T, replies ...string) (Clients, *fakeopenai.Server) {
	t.Helper()
	n := 0
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := replies[min(n, len(replies)-1)]
		n++
		return fakeopenai.Reply{Content: rep}
	})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := model.New(model.Config{Name: "judge", BaseURL: srv.URL(), Model: "fake", MaxConcurrency: 1, Backoff: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return func(string) (model.Client, error) { return c, nil }, srv
}

func sides(t *testing.T) (Side, Side) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.tar")
	b := filepath.Join(dir, "b.tar")
	os.WriteFile(a, mkTar(t, ent{name: "report.md", typ: tar.TypeReg, body: "# A report"}), 0o600)
	os.WriteFile(b, mkTar(t, ent{name: "notes.txt", typ: tar.TypeReg, body: "B"}), 0o600)
	return Side{Label: "reference", Tar: a}, Side{Label: "v1", Tar: b}
}

func TestRunRetriesThenValid(t *testing.T) {
	c, srv := endpoint(t, "I think A.", `{"winner":"B"}`, `{"winner":"A","rationale":"A has the report"}`)
	first, second := sides(t)
	res, p, err := Run(context.Background(), c, Request{Key: "k", Task: Task{Prompt: "do it", Domain: "finance", Required: []string{"report.md"}},
		First: first, Second: second, Model: "judge", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusValid || res.Attempts != 3 || len(res.Errors) != 2 || res.Winner != WinnerA || res.WinnerLabel != res.A {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(p.System, "finance") || !strings.Contains(p.User, Marker) {
		t.Fatal(p.Full())
	}
	reqs := srv.Requests()
	last := reqs[2].Messages
	if !strings.Contains(last[len(last)-1].Content, `no non-empty "rationale"`) {
		t.Fatalf("retry did not show the parse error: %q", last[len(last)-1].Content)
	}
	if res.Swapped != (res.A == "v1") {
		t.Fatalf("swapped %v but A is %s", res.Swapped, res.A)
	}
}

func TestRunInvalidAfterThree(t *testing.T) {
	c, srv := endpoint(t, "no json here")
	first, second := sides(t)
	res, _, err := Run(context.Background(), c, Request{Key: "k", First: first, Second: second, Model: "judge"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusInvalid || res.Winner != StatusInvalid || res.Attempts != MaxAttempts || len(srv.Requests()) != MaxAttempts {
		t.Fatalf("%+v", res)
	}
}

// Attempts 1 is the reference's single judge call: an unparseable reply is
// not asked again.
func TestRunOneAttempt(t *testing.T) {
	c, srv := endpoint(t, "no json here", `{"winner":"A","rationale":"r"}`)
	first, second := sides(t)
	res, _, err := Run(context.Background(), c, Request{Key: "k", First: first, Second: second, Model: "judge", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusInvalid || res.Attempts != 1 || len(srv.Requests()) != 1 {
		t.Fatalf("%+v", res)
	}
}

func TestSwappedVariesWithSeed(t *testing.T) {
	seen := map[bool]bool{}
	for s := int64(0); s < 16; s++ {
		seen[Swapped(s, "k")] = true
	}
	if !seen[true] || !seen[false] {
		t.Fatal("sides never vary")
	}
}

func TestRunCorruptExportIsInvalid(t *testing.T) {
	c, srv := endpoint(t, `{"winner":"A","rationale":"r"}`)
	first, second := sides(t)
	os.WriteFile(second.Tar, []byte("not a tar at all, but long enough to be read as a header block"), 0o600)
	res, _, err := Run(context.Background(), c, Request{Key: "k", First: first, Second: second, Model: "judge"})
	if err != nil || res.Status != StatusInvalid || len(res.Errors) != 1 || len(srv.Requests()) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}
