// Command mass-probe is the static isolation probe that `massctl sandbox
// verify` runs inside agent containers. Build it with CGO_ENABLED=0; it
// prints its results as JSON on stdout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox/egress"
	"github.com/mass-dev/mass/sandbox/probe/check"
	"github.com/mass-dev/mass/sandbox/probe/standin"
)

const usage = `usage:
  mass-probe static -config JSON            quick checks, JSON results
  mass-probe forkbomb -config JSON [-hold D] fork until refused
  mass-probe membomb -max BYTES              touch memory until killed
  mass-probe memstat                         memory cgroup counters as JSON
  mass-probe fill -name N -dir D -cap B -max B  write until the filesystem refuses
  mass-probe burn -config JSON [-threads N] [-for D]  CPU burn against the quota
  mass-probe plant -dir D -host-file F -host-dir D  hostile workspace entries
  mass-probe swap -dir D -target T [-for D]  symlink/directory swap race
  mass-probe hold -marker M [-for D]         stay alive (the "other agent")
  mass-probe egress -config JSON            egress checks against the stand-in (check.EgressConfig)
  mass-probe standin -names A,B [-index DIR] the stand-in internet: HTTP, HTTPS, DNS (and a package index)
  mass-probe whoami                          ids and capabilities as JSON
  mass-probe noop                            exit 0`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "mass-probe %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
}

func run(cmd string, args []string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	cfgJSON := fs.String("config", "{}", "check configuration (JSON)")
	hold := fs.Duration("hold", 3*time.Second, "how long the fork bomb holds its children")
	max := fs.Int64("max", 0, "byte cap of the bomb or fill")
	capB := fs.Int64("cap", 0, "byte cap the fill expects")
	name := fs.String("name", "fill", "result name")
	dir := fs.String("dir", "", "directory")
	threads := fs.Int("threads", 2, "burn threads")
	dur := fs.Duration("for", 2*time.Second, "duration")
	hostFile := fs.String("host-file", "", "host file a symlink points at")
	hostDir := fs.String("host-dir", "", "host directory a symlink points at")
	target := fs.String("target", "", "swap race symlink target")
	marker := fs.String("marker", "", "marker for the other agent")
	names := fs.String("names", "", "names the stand-in answers")
	indexDir := fs.String("index", "", "folder of wheels the stand-in serves as a package index")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg check.Config
	if err := json.Unmarshal([]byte(*cfgJSON), &cfg); err != nil {
		return fmt.Errorf("-config: %w", err)
	}
	out := json.NewEncoder(os.Stdout)
	switch cmd {
	case check.NoopArg:
		return nil
	case "static":
		return check.WriteJSON(os.Stdout, check.Static(cfg))
	case "forkbomb":
		return check.WriteJSON(os.Stdout, []check.Result{check.ForkBomb(cfg, *hold)})
	case "membomb":
		return check.WriteJSON(os.Stdout, []check.Result{check.MemBomb(*max)})
	case "memstat":
		return out.Encode(check.ReadMemStat())
	case "fill":
		return check.WriteJSON(os.Stdout, []check.Result{check.Fill(*name, *dir, *capB, *max)})
	case "burn":
		return check.WriteJSON(os.Stdout, []check.Result{check.CPUBurn(cfg, *threads, *dur)})
	case "plant":
		return check.Plant(*dir, *hostFile, *hostDir)
	case "swap":
		return check.SwapRace(*dir, *target, *dur)
	case "hold":
		if *marker == "" {
			return fmt.Errorf("-marker is required")
		}
		time.Sleep(*dur)
		return nil
	case "egress":
		var ec check.EgressConfig
		if err := json.Unmarshal([]byte(*cfgJSON), &ec); err != nil {
			return fmt.Errorf("-config: %w", err)
		}
		return check.WriteJSON(os.Stdout, check.Egress(ec))
	case "standin":
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		return standin.Serve(strings.Split(*names, ","), *indexDir, egress.NewRecorder(os.Stdout), log)
	case "whoami":
		return out.Encode(check.Whoami())
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}
