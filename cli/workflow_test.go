package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/searchfmt"
)

// recordedSearchKind stands in for the search kind: it writes the files a
// finished search leaves (two designs, records, the retained champion).
func recordedSearchKind() jobkind.Kind {
	return jobkind.Kind{Name: search.KindName, NeedsTask: true, Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		dir := filepath.Join(job.Layout.Search(job.TaskID), job.ID)
		files := map[string]string{
			"versions/" + searchfmt.VersionFile(0): "team v0\n",
			"versions/" + searchfmt.VersionFile(1): "team v0\nplus a checker\n",
			searchfmt.ComparisonHistoryFile: `{"key":"v1_vs_no_harness","iteration":1,"candidate":"v1","opponent":"reference","against":"reference","outcome":"win","wins":1}` + "\n" +
				"not json\n",
			searchfmt.ChampionHistoryFile: `{"key":"champion_v0_vs_v1","iteration":1,"candidate":"v1","opponent":"v0","against":"champion","outcome":"win","wins":1}` + "\n",
			searchfmt.RetainedFile:        `{"version":1,"beats_reference":true,"search_id":"` + job.ID + `","champion":1,"design":"versions/multi_agent_design_v1.txt","finished":true}`,
		}
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o640); err != nil {
				return err
			}
		}
		return nil
	}}
}

// TestWorkflowCommandsUseTheAPI runs massctl workflow list/show/diff/champion
// against a search massd recorded; every read goes through the API.
func TestWorkflowCommandsUseTheAPI(t *testing.T) {
	sock := startDaemon(t, recordedSearchKind()).Socket
	if _, err := run(t, "--socket", sock, "task", "add", "../examples/tasks/projectile-sim/task.yaml"); err != nil {
		t.Fatal(err)
	}
	cl := client.New(sock)
	ctx := context.Background()
	j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: search.KindName, TaskID: "projectile-sim"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); j.State != api.StateSucceeded; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || api.Terminal(j.State) && j.State != api.StateSucceeded {
			t.Fatalf("job did not succeed: %+v", j)
		}
		if j, err = cl.Job(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, "--socket", sock, "workflow", "list", "--json", "projectile-sim")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	var list struct {
		Dir         string              `json:"dir"`
		Versions    []int               `json:"versions"`
		Comparisons []search.Comparison `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if got, want := len(list.Versions), 2; got != want || len(list.Comparisons) != 2 || !strings.HasSuffix(list.Dir, filepath.Join("search", "projectile-sim", j.ID)) {
		t.Errorf("list = %+v, want 2 versions, 2 comparisons and the search's dir", list)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "list", "projectile-sim"}, "win vs v0"},
		{[]string{"workflow", "show", "projectile-sim"}, "plus a checker"},
		{[]string{"workflow", "show", "--search", j.ID, "projectile-sim", "v0"}, "team v0\n"},
		{[]string{"workflow", "diff", "projectile-sim", "v0", "v1"}, "+plus a checker"},
		{[]string{"workflow", "champion", "projectile-sim"}, `"beats_reference":true`},
	} {
		out, err := run(t, append([]string{"--socket", sock}, c.args...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v = %v\n%s\nwant %q in it", c.args, err, out, c.want)
		}
	}
}
