package cli

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/anthropic"
	"github.com/mass-dev/mass/agents/model/fakeanthropic"
	"github.com/mass-dev/mass/agents/model/fakeresponses"
	"github.com/mass-dev/mass/agents/model/responses"
	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

const (
	gptKey    = "sk-proj-e2e-gpt-0123456789abcdef"
	claudeKey = "sk-ant-api03-e2e-claude-0123456789"
)

// judgeRig is an in-process massd whose two external judges are a
// Responses-API model and an Anthropic model, both fakes on the real wire.
type judgeRig struct {
	sock, data  string
	gpt         *fakeresponses.Server
	claude      *fakeanthropic.Server
	logs        *bytes.Buffer
	prices      map[string]model.Price
	layout      datadir.Layout
	taskWritten bool
}

func newJudgeRig(t *testing.T) *judgeRig {
	t.Helper()
	r := &judgeRig{logs: &bytes.Buffer{}}
	r.gpt = fakeresponses.New(gptKey, func(responses.CreateRequest) string { return `{"winner":"A","rationale":"A covers more."}` })
	r.claude = fakeanthropic.New(claudeKey, func(anthropic.Request) string { return `{"winner":"tie","rationale":"Both equal."}` })
	gs, cs := httptest.NewServer(r.gpt.Handler()), httptest.NewServer(r.claude.Handler())
	t.Cleanup(gs.Close)
	t.Cleanup(cs.Close)
	t.Setenv("E2E_OPENAI_KEY", gptKey)
	cfg := daemontest.Config(t)
	kf := filepath.Join(t.TempDir(), "claude.key")
	if err := os.WriteFile(kf, []byte(claudeKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := 8192
	cfg.Models = map[string]*config.Model{
		"gpt-judge": {Provider: model.ProviderOpenAIResponses, BaseURL: gs.URL + "/v1", Model: "gpt-5.5", APIKeyEnv: "E2E_OPENAI_KEY",
			ReasoningEffort: "xhigh", Background: true, PollInterval: time.Millisecond, Backoff: time.Millisecond},
		"claude-judge": {Provider: model.ProviderAnthropic, BaseURL: cs.URL, Model: "claude-opus-4-8", APIKeyFile: kf,
			ReasoningEffort: "max", MaxTokens: &mt, Backoff: time.Millisecond},
	}
	cfg.Judges = []config.Judge{{Model: "gpt-judge", Seeds: []int64{42, 43}}, {Model: "claude-judge", Seeds: []int64{42}}}
	r.prices = map[string]model.Price{"gpt-judge": {InputPerMTok: 5, OutputPerMTok: 30}, "claude-judge": {InputPerMTok: 5, OutputPerMTok: 25}}
	cfg.Prices = r.prices
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := daemon.NewBuiltins(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	// massd closes the builtins; no sandbox is needed (bundle-mode judging), so none is reaped.
	r.sock = daemontest.Start(t, daemon.Options{Config: cfg, Version: "t", Builtins: b, Logger: log,
		ReapOrphans: func(context.Context, jobkind.Recovery, func(string, int)) error { return nil }}).Config.Socket
	r.data, r.layout = cfg.DataDir, datadir.New(cfg.DataDir)
	return r
}

// writeRollout puts a finished rollout of two models on one task (two
// episodes each, with workspace exports) into the data dir.
func (r *judgeRig) writeRollout(t *testing.T, name string) {
	t.Helper()
	if !r.taskWritten {
		must(t, os.MkdirAll(r.layout.Task("t1"), 0o755))
		must(t, os.WriteFile(filepath.Join(r.layout.Task("t1"), taskspec.FileName),
			[]byte("id: t1\nprompt: Write report.md about the data.\nrequired_outputs: [report.md]\nsplit: test\nlimits: {episode_wall_time: 30m, agent_turns: 200}\n"), 0o644))
		r.taskWritten = true
	}
	ro := rollout.Summary{Name: name, Tasks: []string{"t1"}, Models: []string{"base", "gen-1"}, Episodes: 2}
	for _, m := range ro.Models {
		for i := 0; i < 2; i++ {
			id := name + "-" + m + "-" + string(rune('0'+i))
			must(t, os.MkdirAll(r.layout.Episode(id), 0o755))
			must(t, os.WriteFile(filepath.Join(r.layout.Episode(id), "workspace.tar"), workspaceTar(t, "# "+m+" report\n"), 0o644))
			ro.Runs = append(ro.Runs, rollout.Run{Task: "t1", Model: m, Index: i, EpisodeResult: rollout.EpisodeResult{EpisodeID: id, Exit: "done", Success: true}})
		}
	}
	b, _ := json.Marshal(ro)
	must(t, os.MkdirAll(r.layout.Eval(name), 0o755))
	must(t, os.WriteFile(filepath.Join(r.layout.Eval(name), rollout.SummaryFile), b, 0o644))
}

func workspaceTar(t *testing.T, report string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "report.md", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(report))}))
	_, err := tw.Write([]byte(report))
	must(t, err)
	must(t, tw.Close())
	return buf.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEvalJudgeProvidersThroughMassd: `massctl eval judge` on a rollout
