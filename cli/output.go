package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/api"
)

// newTable returns a tab-aligned writer; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	if m > 0 {
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// elapsed is how long a job ran (or has been running).
func elapsed(j api.Job) time.Duration {
	if j.Started == nil {
		return 0
	}
	end := time.Now()
	if j.Finished != nil {
		end = *j.Finished
	}
	return end.Sub(*j.Started)
}

func fmtEvent(ev api.Event) string {
	s := fmt.Sprintf("%s #%d %-12s %s", ev.Time.Local().Format("15:04:05.000"), ev.Seq, ev.Type, ev.Message)
	return strings.TrimRight(s, " ")
}
