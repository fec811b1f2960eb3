package egress

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Record kinds.
const (
	KindHTTP    = "http"    // a plain-HTTP request in absolute form
	KindConnect = "connect" // a CONNECT tunnel (HTTPS)
	KindDNS     = "dns"     // a DNS question
)

// Record is one request an agent made through the proxy, allowed or not.
// The proxy knows the client by address; the runtime fills Agent.
type Record struct {
	Time   time.Time `json:"ts"`
	Client string    `json:"client"`          // source IP on the episode network
	Agent  string    `json:"agent,omitempty"` // filled by the runtime from Client
	Kind   string    `json:"kind"`
	Method string    `json:"method,omitempty"` // HTTP method; "CONNECT"; DNS query type
	Domain string    `json:"domain"`           // the name asked for, as sent (an IP literal stays as it was)
	Port   int       `json:"port,omitempty"`
	// Path is a plain-HTTP request's URL path, without the query, cut to
	// MaxRecordPath bytes: which file was fetched (a pip install's wheel).
	Path     string  `json:"path,omitempty"`
	Status   int     `json:"status"` // HTTP status sent to the agent; DNS: the rcode
	Allowed  bool    `json:"allowed"`
	Reason   string  `json:"reason,omitempty"` // why denied or failed
	BytesOut int64   `json:"bytes_out"`        // agent to upstream
	BytesIn  int64   `json:"bytes_in"`         // upstream to agent
	Duration float64 `json:"duration_s,omitempty"`
}

// MaxRecordPath caps Record.Path.
const MaxRecordPath = 256

// MaxRecords caps the records of one episode: the engine keeps 64 MiB of
// proxy output, and a record is at most a few hundred bytes. Past the cap
// the proxy refuses everything, so an agent cannot flood older records out.
const MaxRecords = 150_000

// Recorder writes records as JSON lines; safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	w   *bufio.Writer
	n   int
	max int
	err error
}

// NewRecorder writes to w (the proxy's stdout, kept by the engine), at
// most MaxRecords records.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: bufio.NewWriter(w), max: MaxRecords} }

// Full reports whether the record cap is reached (or a write failed):
// the proxy then refuses every request, unrecorded.
func (r *Recorder) Full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n >= r.max || r.err != nil
}

// Add writes one record and flushes it; the last record before the cap
// says that the cap was reached.
func (r *Recorder) Add(rec Record) {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n >= r.max {
		return
	}
	r.n++
	if r.n == r.max {
		rec.Reason = strings.TrimPrefix(rec.Reason+"; record cap reached, every later request is refused", "; ")
	}
	b, err := json.Marshal(rec)
	if err == nil && r.err == nil {
		_, err = r.w.Write(append(b, '\n'))
		if err == nil {
			err = r.w.Flush()
		}
	}
	if err != nil && r.err == nil {
		r.err = err
	}
}

// Err is the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// ParseRecords reads JSON lines as Recorder writes them. Lines that are not
// records (the proxy's own log lines) are skipped; a malformed record line
// is an error naming its line.
func ParseRecords(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Record
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return out, fmt.Errorf("egress record line %d: %w", n, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// Meter counts the bytes of an episode against its cap.
type Meter struct {
	max  int64
	used atomic.Int64
}

// NewMeter caps at max bytes; max <= 0 means DefaultMaxBytes.
func NewMeter(max int64) *Meter {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	return &Meter{max: max}
}

// Take adds n bytes and reports whether the total is still within the cap.
func (m *Meter) Take(n int64) bool { return m.used.Add(n) <= m.max }

// TakeWithin adds n bytes only if the total stays within the cap, and
// reports whether it did.
func (m *Meter) TakeWithin(n int64) bool {
	for {
		u := m.used.Load()
		if u+n > m.max {
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Exhaust marks the cap as reached (a write it refused), so that every
// later request is refused too.
func (m *Meter) Exhaust() {
	for {
		u := m.used.Load()
		if u >= m.max || m.used.CompareAndSwap(u, m.max) {
			return
		}
	}
}

// Give returns n bytes taken but not carried (a short write).
func (m *Meter) Give(n int64) { m.used.Add(-n) }

// Spent reports whether the cap is reached.
func (m *Meter) Spent() bool { return m.used.Load() >= m.max }

// Used is the byte count so far.
func (m *Meter) Used() int64 { return m.used.Load() }
