package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
	"github.com/mass-dev/mass/sandbox/probe/check"
	"github.com/mass-dev/mass/sandbox/workspace"
)

const (
	opTimeout     = 30 * time.Second // an op still running then counts as hung
	opSlow        = 25 * time.Second
	exportCap     = 64 << 20
	raceWorkers   = 8
	hostProbeWant = "no host content, no hang, results within caps"
)

// op is one host-side call through the runtime.
type op struct {
	what string
	fn   func(ctx context.Context) (any, error)
}

// outcome is what one op did.
type outcome struct {
	leak, hang, over bool
	took             time.Duration
	size             int
	err              error
}

func (r *run) do(ctx context.Context, o op) outcome {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	start := time.Now()
	v, err := o.fn(ctx)
	out := outcome{took: time.Since(start), err: err}
	b, _ := json.Marshal(v)
	out.size = len(b)
	out.leak = bytes.Contains(b, []byte(r.secret)) || (err != nil && strings.Contains(err.Error(), r.secret))
	out.hang = out.took > opSlow || errors.Is(ctx.Err(), context.DeadlineExceeded)
	out.over = out.size > helper.MaxResponseBytes
	return out
}

// hostProbe runs ops and folds them into one result.
func (r *run) hostProbe(ctx context.Context, name string, ops []op) check.Result {
	ok := true
	var obs []string
	for _, o := range ops {
		x := r.do(ctx, o)
		status := "ok"
		if x.err != nil {
			status = "error: " + short(x.err.Error(), 60)
		}
		var flags []string
		if x.leak {
			flags = append(flags, "LEAKED HOST CONTENT")
		}
		if x.hang {
			flags = append(flags, "HUNG")
		}
		if x.over {
			flags = append(flags, "OVER CAP")
		}
		if len(flags) > 0 {
			ok = false
		}
		obs = append(obs, fmt.Sprintf("%s: %s, %dB, %s%s", o.what, status, x.size, x.took.Round(time.Millisecond), prefixed(flags)))
	}
	return check.Result{Name: name, OK: ok, Expected: hostProbeWant, Observed: short(strings.Join(obs, "; "), 600)}
}

func prefixed(flags []string) string {
	if len(flags) == 0 {
		return ""
	}
	return " " + strings.Join(flags, " ")
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// host plants hostile entries in the workspace and reads them through the
// runtime the way massd does.
func (r *run) host(ctx context.Context) error {
	res, err := r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{probePath, "plant", "-dir", sandbox.WorkspaceMount,
		"-host-file", filepath.Join(r.hostDir, "secret.txt"), "-host-dir", r.hostDir}, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return fmt.Errorf("plant hostile entries: exit %d %s: %w", res.ExitCode, res.Stderr, errors.Join(err, sandbox.ErrUnavailable))
	}
	f := r.a.Files()
	read := func(p string) op {
		return op{"read " + p, func(ctx context.Context) (any, error) { return f.Read(ctx, p, 0, 0) }}
	}
	stat := func(p string) op {
		return op{"stat " + p, func(ctx context.Context) (any, error) { return f.Stat(ctx, p) }}
	}
	grep := func(pat, p string) op {
		return op{"grep " + p, func(ctx context.Context) (any, error) { return f.Grep(ctx, pat, p, "") }}
	}
	list := func(p string) op {
		return op{"list " + p, func(ctx context.Context) (any, error) { return f.List(ctx, p) }}
	}
	manifest := op{"manifest", func(ctx context.Context) (any, error) { return f.Manifest(ctx) }}
	glob := op{"glob **", func(ctx context.Context) (any, error) { return f.Glob(ctx, "**", ".") }}

	r.report.add(
		r.hostProbe(ctx, "host_symlink_file", []op{read(check.PlantFileLink), stat(check.PlantFileLink), grep("mass-secret", "."), glob, list(".")}),
		r.hostProbe(ctx, "host_symlink_dir", []op{list(check.PlantDirLink), read(check.PlantDirLink + "/secret.txt"), stat(check.PlantDirLink + "/secret.txt"), grep("mass-secret", check.PlantDirLink)}),
		r.hostProbe(ctx, "host_fifo", []op{read(check.PlantFIFO), stat(check.PlantFIFO), grep("x", check.PlantFIFO)}),
		r.hostProbe(ctx, "host_sparse_file", []op{read(check.PlantSparse), stat(check.PlantSparse), grep("x", check.PlantSparse), manifest}),
		r.hostProbe(ctx, "host_device_name", []op{read(check.PlantZero), read(check.PlantRandom), list("dev"), grep("x", "dev")}),
	)
	r.report.add(r.exportProbe(ctx))
	r.report.add(r.swapRace(ctx))
	return nil
}

