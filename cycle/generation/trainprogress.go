package generation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// MetricsFile is the trainer's step log inside its output folder, one JSON
// record a line (mass-train's metrics.jsonl).
const MetricsFile = "metrics.jsonl"

// metricsPoll is how often the train stage reads the trainer's step log.
const metricsPoll = 500 * time.Millisecond

// metricRecord is the part of a metrics.jsonl line the progress shows: a
// training step, or a validation when ValLoss is set.
type metricRecord struct {
	Step      int      `json:"step"`
	Steps     int      `json:"steps"`
	Loss      *float64 `json:"loss"`
	ValLoss   *float64 `json:"val_loss"`
	TokPerSec float64  `json:"tok_s"`
	ETASec    float64  `json:"eta_s"`
	Processed int64    `json:"processed_supervised_tokens"`
}

// trainStatus is the latest step and validation read from the log.
type trainStatus struct {
	step    metricRecord
	valLoss *float64
	seen    bool
}

func (s *trainStatus) add(r metricRecord) {
	if r.ValLoss != nil {
		s.valLoss = r.ValLoss
		return
	}
	s.step, s.seen = r, true
}

// progress is the training's line: step, loss, val loss, tokens/s, ETA.
func (s *trainStatus) progress() Progress {
	r := s.step
	f := []string{fmt.Sprintf("step %d/%d", r.Step, r.Steps)}
	if r.Loss != nil {
		f = append(f, fmt.Sprintf("loss %.4f", *r.Loss))
	}
	if s.valLoss != nil {
		f = append(f, fmt.Sprintf("val loss %.4f", *s.valLoss))
	}
	f = append(f, fmt.Sprintf("ETA %s", (time.Duration(r.ETASec)*time.Second).String()), fmt.Sprintf("tok/s %.0f", r.TokPerSec))
	return Progress{Stage: "train", Fields: f, Counters: map[string]int64{"step": int64(r.Step), "steps": int64(r.Steps),
		"processed_supervised_tokens": r.Processed}}
}

// tailer reads the complete lines appended to a file since its last read;
// a file replaced (a resumed run rewrites it atomically) or shrunk is read
// again from the top.
type tailer struct {
	path string
	off  int64
	part []byte
	prev os.FileInfo
}

func (t *tailer) lines() ([][]byte, error) {
	f, err := os.Open(t.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < t.off || (t.prev != nil && !os.SameFile(t.prev, fi)) {
		t.off, t.part = 0, nil
	}
	t.prev = fi
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 4<<20))
	if err != nil {
		return nil, err
	}
	t.off += int64(len(b))
	b = append(t.part, b...)
	cut := bytes.LastIndexByte(b, '\n')
	if cut < 0 {
		t.part = b
		return nil, nil
	}
	t.part = append([]byte(nil), b[cut+1:]...)
	return bytes.Split(b[:cut], []byte("\n")), nil
}

// watchTraining reports the trainer's steps from out/metrics.jsonl until
// ctx ends; lines that are not records are skipped.
func (p *pipeline) watchTraining(ctx context.Context, out string) {
	t := &tailer{path: filepath.Join(out, MetricsFile)}
	var st trainStatus
	tick := time.NewTicker(metricsPoll)
	defer tick.Stop()
	for {
		lines, err := t.lines()
		if err != nil {
			p.cfg.Log.Warn("read training metrics", "err", err)
		}
		n := 0
		for _, l := range lines {
			var r metricRecord
			if json.Unmarshal(l, &r) != nil || (r.Steps == 0 && r.ValLoss == nil) {
				continue
			}
			st.add(r)
			n++
		}
		if n > 0 && st.seen {
			p.progress(st.progress())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
