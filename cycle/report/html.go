package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"

	"github.com/mass-dev/mass/datadir"
)

//go:embed templates/report.tmpl
var templates embed.FS

// CSP is the page's Content-Security-Policy: no script, no fetch, no
// image but inline SVG; only the inline stylesheet.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// RenderOptions adjust the page.
type RenderOptions struct {
	// EpisodeURL links an episode id (the console passes its own page);
	// nil links the episode's record folder with a file:// URL.
	EpisodeURL func(id string) string
}

var page = template.Must(template.New("report.tmpl").Funcs(template.FuncMap{
	"pct": pct,
	"usd": func(v float64) string { return fmt.Sprintf("%.4f", v) },
	"f3": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.3g", *p)
	},
	"kn":      func(k, n int) string { return fmt.Sprintf("%d/%d", k, n) },
	"join":    strings.Join,
	"seeds":   func(s []int64) string { return strings.Trim(fmt.Sprint(s), "[]") },
	"winPlot": winRatePlot, "btPlot": btPlot, "lossPlot": lossPlot, "tokenPlot": tokenPlot, "supPlot": supervisedPlot,
}).ParseFS(templates, "templates/report.tmpl"))

type view struct {
	*Report
	CSP   string
	Links map[string]template.URL
}

// Render writes the report as one self-contained HTML page.
func Render(w io.Writer, r *Report, o RenderOptions) error {
	v := view{Report: r, CSP: CSP, Links: map[string]template.URL{}}
	for _, x := range r.Runs {
		if !datadir.ValidID(x.EpisodeID) {
			continue
		}
		if o.EpisodeURL != nil {
			v.Links[x.EpisodeID] = template.URL(o.EpisodeURL(x.EpisodeID)) //nolint:gosec // the caller's own URL for a valid id
		} else if x.Dir != "" {
			v.Links[x.EpisodeID] = template.URL((&url.URL{Scheme: "file", Path: x.Dir + "/"}).String()) //nolint:gosec // escaped path
		}
	}
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}
