package episode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/internal/atomicfile"
	"github.com/mass-dev/mass/sandbox"
)

// EgressSummary is run_status.json's count of egress.jsonl.
type EgressSummary struct {
	Requests int   `json:"requests"`
	Denied   int   `json:"denied"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

// saveEgress writes egress.jsonl, every request the agents made through
// the episode's proxy, once the proxy is stopped and before the workspace
// (and with it the proxy) is removed. A task with network whose records
// cannot be kept fails the record.
func (e *run) saveEgress(ctx context.Context, st *Status) error {
	if e.opts.Task.Network == nil {
		return nil
	}
	lg, ok := e.deps.Runtime.(sandbox.EgressLogger)
	if !ok {
		return fmt.Errorf("egress records: runtime %s keeps none", e.deps.Runtime.Name())
	}
	recs, err := lg.EgressLog(ctx, e.opts.ID)
	if err != nil {
		return fmt.Errorf("egress records: %w", err)
	}
	var buf bytes.Buffer
	sum := &EgressSummary{}
	enc := json.NewEncoder(&buf)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("egress records: %w", err)
		}
		sum.Requests++
		if !r.Allowed {
			sum.Denied++
		}
		sum.BytesIn += r.BytesIn
		sum.BytesOut += r.BytesOut
	}
	if err := atomicfile.Write(filepath.Join(e.opts.Dir, EgressFile), buf.Bytes(), 0o640); err != nil {
		return fmt.Errorf("egress records: %w", err)
	}
	st.Egress = sum
	return nil
}
