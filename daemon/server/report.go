package server

import (
	"net/http"

	"github.com/mass-dev/mass/cycle/report"
)

// getReport builds the evaluation report (GET /v1/report?eval=NAME&gen=G…)
// from the data directory; `massctl report` renders it.
func (s *Server) getReport(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rep, err := report.Build(r.Context(), s.o.Layout, report.Request{Eval: q.Get("eval"), Gens: q["gen"]})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}
