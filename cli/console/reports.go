package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// ReportFunc renders the evaluation report of evaluation eval ("" = the
// newest) over the generations gens (none = all) as one self-contained
// HTML page into w, linking episodes with link. massctl ui sets it where
// the report (cycle/report, `massctl report`) is built in.
type ReportFunc func(ctx context.Context, w io.Writer, eval string, gens []string, link func(episode string) string) error

// SetReport installs the report renderer; without one the reports page
// says how to get a report.
func (c *Console) SetReport(fn ReportFunc) { c.report = fn }

// reports is the reports index: where the report page is and how to ask
// for one evaluation or generation.
func (c *Console) reports(ctx context.Context, r *http.Request) (view, error) {
	data := map[string]any{"Available": c.report != nil}
	if c.report == nil {
		return view{name: "reports", title: "reports", data: data}, nil
	}
	// The index still says how to ask for a report when massd cannot list
	// the evaluations.
	js, err := c.cl.Jobs(ctx, client.JobFilter{Kind: rollout.KindName, Limit: 100})
	if err != nil {
		data["ListError"] = err.Error()
	}
	evals := make([]evaluation, 0, len(js))
	for _, j := range js {
		evals = append(evals, evaluation{Name: evalName(j), Job: j})
	}
	data["Evals"] = evals
	return view{name: "reports", title: "reports", data: data}, nil
}

// evaluation is one rollout job on the reports index: its report is
// /report?eval=Name.
type evaluation struct {
	Name string
	Job  api.Job
}

// evalName is a rollout's evaluation name: its name param, else its job id.
func evalName(j api.Job) string {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(j.Params, &p) == nil && p.Name != "" {
		return p.Name
	}
	return j.ID
}

// reportPage serves the report page itself (?eval=NAME&gen=G…), rendered
// whole by the report package: inline SVG, no script.
func (c *Console) reportPage(w http.ResponseWriter, r *http.Request) {
	if c.report == nil {
		c.page(c.reports)(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	var buf bytes.Buffer
	q := r.URL.Query()
	err := c.report(ctx, &buf, q.Get("eval"), q["gen"], func(id string) string { return "/episodes/" + urlPath(id) })
	if err != nil {
		c.page(func(context.Context, *http.Request) (view, error) { return view{}, err })(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}
