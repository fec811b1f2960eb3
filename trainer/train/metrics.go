package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Record is one line of metrics.jsonl: a training step, or a validation
// (ValLoss set) at a step.
type Record struct {
	Step    int      `json:"step"`
	Loss    *float64 `json:"loss,omitempty"`
	ValLoss *float64 `json:"val_loss,omitempty"`
	// A validation's split (the reference's train_log.jsonl keys): the
	// token-weighted loss of the supervised tokens of each role, task and
	// validation episode, and how many tokens it covers.
	ValTokens       int                `json:"val_tokens,omitempty"`
	ValByRole       map[string]float64 `json:"val_by_role,omitempty"`
	ValByTask       map[string]float64 `json:"val_by_task,omitempty"`
	ValPerEpisode   map[string]float64 `json:"val_per_episode,omitempty"`
	LR              float64            `json:"lr,omitempty"`
	GradNorm        float64            `json:"grad_norm,omitempty"`
	ProcessedTokens int64              `json:"processed_supervised_tokens"`
	TokensPerSec    float64            `json:"tok_s,omitempty"`
	ElapsedSec      float64            `json:"elapsed_s"`
	ETASec          float64            `json:"eta_s,omitempty"`
	Steps           int                `json:"steps"`
}

type metricsLog struct {
	f *os.File
}

// openMetrics opens metrics.jsonl for appending after dropping records past
// step keep (those of steps a resumed run will redo).
func openMetrics(out string, keep int) (*metricsLog, error) {
	return openStepLog(filepath.Join(out, "metrics.jsonl"), keep)
}

// openStepLog opens a JSONL file of {"step",…} rows for appending after
// dropping the rows past step keep.
func openStepLog(p string, keep int) (*metricsLog, error) {
	old, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(p), err)
	}
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(old))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r struct {
			Step int `json:"step"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Step <= keep {
			kept.Write(sc.Bytes())
			kept.WriteByte('\n')
		}
	}
	if err := writeAtomic(p, kept.Bytes()); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(p), err)
	}
	return &metricsLog{f: f}, nil
}

func (m *metricsLog) write(r any) error {
	b, _ := json.Marshal(r)
	_, err := m.f.Write(append(b, '\n'))
	return err
}

func (m *metricsLog) Close() error { return m.f.Close() }

// ReadMetrics reads a run's metrics.jsonl.
func ReadMetrics(out string) ([]Record, error) {
	b, err := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	var rs []Record
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", i+1, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// ProgressLine renders the live progress line of a step record.
func ProgressLine(r Record) string {
	loss := 0.0
	if r.Loss != nil {
		loss = *r.Loss
	}
	eta := time.Duration(r.ETASec * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("step %d/%d  loss %.4f  lr %.3g  tok/s %.0f  sup_tok %d  ETA %s",
		r.Step, r.Steps, loss, r.LR, r.TokensPerSec, r.ProcessedTokens, eta)
}
