// Package usable checks that ordinary tools work in an agent box: each
// everyday command (ls, stat, tar, ps, python3 with the scientific stack…)
// runs as the agent user in a real sandbox and must exit 0. A runtime that
// isolates well but breaks `ls` is no use to a model, and no isolation
// probe notices.
package usable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

// Scratch directories the commands work in: one in the workspace, one in /tmp.
const (
	WorkDir = sandbox.WorkspaceMount + "/.mass-usable"
	TmpDir  = "/tmp/mass-usable"
)

// Version changes whenever Commands change, so cached verdicts of an older
// list are not reused.
const Version = "1"

// CommandTimeout bounds one command (python3 importing the stack is the slowest).
const CommandTimeout = 2 * time.Minute

// Command is one everyday command, run by /bin/sh -c as the agent user.
type Command struct {
	Name   string // probe name: usable_<Name>
	Script string
}

// Commands are run in order; later ones use what earlier ones made, and
// the last removes the scratch directories.
var Commands = []Command{
	{"mkdir_p", `mkdir -p ` + WorkDir + `/a/b/c ` + TmpDir + `/a/b`},
	{"touch", `touch ` + WorkDir + `/a/f.txt ` + TmpDir + `/f.txt`},
	{"write_files", `printf 'beta\nalpha\ngamma\n' > ` + WorkDir + `/a/b/data.txt && printf 'x\n' > ` + TmpDir + `/x.txt && test -s ` + TmpDir + `/x.txt`},
	{"ls_la", `ls -la /workspace /tmp ` + WorkDir + ` ` + WorkDir + `/a >/dev/null && ls -la ` + WorkDir + `/a | grep -q f.txt`},
	{"stat", `stat /workspace ` + WorkDir + `/a/f.txt ` + TmpDir + `/x.txt >/dev/null && test "$(stat -c '%s %F' ` + WorkDir + `/a/b/data.txt)" = "17 regular file"`},
	{"find", `test "$(find ` + WorkDir + ` -type f -name '*.txt' | wc -l)" -eq 2`},
	{"cp", `cp -r ` + WorkDir + `/a ` + WorkDir + `/a2 && cp ` + TmpDir + `/x.txt ` + TmpDir + `/y.txt && cmp ` + WorkDir + `/a/b/data.txt ` + WorkDir + `/a2/b/data.txt`},
	{"mv", `mv ` + WorkDir + `/a2 ` + WorkDir + `/a3 && mv ` + TmpDir + `/y.txt ` + TmpDir + `/z.txt && test -d ` + WorkDir + `/a3 && test ! -e ` + WorkDir + `/a2`},
	{"ln_s", `ln -s ` + WorkDir + `/a/b/data.txt ` + WorkDir + `/link && ln -s ` + TmpDir + `/x.txt ` + TmpDir + `/link && test -L ` + WorkDir + `/link`},
	{"readlink", `test "$(readlink ` + WorkDir + `/link)" = ` + WorkDir + `/a/b/data.txt && test "$(readlink -f ` + TmpDir + `/link)" = ` + TmpDir + `/x.txt`},
	{"chmod", `chmod 750 ` + WorkDir + `/a/f.txt && test "$(stat -c %a ` + WorkDir + `/a/f.txt)" = 750 && chmod -R u+rwX ` + WorkDir + `/a3`},
	{"du", `du -sh ` + WorkDir + ` ` + TmpDir + ` >/dev/null`},
	{"df", `df /workspace >/dev/null && df -h /tmp >/dev/null`},
	{"tar", `tar -czf ` + TmpDir + `/a.tgz -C ` + WorkDir + ` a && mkdir ` + WorkDir + `/untar && tar -xzf ` + TmpDir + `/a.tgz -C ` + WorkDir + `/untar && cmp ` + WorkDir + `/a/b/data.txt ` + WorkDir + `/untar/a/b/data.txt && tar -tf ` + TmpDir + `/a.tgz >/dev/null`},
	{"grep", `grep -q alpha ` + WorkDir + `/a/b/data.txt && test "$(grep -c a ` + WorkDir + `/a/b/data.txt)" = 3`},
	{"sed", `test "$(sed -n 2p ` + WorkDir + `/a/b/data.txt)" = alpha && sed -i 's/beta/delta/' ` + WorkDir + `/a/b/data.txt`},
	{"awk", `test "$(awk 'END { print NR }' ` + WorkDir + `/a/b/data.txt)" = 3`},
	{"sort", `test "$(sort ` + WorkDir + `/a/b/data.txt | head -n 1)" = alpha`},
	{"wc", `test "$(wc -l < ` + WorkDir + `/a/b/data.txt)" = 3`},
	{"head", `test "$(head -n 1 ` + WorkDir + `/a/b/data.txt)" = delta`},
	{"od", `od -c ` + TmpDir + `/x.txt | grep -q 'x'`},
	{"date", `date -u +%Y-%m-%dT%H:%M:%SZ >/dev/null`},
	{"env", `env | grep -q '^PATH='`},
	{"id", `id >/dev/null && test "$(id -u)" != 0`},
	{"ps", `ps -e >/dev/null && ps -e -o pid,comm | grep -q ps`},
	{"mktemp_d", `d=$(mktemp -d) && test -d "$d" && touch "$d/f" && rm -r "$d"`},
	{"test_w", `test -w /workspace && test -w /tmp && test -w ` + WorkDir + `/a/f.txt`},
	{"proc_self_status", `grep -q '^Uid:' /proc/self/status`},
	{"python3_stack", `python3 -c '
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt, numpy as np, pandas as pd, scipy.stats, sklearn.linear_model
x = np.arange(20.0)
df = pd.DataFrame({"x": x, "y": 2 * x + 1})
m = sklearn.linear_model.LinearRegression().fit(df[["x"]], df["y"])
assert abs(m.coef_[0] - 2) < 1e-9, m.coef_
assert scipy.stats.pearsonr(df.x, df.y)[0] > 0.999
df.to_csv("` + WorkDir + `/d.csv", index=False)
plt.plot(df.x, df.y); plt.savefig("` + TmpDir + `/p.png")
'`},
	{"python3_files", `python3 -c '
import os, pathlib, shutil, tempfile
for d in ("` + WorkDir + `", "` + TmpDir + `", tempfile.gettempdir()):
    p = pathlib.Path(d) / "py.txt"
    p.write_text("hi")
    assert p.read_text() == "hi" and os.stat(p).st_size == 2
    assert "py.txt" in os.listdir(d)
    shutil.copy(p, str(p) + ".bak"); os.remove(str(p) + ".bak"); p.unlink()
assert len(open("` + WorkDir + `/d.csv").read().splitlines()) == 21
'`},
	{"rm_rf", `rm -rf ` + WorkDir + ` ` + TmpDir + ` && test ! -e ` + WorkDir + ` && test ! -e ` + TmpDir},
}

