package episode

import (
	"archive/tar"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/taskspec"
)

// gradeFiles writes files (on image img) as a workspace export and runs the task's grader on it.
func gradeFiles(t testing.TB, img string, spec *taskspec.Spec, files map[string]string) *grade.Grade {
	t.Helper()
	return gradeFilesOn(t, img, sandbox.Policy{}, spec, files)
}

// gradeFilesOn is gradeFiles under policy pol (zero: the default policy).
func gradeFilesOn(t testing.TB, img string, pol sandbox.Policy, spec *taskspec.Spec, files map[string]string) *grade.Grade {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, ExportFile))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for name, body := range files {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))})
		_, _ = tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e := &run{deps: Deps{Runtime: testRT, Image: img, Policy: pol}, opts: Options{ID: NewID(), Task: spec, Dir: dir},
		prog: newProgress(nil), log: quiet}
	return e.gradeWorkspace(context.Background())
}

// salesSummary computes the right summary.json of the sales example.
func salesSummary(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "tasks", "sales-analysis", "data", "sales.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	month, region, product := map[string]float64{}, map[string]float64{}, map[string]float64{}
	total := 0.0
	for _, r := range rows[1:] {
		u, _ := strconv.Atoi(r[3])
		p, _ := strconv.ParseFloat(r[4], 64)
		v := float64(u) * p
		total += v
		month[r[0][:7]] += v
		region[r[1]] += v
		product[r[2]] += v
	}
	top, best := "", -1.0
	for k, v := range product {
		if v > best {
			top, best = k, v
		}
	}
	b, _ := json.Marshal(map[string]any{"total_revenue": math.Round(total*100) / 100, "revenue_by_month": month,
		"revenue_by_region": region, "top_product": top})
	return string(b)
}
