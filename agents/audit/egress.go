package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/sandbox/egress"
)

// EgressFile is read when present (tasks with network).
const EgressFile = episodefmt.EgressFile

// maxEgressDenials bounds the refused requests listed in a report.
const maxEgressDenials = 200

// Egress is what the agents did through the episode's egress proxy, from
// egress.jsonl: counts, and the refused requests one by one (the first
// maxEgressDenials).
type Egress struct {
	Requests int            `json:"requests"`
	Denied   int            `json:"denied"`
	BytesIn  int64          `json:"bytes_in"`
	BytesOut int64          `json:"bytes_out"`
	ByAgent  map[string]int `json:"by_agent"`
	Denials  []EgressDenial `json:"denials"`
}

// EgressDenial is one refused request.
type EgressDenial struct {
	Agent  string `json:"agent"`
	Kind   string `json:"kind"`
	Domain string `json:"domain"`
	Reason string `json:"reason"`
}

// loadEgress reads egress.jsonl into in; a missing file leaves it nil.
func loadEgress(ctx context.Context, src Source, in *Inputs) error {
	b, err := src.ReadFile(ctx, EgressFile, MaxLogBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	recs, err := egress.ParseRecords(strings.NewReader(string(b)))
	if err != nil {
		return fmt.Errorf("load %s: %w", EgressFile, err)
	}
	in.Egress = recs
	if in.Egress == nil {
		in.Egress = []egress.Record{}
	}
	return nil
}

// egressReport summarises the records; nil for an episode without network.
func egressReport(recs []egress.Record) *Egress {
	if recs == nil {
		return nil
	}
	e := &Egress{ByAgent: map[string]int{}, Denials: []EgressDenial{}}
	for _, r := range recs {
		e.Requests++
		e.ByAgent[r.Agent]++
		e.BytesIn += r.BytesIn
		e.BytesOut += r.BytesOut
		if r.Allowed {
			continue
		}
		e.Denied++
		if len(e.Denials) < maxEgressDenials {
			e.Denials = append(e.Denials, EgressDenial{Agent: r.Agent, Kind: r.Kind, Domain: r.Domain, Reason: r.Reason})
		}
	}
	return e
}