// Names lists the probe names of Commands in run order.
func Names() []string {
	out := make([]string, len(Commands))
	for i, c := range Commands {
		out[i] = "usable_" + c.Name
	}
	return out
}

// Run runs every command in sb and returns one result per command. An
// error means a command could not be started at all (the box is gone, the
// engine is unreachable), not that a command failed.
func Run(ctx context.Context, sb sandbox.Sandbox) ([]check.Result, error) {
	var out []check.Result
	for _, c := range Commands {
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c", c.Script}, Timeout: CommandTimeout, MaxBytes: 64 << 10})
		if err != nil && ctx.Err() != nil {
			return out, fmt.Errorf("usability command %s: %w", c.Name, err)
		}
		out = append(out, Judge(c, res, err))
	}
	return out, nil
}

// Judge turns one command's outcome into a probe result: it passes only
// on exit 0 within the time limit.
func Judge(c Command, res sandbox.ExecResult, err error) check.Result {
	r := check.Result{Name: "usable_" + c.Name, Expected: "as the agent user `" + firstLine(c.Script) + "` exits 0"}
	switch {
	case err != nil:
		r.Observed = "could not run: " + err.Error()
	case res.TimedOut:
		r.Observed = fmt.Sprintf("timed out after %s; stderr: %s", CommandTimeout, Tail(res.Stderr, 300))
	case res.ExitCode != 0:
		r.Observed = fmt.Sprintf("exit %d; stderr: %s", res.ExitCode, Tail(res.Stderr, 300))
	default:
		r.OK = true
		r.Observed = fmt.Sprintf("exit 0 in %s", res.Duration.Round(time.Millisecond))
	}
	return r
}

// Failed lists "name: observed" for the failed results.
func Failed(rs []check.Result) []string {
	var out []string
	for _, r := range rs {
		if !r.OK {
			out = append(out, r.Name+": "+r.Observed)
		}
	}
	return out
}

// Tail is the last n bytes of b, trimmed, valid UTF-8 kept whole.
func Tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && (s[0]&0xC0) == 0x80 {
		s = s[1:]
	}
	return "…" + s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