// with a Responses-API judge (background mode, two seeds) and an
// Anthropic judge (streamed, adaptive thinking), each first answering a
// 429 and then a reply cut off in transit: every verdict is written,
// valid, and carries cost_usd = billed input × input price + output ×
// output price; judgement.json sums it per judge and in total.
func TestEvalJudgeProvidersThroughMassd(t *testing.T) {
	r := newJudgeRig(t)
	r.writeRollout(t, "ev")
	r.gpt.Fail(fakeresponses.FaultRateLimit, fakeresponses.FaultTruncate)
	r.claude.Fail(fakeanthropic.FaultRateLimit, fakeanthropic.FaultTruncate)
	out, err := run(t, "--socket", r.sock, "eval", "judge", "--rollout", "ev", "--no-self", "--json")
	if err != nil {
		t.Fatalf("eval judge: %v\n%s", err, out)
	}
	vs, err := judgepairs.ReadVerdicts(r.layout.Eval("ev"))
	if err != nil || len(vs) != 2*3 {
		t.Fatalf("%d verdicts, %v; want 6 (2 pairs × 3 judge seeds)", len(vs), err)
	}
	total := 0.0
	for _, v := range vs {
		p := r.prices[v.Model]
		want := (float64(v.PromptTokens)*p.InputPerMTok + float64(v.CompletionTokens)*p.OutputPerMTok) / 1e6
		if v.Status != "valid" || v.PromptTokens == 0 || v.CompletionTokens == 0 || v.CostUSD <= 0 || math.Abs(v.CostUSD-want) > 1e-12 {
			t.Errorf("verdict %s by %s seed %d: status %s, tokens %d/%d, cost %v want %v", v.Pair(), v.Model, v.Seed, v.Status,
				v.PromptTokens, v.CompletionTokens, v.CostUSD, want)
		}
		total += v.CostUSD
	}
	if got, want := len(r.gpt.Bodies()), 4+2; got != want { // 4 judgments, a 429 and a cut reply retried
		t.Errorf("%d Responses API posts, want %d", got, want)
	}
	if got, want := len(r.claude.Bodies()), 2+2; got != want {
		t.Errorf("%d Messages API posts, want %d", got, want)
	}
	var res judgepairs.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("judgement: %v %s", err, out)
	}
	if math.Abs(res.CostUSD-total) > 1e-12 || len(res.Costs) != 2 || res.Costs[0].Judge != "claude-judge" || res.Costs[0].Verdicts != 2 ||
		res.Costs[1].Verdicts != 4 || res.Costs[0].Unpriced != 0 {
		t.Errorf("costs %+v total %v, want the verdicts' sum %v", res.Costs, res.CostUSD, total)
	}
	out, err = run(t, "--socket", r.sock, "model", "list", "--json")
	if err != nil || !strings.Contains(out, `"provider": "openai-responses"`) || !strings.Contains(out, `"provider": "anthropic"`) {
		t.Errorf("model list does not name the providers: %v %s", err, out)
	}
	r.noKeyLeaked(t)
}

// TestEvalJudgeBadKey: a judge whose key the provider refuses makes
// `massctl eval judge --json` exit non-zero with the provider named, for
// each provider, and the key is in no record and no log line.
func TestEvalJudgeBadKey(t *testing.T) {
	r := newJudgeRig(t)
	for _, c := range []struct {
		judge, provider, want string
		refuse                func()
	}{
		{"claude-judge", "anthropic", "authentication_error", func() { r.claude.SetKey("sk-ant-rotated") }},
		{"gpt-judge", "openai-responses", "invalid_api_key", func() { r.gpt.SetKey("sk-proj-rotated") }},
	} {
		c.refuse()
		name := "bad-" + c.provider
		r.writeRollout(t, name)
		out, err := run(t, "--socket", r.sock, "eval", "judge", "--rollout", name, "--judges", c.judge, "--no-self", "--json")
		if err == nil {
			t.Fatalf("%s: eval judge succeeded with a refused key: %s", c.provider, out)
		}
		t.Logf("%s: %v", c.provider, err)
		for _, w := range []string{c.provider, "HTTP 401", c.want, "API key was refused"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.provider, err, w)
			}
		}
	}
	r.noKeyLeaked(t)
}

// noKeyLeaked greps every file of the data dir and the daemon's log.
func (r *judgeRig) noKeyLeaked(t *testing.T) {
	t.Helper()
	check := func(where string, b []byte) {
		for _, k := range []string{gptKey, claudeKey} {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("an API key is in %s", where)
			}
		}
	}
	check("the daemon log", r.logs.Bytes())
	err := filepath.WalkDir(r.data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		check(p, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
