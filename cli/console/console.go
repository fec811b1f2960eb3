// Package console is massctl ui: a read-only web console over massd's API,
// plain server-rendered HTML (html/template, no scripts, no assets from the
// network). Everything an episode or a model wrote is escaped, control
// characters are made visible, and a strict Content-Security-Policy keeps a
// page inert even if something slipped through.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

//go:embed templates/*.html
var templateFS embed.FS

// MaxFileView caps the bytes of one file a page shows.
const MaxFileView = 256 << 10

// csp forbids scripts, frames, forms and every fetch but inline styles.
const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// Console serves the pages. Create it with New.
type Console struct {
	cl   *client.Client
	log  *slog.Logger
	tmpl *template.Template
	mux  *http.ServeMux
	// report renders the evaluation report; nil when massctl has none.
	report ReportFunc
}

// New returns the console over the massd that cl talks to.
func New(cl *client.Client, log *slog.Logger) (*Console, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t, err := template.New("").Funcs(template.FuncMap{"visible": Visible, "outcome": episodeOutcome, "tasks": JobTasks, "progress": ProgressText, "when": when, "dur": dur, "f1": f1, "dec": func(k int) int { return k - 1 }, "urlpath": urlPath, "sub": func(a, b float64) float64 { return a - b }, "add": func(a, b float64) float64 { return a + b }}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	c := &Console{cl: cl, log: log, tmpl: t, mux: http.NewServeMux()}
	c.mux.HandleFunc("GET /{$}", c.page(c.jobs))
	c.mux.HandleFunc("GET /jobs/{id}", c.page(c.job))
	c.mux.HandleFunc("GET /episodes", c.page(c.episodes))
	c.mux.HandleFunc("GET /episodes/{id}", c.page(c.episode))
	c.mux.HandleFunc("GET /episodes/{id}/transcript", c.page(c.transcript))
	c.mux.HandleFunc("GET /episodes/{id}/files/{name...}", c.page(c.file))
	c.mux.HandleFunc("GET /episodes/{id}/audit", c.page(c.auditPage))
	c.mux.HandleFunc("GET /episodes/{id}/workspace", c.page(c.workspaceTree))
	c.mux.HandleFunc("GET /episodes/{id}/workspace/{path...}", c.page(c.workspaceFile))
	c.mux.HandleFunc("GET /searches", c.page(c.searches))
	c.mux.HandleFunc("GET /searches/{task}/{id}", c.page(c.searchPage))
	c.mux.HandleFunc("GET /searches/{task}/{id}/v/{k}", c.page(c.versionPage))
	c.mux.HandleFunc("GET /generations", c.page(c.generations))
	c.mux.HandleFunc("GET /generations/{g}", c.page(c.generationPage))
	c.mux.HandleFunc("GET /reports", c.page(c.reports))
	c.mux.HandleFunc("GET /report", c.reportPage)
	return c, nil
}

// ServeHTTP serves GET requests only: the console changes nothing.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "the console is read-only", http.StatusMethodNotAllowed)
		return
	}
	c.mux.ServeHTTP(w, r)
}

// view is what a handler returns: a template name and its data.
type view struct {
	name    string
	title   string
	refresh bool // reload every 2s (a live job)
	data    any
}

func (c *Console) page(h func(ctx context.Context, r *http.Request) (view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		v, err := h(ctx, r)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err != nil {
			status, _ := api.StatusOf(err)
			if errors.Is(err, client.ErrNoDaemon) {
				status = http.StatusBadGateway
			}
			v = view{name: "error", title: "error", data: err.Error()}
			w.WriteHeader(status)
		}
		data := map[string]any{"Title": v.title, "Refresh": v.refresh, "Data": v.data, "Where": c.cl.Where()}
		if err := c.tmpl.ExecuteTemplate(w, v.name+".html", data); err != nil {
			c.log.Warn("render", "page", v.name, "err", err)
		}
	}
}

// Visible makes text safe to show as text: invalid UTF-8 becomes U+FFFD,
// and control characters but newline and tab become their visible
// Unicode symbols (ESC shows as ␛), so ANSI sequences cannot style or
// move anything. HTML escaping is the template's.
func Visible(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20:
			return 0x2400 + r
		case r == 0x7f:
			return '\u2421'
		case r >= 0x80 && r < 0xa0, r == '\u2028', r == '\u2029', r == '\u202e', r == '\u2066', r == '\u2067', r == '\u2068':
			return '\uFFFD'
		}
		return r
	}, s)
}

func when(t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return "-"
		}
		return v.Local().Format("2006-01-02 15:04:05")
	case *time.Time:
		if v == nil {
			return "-"
		}
		return when(*v)
	}
	return "-"
}

func dur(j api.Job) string {
	if j.Started == nil {
		return "-"
	}
	end := time.Now()
	if j.Finished != nil {
		end = *j.Finished
	}
	return end.Sub(*j.Started).Round(time.Second).String()
}

// capText reads at most MaxFileView bytes of b as text for a page.
func capText(b []byte, truncated bool) (string, bool) {
	if !utf8.Valid(b) && len(b) > 0 && b[len(b)-1]&0x80 != 0 {
		truncated = true // the cap may have cut a character
	}
	return Visible(string(b)), truncated
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// urlPath escapes each component of a slash-separated path for a link.
func urlPath(p string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		parts[i] = url.PathEscape(c)
	}
	return strings.Join(parts, "/")
}
