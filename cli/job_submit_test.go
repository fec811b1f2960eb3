package cli

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/daemontest"
)

// TestJobStartValidates submits jobs with misspelled, mistyped or
// impossible fields to a massd running the builtin kinds: each is refused
// with 400 naming the field and the fix, and no job is created.
func TestJobStartValidates(t *testing.T) {
	cfg := daemontest.Config(t)
	b, err := daemon.NewBuiltins(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	sock := daemontest.Start(t, daemon.Options{Config: cfg, Version: "t", Kinds: b.Kinds()}).Config.Socket
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"misspelled episode field", []string{"episode", "--task", "t1", "--params", `{"modle":"scripted"}`},
			[]string{`modle: unknown field`, `did you mean "model"?`, "known fields: model, "}},
		{"misspelled wait field", []string{"wait", "--params", `{"secnds":3}`},
			[]string{`secnds: unknown field`, `did you mean "seconds"?`}},
		{"wrong type", []string{"wait", "--params", `{"seconds":"three"}`},
			[]string{`seconds: got a JSON string, want a number`}},
		{"unknown model", []string{"episode", "--task", "t1", "--params", `{"model":"nosuch"}`},
			[]string{"model: ", `no model named "nosuch"`, "massctl model list"}},
		{"missing task", []string{"episode"}, []string{"task: ", "needs a task", "--task"}},
		{"unknown task", []string{"episode", "--task", "nosuch"}, []string{"task: ", `no task "nosuch"`, "massctl task add"}},
	}
	for _, c := range cases {
		out, err := run(t, append([]string{"--socket", sock, "job", "start"}, c.args...)...)
		if !errors.Is(err, api.ErrInvalid) {
			t.Errorf("%s: err = %v (output %q), want a 400 invalid", c.name, err, out)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
	out, err := run(t, "--socket", sock, "job", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var js []api.Job
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("job list --json: %v\n%s", err, out)
	}
	if len(js) != 0 {
		t.Errorf("refused submissions left %d jobs in the store: %+v", len(js), js)
	}
}
