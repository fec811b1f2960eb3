package report

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/trainer/train"
)

// MaxMetricsBytes caps the training metrics a report reads.
const MaxMetricsBytes = 64 << 20

// metricsFile is mass-train's per-step log in a generation's run folder.
const metricsFile = "metrics.jsonl"

func genOf(l datadir.Layout, s generationfmt.Summary) Gen {
	g := Gen{G: s.Generation, Model: s.Model, Parent: s.Parent, Status: s.Status, Tokens: s.Tokens, Training: s.Training,
		Loss: []LossPoint{}, Ranking: []BTTask{}}
	for _, t := range s.Tasks {
		bt := BTTask{Task: t.ID, Scores: []float64{}, Train: len(t.Train), Val: len(t.Val)}
		for _, e := range t.Ranking {
			bt.Scores = append(bt.Scores, e.Score)
		}
		g.Ranking = append(g.Ranking, bt)
	}
	run := filepath.Join(l.Generation(itoa(s.Generation)), "train")
	g.Loss = readLoss(filepath.Join(run, metricsFile))
	if s.Training != nil {
		g.ExposureStep = s.Training.BestStep
	}
	g.Exposure = train.SummarizeExposure(readExposure(filepath.Join(run, train.ExposureFile)), g.ExposureStep)
	return g
}

// readExposure reads exposure.jsonl like readLoss: what parsed, capped.
func readExposure(p string) []train.Exposure {
	var out []train.Exposure
	f, err := os.Open(p)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, MaxMetricsBytes))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e train.Exposure
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// readLoss reads the loss curves; a missing or damaged log gives what
// parsed (a line that does not parse is skipped).
func readLoss(p string) []LossPoint {
	out := []LossPoint{}
	f, err := os.Open(p)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, MaxMetricsBytes))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec struct {
			Step    int      `json:"step"`
			Loss    *float64 `json:"loss"`
			ValLoss *float64 `json:"val_loss"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || (rec.Loss == nil && rec.ValLoss == nil) {
			continue
		}
		out = append(out, LossPoint{Step: rec.Step, Loss: rec.Loss, ValLoss: rec.ValLoss})
	}
	return out
}