// exportProbe exports the workspace with a cap: with the 1 TiB sparse file
// present it must stop at the cap; without it, links stay links.
func (r *run) exportProbe(ctx context.Context) check.Result {
	const name = "host_export"
	var obs []string
	ok := true
	var buf capBuffer
	buf.max = exportCap + 1<<20
	start := time.Now()
	sm, err := r.o.Runtime.ExportWorkspace(ctx, r.episode, &buf, exportCap)
	note := ""
	for _, f := range sm {
		if f.Path == check.PlantSparse {
			note = f.Omitted
		}
	}
	obs = append(obs, fmt.Sprintf("with sparse file: %s after %s, %d bytes, note %q", errText(err), time.Since(start).Round(time.Millisecond), buf.n, short(note, 80)))
	// The sparse file is left out with a note (F4), the rest exported; the
	// export never reads the terabyte of holes nor passes its cap.
	if err != nil || note == "" || buf.over || time.Since(start) > time.Minute {
		ok = false
	}
	if _, err := r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c", "rm -f " + sandbox.WorkspaceMount + "/" + check.PlantSparse}, Timeout: 30 * time.Second}); err != nil {
		return check.Result{Name: name, Expected: "export capped", Observed: "remove sparse file: " + err.Error()}
	}
	buf = capBuffer{max: exportCap + 1<<20}
	man, err := r.o.Runtime.ExportWorkspace(ctx, r.episode, &buf, exportCap)
	types := map[string]string{}
	for _, m := range man {
		types[m.Path] = m.Type
	}
	leak := bytes.Contains(buf.b, []byte(r.secret))
	obs = append(obs, fmt.Sprintf("without: %s, %d entries, %d bytes, %s=%s, %s=%s, leak=%v", errText(err), len(man), buf.n,
		check.PlantFileLink, types[check.PlantFileLink], check.PlantFIFO, orNone(types[check.PlantFIFO]), leak))
	if err != nil || leak || types[check.PlantFileLink] != "symlink" || types[check.PlantDirLink] != "symlink" || types[check.PlantFIFO] == "file" {
		ok = false
	}
	// Reading the export on the host must refuse links rather than follow them.
	for _, name := range []string{check.PlantFileLink, check.PlantDirLink + "/secret.txt", check.PlantFIFO} {
		b, rerr := workspace.ReadFile(bytes.NewReader(buf.b), name, 1<<20)
		if rerr == nil || bytes.Contains(b, []byte(r.secret)) {
			ok = false
		}
		obs = append(obs, fmt.Sprintf("host read of %s: %s", name, errText(rerr)))
	}
	if verr := workspace.Verify(bytes.NewReader(buf.b), man, workspace.DefaultLimits); verr != nil {
		ok = false
		obs = append(obs, "verify export: "+errText(verr))
	}
	return check.Result{Name: name, OK: ok, Expected: "the sparse file left out with a note, the export within its cap; links exported as links, FIFO not as a file; no host content",
		Observed: strings.Join(obs, "; ")}
}

