package daemon_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/generationfmt"
)

const scriptedServeEnv = "MASS_DAEMON_SCRIPTED_SERVE"

// TestScriptedServeHelper is the fake serve command of the cycle test: a
// vLLM-like server of the scripted policy on a port, started on a model
// folder (it must hold config.json) and serving it under one name (404 for
// any other, as vLLM answers). It appends "folder name model" to a log
// file for every chat request.
func TestScriptedServeHelper(t *testing.T) {
	if os.Getenv(scriptedServeEnv) == "" {
		t.Skip("only run as a serve command")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
		}
	}
	folder, name, port, logPath := args[0], args[1], args[2], args[3]
	if _, err := os.Stat(filepath.Join(folder, "config.json")); err != nil {
		os.Exit(3)
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(4)
	}
	var mu sync.Mutex
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		mu.Lock()
		fmt.Fprintf(f, "%s %s %s\n", folder, name, r.Model)
		mu.Unlock()
		if r.Model != name {
			return fakeopenai.Reply{Status: http.StatusNotFound, Error: "The model " + r.Model + " does not exist."}
		}
		return scripted.Policy(r)
	}, fakeopenai.WithModelID(name), fakeopenai.WithoutHistory())
	if err := srv.Start("127.0.0.1:" + port); err != nil {
		os.Exit(5)
	}
	select {}
}

