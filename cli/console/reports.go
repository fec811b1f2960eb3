package console

import (
	"context"
	"net/http"

	"github.com/mass-dev/mass/daemon/client"
)

// ReportKind is the job kind whose jobs the reports page lists.
const ReportKind = "report"

// reports lists the report jobs massd has run, newest first, each linking
// to its job page (events, result).
func (c *Console) reports(ctx context.Context, r *http.Request) (view, error) {
	js, err := c.cl.Jobs(ctx, client.JobFilter{Kind: ReportKind, Limit: 100})
	if err != nil {
		return view{}, err
	}
	return view{name: "reports", title: "reports", data: js}, nil
}
