package generation

import (
	"context"
	"strings"
	"testing"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/trainer/sft"
)

// TestRenderStrictNamesEmptyEpisode: stage render's dataset build fails
// when a selected episode yields no window with supervised tokens, naming
// it; lenient, the dataset is built and the episode counted.
func TestRenderStrictNamesEmptyEpisode(t *testing.T) {
	l := datadir.New(t.TempDir())
	for id, turns := range map[string]int{"ep-good": 2, "ep-val": 2, "ep-empty": 0} {
		if err := sft.WriteSyntheticEpisode(l.Episode(id), sft.SynthSpec{EpisodeID: id, TaskID: "t", Workers: 1, Turns: turns,
			ResponseWords: 20, ToolWords: 10, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	d := svcDatasets{l: l}
	req := DatasetRequest{Name: "gen-1", Train: []string{"ep-good", "ep-empty"}, Val: []string{"ep-val"},
		Tokenizer: "../../trainer/tokenizer/testdata"}
	_, err := d.Build(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), l.Episode("ep-empty")) || !strings.Contains(err.Error(), "strict") {
		t.Fatalf("strict render with an empty episode: %v", err)
	}
	req.Lenient = true
	ds, err := d.Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Empty) != 1 || ds.Empty[0] != l.Episode("ep-empty") || ds.StoredSupervised == 0 {
		t.Errorf("lenient render: empty %v, supervised %d", ds.Empty, ds.StoredSupervised)
	}
}
