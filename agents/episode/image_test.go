package episode

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// A task naming an image profile runs its boxes in that profile's image;
// one that was never built fails the episode with the command that builds it.
func TestTaskImageProfileMissing(t *testing.T) {
	d, _ := fakeModel(t, func(*fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Content: "done"} }, nil)
	var b [4]byte
	_, _ = rand.Read(b[:])
	profile := "missing-" + hex.EncodeToString(b[:])
	spec := testTask(t, time.Minute)
	spec.Image = profile
	st, dir := runEpisode(t, d, spec, "")
	if st.Success {
		t.Fatal("episode in a missing image succeeded")
	}
	if want := "massctl image build --profile " + profile; !strings.Contains(st.Reason, want) {
		t.Errorf("reason %q does not say %q", st.Reason, want)
	}
	var info Info
	readJSON(t, filepath.Join(dir, EpisodeFile), &info)
	if got, want := info.SandboxImage, "mass-"+profile+":latest"; got != want {
		t.Errorf("episode.json sandbox image = %q, want %q", got, want)
	}
	if n := len(leftovers(t, st.EpisodeID)); n != 0 {
		t.Errorf("%d leftovers", n)
	}
}
