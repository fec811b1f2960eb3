package audit

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
)

//go:embed templates/report.html templates/graph.svg
var templatesFS embed.FS

var reportTmpl = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"f":      func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"plus14": func(v float64) float64 { return v + 14 },
	"ms":     formatMS,
	"pct":    func(v float64) float64 { return 100 * v },
}).ParseFS(templatesFS, "templates/report.html", "templates/graph.svg"))

// WriteHTML writes r as one self-contained HTML page (inline CSS and SVG, no
// external assets or scripts): counters, handoff graph, per-agent table and
// the evidence lists. Output is deterministic for a given report.
func WriteHTML(w io.Writer, r *Report) error {
	if err := reportTmpl.Execute(w, struct {
		R *Report
		G graph
	}{r, layout(r)}); err != nil {
		return fmt.Errorf("render audit html: %w", err)
	}
	return nil
}

func formatMS(ms float64) string {
	switch {
	case ms >= 60000:
		return fmt.Sprintf("%.1f min", ms/60000)
	case ms >= 1000:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// WriteGraphSVG writes r's handoff graph alone as one inline SVG element
// (the one WriteHTML embeds): agents as nodes in rows by delegation depth,
// delegations dashed, code handoffs as labelled arrows. Every label is
// escaped.
func WriteGraphSVG(w io.Writer, r *Report) error {
	if err := reportTmpl.ExecuteTemplate(w, "graph", layout(r)); err != nil {
		return fmt.Errorf("render handoff graph: %w", err)
	}
	return nil
}
