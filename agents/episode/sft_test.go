package episode

import (
	"context"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// The writer and the SFT reader share one format: a real scripted episode
// on the real engine becomes SFT windows without any conversion.
func TestScriptedEpisodeBuildsSFTWindows(t *testing.T) {
	d, _ := fakeModel(t, scripted.Policy, nil)
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if st.Exit != ExitCompleted {
		t.Fatalf("scripted episode ended %s (%s): %s", st.Exit, st.Failure, st.Reason)
	}
	info, err := episodefmt.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := sft.LoadEpisode(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Meta.EpisodeID != info.EpisodeID || ep.Meta.TaskID != "t1" || len(ep.Calls) != st.ModelCalls {
		t.Fatalf("sft read episode %s task %s with %d calls; the runner wrote %s with %d model calls",
			ep.Meta.EpisodeID, ep.Meta.TaskID, len(ep.Calls), info.EpisodeID, st.ModelCalls)
	}
	const fixtures = "../../trainer/tokenizer/testdata"
	tok, err := tokenizer.Load(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.LoadTemplate(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sft.Build(context.Background(), sft.BuildConfig{Tokenizer: tok, Template: tmpl, Window: sft.DefaultWindowConfig(), Workers: 1},
		[]string{dir}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if m.Episodes != 1 || m.Threads < 3 || m.Total.Windows == 0 || m.Total.SupervisedTokens == 0 {
		t.Errorf("dataset from the scripted episode: %d episodes, %d threads, %+v; want 1 episode, the orchestrator and two workers, some supervised tokens",
			m.Episodes, m.Threads, m.Total)
	}
}