func badText(v *atomic.Value) string {
	if s, ok := v.Load().(string); ok {
		return "; first: " + short(s, 120)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return short(err.Error(), 100)
}

// capBuffer keeps up to max bytes and counts the rest.
type capBuffer struct {
	b    []byte
	n    int64
	max  int
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	if len(c.b) >= c.max {
		c.over = true
	}
	return len(p), nil
}

var _ io.Writer = (*capBuffer)(nil)

// swapRace has agent B swap race/ between a directory and a symlink to the
// host secret directory while the host performs RaceOps file operations on
// paths through it, plus periodic exports.
func (r *run) swapRace(ctx context.Context) check.Result {
	const name = "host_swap_race"
	rctx, stop := context.WithCancel(ctx)
	swapped := make(chan string, 1)
	go func() {
		res, err := r.b.Exec(rctx, sandbox.ExecRequest{Argv: []string{probePath, "swap", "-dir", sandbox.WorkspaceMount,
			"-target", r.hostDir, "-for", "30m"}, Timeout: 30 * time.Minute})
		swapped <- fmt.Sprintf("exit %d %s %v", res.ExitCode, bytes.TrimSpace(res.Stdout), err)
	}()
	time.Sleep(300 * time.Millisecond)
	f := r.a.Files()
	ops := []op{
		{"read", func(ctx context.Context) (any, error) { return f.Read(ctx, check.PlantRaceFile, 0, 0) }},
		{"stat", func(ctx context.Context) (any, error) { return f.Stat(ctx, check.PlantRaceFile) }},
		{"list", func(ctx context.Context) (any, error) { return f.List(ctx, check.PlantRace) }},
		{"grep", func(ctx context.Context) (any, error) { return f.Grep(ctx, "mass-secret", check.PlantRace, "") }},
	}
	var next, errs, leaks, hangs, overs, inside atomic.Int64
	var firstBad atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < raceWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(r.o.RaceOps) || ctx.Err() != nil {
					return
				}
				var x outcome
				if i%1000 == 0 {
					x = r.do(ctx, op{"export", func(ctx context.Context) (any, error) {
						var b capBuffer
						b.max = exportCap
						_, err := r.o.Runtime.ExportWorkspace(ctx, r.episode, &b, exportCap)
						// Report size and any secret found, not the archive itself
						// (the response caps apply to file ops, the export has its own).
						sum := struct {
							Bytes  int64  `json:"bytes"`
							Secret string `json:"secret,omitempty"`
						}{Bytes: b.n}
						if bytes.Contains(b.b, []byte(r.secret)) {
							sum.Secret = r.secret
						}
						return sum, err
					}})
				} else {
					o := ops[int(i)%len(ops)]
					x = r.do(ctx, o)
				}
				if x.err != nil {
					errs.Add(1)
				} else {
					inside.Add(1)
				}
				if x.leak {
					leaks.Add(1)
				}
				if x.hang {
					hangs.Add(1)
					firstBad.CompareAndSwap(nil, fmt.Sprintf("op %d hung %s: %v", i, x.took.Round(time.Millisecond), x.err))
				}
				if x.over {
					overs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	stop()
	swapInfo := <-swapped
	done := min(next.Load(), int64(r.o.RaceOps))
	ok := leaks.Load() == 0 && hangs.Load() == 0 && overs.Load() == 0 && done == int64(r.o.RaceOps)
	return check.Result{Name: name, OK: ok, Expected: fmt.Sprintf("%d operations during the swap race: %s", r.o.RaceOps, hostProbeWant),
		Observed: fmt.Sprintf("%d ops in %s (%d ok, %d errors), %d leaks, %d hangs, %d over cap; swapper: %s%s",
			done, took.Round(time.Millisecond), inside.Load(), errs.Load(), leaks.Load(), hangs.Load(), overs.Load(), short(swapInfo, 80), badText(&firstBad))}
}
