package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/report"
	"github.com/mass-dev/mass/cycle/report/reporttest"
)

func TestReportEndpoint(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	if rr := do(t, h, "GET", "/v1/report", nil); rr.Code != http.StatusNotFound {
		t.Errorf("no evaluation: %d %s", rr.Code, rr.Body)
	}
	if _, err := reporttest.Write(dir, reporttest.Spec{Name: "ev", Tasks: []string{"t"}, Models: []string{"base", "gen-1"}, Episodes: 2, Seed: 1,
		Judges: []judgepairs.JudgeSpec{{Model: "j", Seeds: []int64{42}}}}); err != nil {
		t.Fatal(err)
	}
	rr := do(t, h, "GET", "/v1/report?gen=1", nil)
	var r report.Report
	if rr.Code != http.StatusOK || json.Unmarshal(rr.Body.Bytes(), &r) != nil || r.Eval != "ev" || len(r.Models) != 1 || r.Models[0] != "gen-1" || len(r.Runs) != 4 {
		t.Errorf("report: %d %.500s", rr.Code, rr.Body)
	}
	if rr := do(t, h, "GET", "/v1/report?eval=ev&gen=gen-9", nil); rr.Code != http.StatusBadRequest {
		t.Errorf("unknown model: %d %s", rr.Code, rr.Body)
	}
	if rr := do(t, h, "GET", "/v1/report?eval=../x", nil); rr.Code != http.StatusBadRequest {
		t.Errorf("bad name: %d %s", rr.Code, rr.Body)
	}
}
