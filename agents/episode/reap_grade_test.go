package episode

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// TestGradeSurvivesPeriodicReap reproduces the grader flake "prepare
// workspace <id>-grade: helper exit …": massd's periodic reaper (Reap,
// every minute) removed every sandbox whose episode was not Running, and
// a grader's workspace is named <episode>-grade, so a reap that fell
// during a grade force-removed its keeper mid-prepare. Here the reaper
// runs every 20 ms on a runtime of its own while a graded episode runs;
// the grade must still pass.
func TestGradeSurvivesPeriodicReap(t *testing.T) {
	d, _ := fakeModel(t, steps(
		tool("run_shell_command", map[string]string{"command": "sh /workspace/sim/simulator.sh 45 20 | cut -d' ' -f2 > /workspace/answer.txt"}),
	), nil)
	rt, err := docker.New(context.Background(), docker.Config{DaemonID: fmt.Sprintf("reap%d", os.Getpid()), HelperPath: testHelper,
		Image: image.TestRef, Logger: quiet, Client: testRT.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = rt.ReapOrphans(context.Background(), func(string) bool { return false })
		rt.Close()
	})
	d.Runtime = rt
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_, _ = rt.ReapOrphans(ctx, Running)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	st, _ := runEpisode(t, d, guardTask(t), "")
	stop()
	wg.Wait()
	if st.Grade == nil || !st.Grade.Passed || !st.Success {
		t.Fatalf("the grade of a right answer under a periodic reaper: success %v, grade %+v", st.Success, st.Grade)
	}
}
