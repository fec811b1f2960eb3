package server

import (
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/jobs"
)

// latencyBuckets are the API latency histogram's upper bounds, in seconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; last is +Inf
	sum    float64
	n      uint64
}

type routeKey struct{ route, code string }

// metrics collects request latencies and renders the Prometheus text format.
type metrics struct {
	mu    sync.Mutex
	hists map[string]*histogram
	reqs  map[routeKey]uint64
}

func newMetrics() *metrics {
	return &metrics{hists: map[string]*histogram{}, reqs: map[routeKey]uint64{}}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		m.observe(route, fmt.Sprint(sw.status), time.Since(start).Seconds())
	})
}

func (m *metrics) observe(route, code string, secs float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hists[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		m.hists[route] = h
	}
	i := sort.SearchFloat64s(latencyBuckets, secs)
	h.counts[i]++
	h.sum += secs
	h.n++
	m.reqs[routeKey{route, code}]++
}

func (m *metrics) write(b *strings.Builder, jobs map[string]int, version string, started time.Time) {
	fmt.Fprintf(b, "# HELP mass_build_info Build information of the running massd.\n# TYPE mass_build_info gauge\n")
	fmt.Fprintf(b, "mass_build_info{version=%q,goversion=%q} 1\n", version, runtime.Version())
	fmt.Fprintf(b, "# HELP mass_start_time_seconds When massd started, in Unix seconds.\n# TYPE mass_start_time_seconds gauge\n")
	fmt.Fprintf(b, "mass_start_time_seconds %d\n", started.Unix())
	fmt.Fprintf(b, "# HELP mass_jobs Jobs by state.\n# TYPE mass_jobs gauge\n")
	for _, st := range api.States {
		fmt.Fprintf(b, "mass_jobs{state=%q} %d\n", st, jobs[st])
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(b, "# HELP mass_api_requests_total API requests by route and status code.\n# TYPE mass_api_requests_total counter\n")
	keys := make([]routeKey, 0, len(m.reqs))
	for k := range m.reqs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].route != keys[j].route {
			return keys[i].route < keys[j].route
		}
		return keys[i].code < keys[j].code
	})
	for _, k := range keys {
		fmt.Fprintf(b, "mass_api_requests_total{route=%q,code=%q} %d\n", k.route, k.code, m.reqs[k])
	}
	fmt.Fprintf(b, "# HELP mass_api_request_duration_seconds API request latency.\n# TYPE mass_api_request_duration_seconds histogram\n")
	routes := make([]string, 0, len(m.hists))
	for r := range m.hists {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		h := m.hists[r]
		var cum uint64
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(b, "mass_api_request_duration_seconds_bucket{route=%q,le=\"%g\"} %d\n", r, le, cum)
		}
		cum += h.counts[len(latencyBuckets)]
		fmt.Fprintf(b, "mass_api_request_duration_seconds_bucket{route=%q,le=\"+Inf\"} %d\n", r, cum)
		fmt.Fprintf(b, "mass_api_request_duration_seconds_sum{route=%q} %g\n", r, h.sum)
		fmt.Fprintf(b, "mass_api_request_duration_seconds_count{route=%q} %d\n", r, h.n)
	}
}

func writeDisk(b *strings.Builder, d jobs.Disk) {
	low := 0
	if d.Low {
		low = 1
	}
	fmt.Fprintf(b, "# HELP mass_data_dir_free_bytes Free bytes on the data dir's file system.\n# TYPE mass_data_dir_free_bytes gauge\n")
	fmt.Fprintf(b, "mass_data_dir_free_bytes %d\n", d.FreeBytes)
	fmt.Fprintf(b, "# HELP mass_data_dir_low_disk 1 while free space is below the threshold and new work is refused.\n# TYPE mass_data_dir_low_disk gauge\n")
	fmt.Fprintf(b, "mass_data_dir_low_disk %d\n", low)
}