// TestCycleTwoGenerationsServedByCommand runs a cycle job of two
// generations through the massd binary on a base model whose entry
// declares `serving: {command: [...]}` (the fake serve command above):
// massd serves the base itself, each generation restarts the command on
// its merged folder under gen-<g>, the second round's search and
// collection call gen-1 there, and gen-2 trains from gen-1's merged model.
func TestCycleTwoGenerationsServedByCommand(t *testing.T) {
	needAgentImage(t)
	t.Setenv(scriptedServeEnv, "1")
	bin := buildBinaries(t)
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	tiny := filepath.Join(t.TempDir(), "tiny")
	if out, err := exec.Command(filepath.Join(bin, "mass-train"), "init-model", "--config", "tiny", "--out", tiny).CombinedOutput(); err != nil {
		t.Fatalf("init tiny model: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	serveLog := filepath.Join(t.TempDir(), "serve.log")
	argv, _ := json.Marshal([]string{os.Args[0], "-test.run=^TestScriptedServeHelper$", "--", "{model}", "{name}", port, serveLog})
	r := newRigYAML(t, fmt.Sprintf("models:\n  base:\n    base_url: http://127.0.0.1:%s/v1\n    model: base-model\n    weights: %s\n    tokenizer: %s\n    serving:\n      command: %s\n",
		port, tiny, tiny, argv), "mass-agent:latest")
	if out, err := r.massctl("task", "add", "../examples/tasks/sales-analysis/task.yaml"); err != nil {
		t.Fatalf("task add: %v %s", err, out)
	}
	// The cycle runs from a config file at tiny sizes: a recipe that reaches
	// mass-train and a generation-2 override of the learning rate.
	conf := filepath.Join(t.TempDir(), "cycle.yaml")
	if err := os.WriteFile(conf, []byte(`count: 2
models: {parent: base}
tasks: {train: [sales-analysis]}
search: {iterations: 3}
collection: {candidates: 4, train_ranks: 3, validation_rank: 4, cap: 6, seed_base: 4}
ranking: {opponents: 2}
training: {steps: 2, lora_r: 4, lora_alpha: 8, windows_per_step: 2, lr: 0.001}
generations: {2: {training: {lr: 0.0005}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := r.massctl("cycle", "run", "--config", conf, "--json")
	if err != nil {
		show, _ := r.massctl("generation", "list")
		t.Fatalf("%v\n%s", err, show)
	}
	var res struct {
		Generations []generation.CycleStep `json:"generations"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Generations) != 2 {
		t.Fatalf("cycle result %v: %s", err, out)
	}
	g1 := readJSON[generationfmt.Summary](t, filepath.Join(r.data, "generations", "1", generationfmt.SummaryFile))
	g2 := readJSON[generationfmt.Summary](t, filepath.Join(r.data, "generations", "2", generationfmt.SummaryFile))
	if g1.Model != "gen-1" || g2.Model != "gen-2" || g2.Parent != "gen-1" || g1.Status != generationfmt.StatusDone || g2.Status != generationfmt.StatusDone {
		t.Fatalf("generations %+v\n%+v", g1, g2)
	}
	for i, st := range res.Generations {
		t.Logf("round %d: parent %s, searches %v in %v s, model %s", i+1, st.Parent, len(st.Searches), st.SearchSeconds, st.Model)
	}
	calls := servedCalls(t, serveLog)
	t.Logf("serve command calls by folder and name: %v", calls)
	want := map[string]bool{tiny + " base-model": true, g1.Merged + " gen-1": true}
	for k := range calls {
		if !want[k] {
			t.Errorf("a model call reached %q: want only the base on its weights and gen-1 on its merged folder", k)
		}
	}
	for k := range want {
		if calls[k] == 0 {
			t.Errorf("no model call reached %q", k)
		}
	}
	checkGen2Registered(t, r, port, g1, g2)
	checkCycleSeedsAndRecipe(t, g1, g2)
}

// checkCycleSeedsAndRecipe wants the two generations' collection and ring
// seeds disjoint and each generation's mass-train run on the config's
// recipe (generation 2 with its own learning rate).
func checkCycleSeedsAndRecipe(t *testing.T, g1, g2 generationfmt.Summary) {
	t.Helper()
	seeds := map[int64]int{}
	for g, s := range []generationfmt.Summary{g1, g2} {
		slots := readJSON[[]generation.Slot[generation.EpisodeResult]](t, filepath.Join(s.Dir, "collect", "sales-analysis", "episodes.json"))
		rk := readJSON[generation.Ranked](t, filepath.Join(s.Dir, "rank", "sales-analysis", "ranking.json"))
		for _, sl := range slots {
			seeds[sl.Seed] |= 1 << g
		}
		seeds[rk.RingSeed] |= 1 << g
		t.Logf("generation %d: %d collection seeds from %d, ring seed %d", g+1, len(slots), slots[0].Seed, rk.RingSeed)
	}
	for s, gens := range seeds {
		if gens == 3 {
			t.Errorf("seed %d is used by both generations", s)
		}
	}
	for i, s := range []generationfmt.Summary{g1, g2} {
		run := readJSON[struct {
			Batch int `json:"batch"`
			Accum int `json:"accum"`
			Steps int `json:"steps"`
			LoRA  struct {
				R     int     `json:"r"`
				Alpha float64 `json:"lora_alpha"`
			} `json:"lora"`
			Optim struct {
				LR float64 `json:"lr"`
			} `json:"optim"`
		}](t, filepath.Join(s.Dir, "train", "run.json"))
		lr := []float64{0.001, 0.0005}[i]
		if run.Batch != 1 || run.Accum != 2 || run.Steps != 2 || run.LoRA.R != 4 || run.LoRA.Alpha != 8 || run.Optim.LR != lr {
			t.Errorf("generation %d trained with %+v, want the config's recipe (lr %g)", i+1, run, lr)
		}
	}
}

// servedCalls counts the serve log's chat requests by "folder name";
// a request for a model the server does not serve counts under "… wrong".
func servedCalls(t *testing.T, p string) map[string]int {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		k := fs[0] + " " + fs[1]
		if fs[1] != fs[2] {
			k = fs[0] + " wrong:" + fs[2]
		}
		out[k]++
	}
	return out
}

// checkGen2Registered wants gen-2 trained from gen-1's merged weights and
// the serve command on gen-2's merged folder now.
func checkGen2Registered(t *testing.T, r *searchRig, port string, g1, g2 generationfmt.Summary) {
	t.Helper()
	out, err := r.massctl("model", "list", "--json")
	var ms []api.Model
	if err != nil || json.Unmarshal(out, &ms) != nil {
		t.Fatalf("model list: %v %s", err, out)
	}
	byName := map[string]api.Model{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	if m := byName["gen-2"]; m.G != 2 || m.Parent != "gen-1" || m.Error != "" {
		t.Errorf("gen-2 in model list: %+v", m)
	}
	run := readJSON[struct {
		Model string `json:"model"`
	}](t, filepath.Join(g2.Dir, "train", "run.json"))
	if run.Model != g1.Merged {
		t.Errorf("gen-2 trained from %s, want gen-1's merged model %s", run.Model, g1.Merged)
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&list) != nil || len(list.Data) != 1 || list.Data[0].ID != "gen-2" {
		t.Errorf("the serve command now serves %+v, want gen-2", list.Data)
	}
}
