package console

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"
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
	return view{name: "reports", title: "reports", data: map[string]any{"Available": c.report != nil}}, nil
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
