package daemon_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// runInProcess starts a daemon in this process on a temporary socket.
func runInProcess(tb testing.TB) *client.Client {
	tb.Helper()
	return daemontest.Start(tb, daemon.Options{Kinds: []jobkind.Kind{jobs.WaitKind()}}).Client
}

// BenchmarkGetJob measures GET /v1/jobs/{id} over the unix socket through
// the typed client and reports p50 and p99 latency. For the 10,000-request
// figure: go test -run '^$' -bench GetJob -benchtime 10000x ./daemon/
func BenchmarkGetJob(b *testing.B) {
	cl := runInProcess(b)
	ctx := context.Background()
	j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":0.05,"interval_ms":10}`)})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ { // warm the connection pool and caches
		if _, err := cl.Job(ctx, j.ID); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := cl.Job(ctx, j.ID); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, k int) bool { return lat[i] < lat[k] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-us")
	b.ReportMetric(pct(0.99), "p99-us")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-us")
}
