// Command mass-sandbox-helper runs inside every agent container (mounted
// read-only from the host, built with CGO_ENABLED=0): JSON file operations,
// an exec wrapper that kills whole process trees, and workspace preparation.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

const usage = `usage:
  mass-sandbox-helper op                         JSON request on stdin, JSON response on stdout
  mass-sandbox-helper serve                      length-prefixed JSON requests on stdin, responses on stdout, until EOF
  mass-sandbox-helper exec [-timeout D] [-dir DIR] [-nofile N] -- ARGV  run ARGV, kill its whole tree at D or when it exits
  mass-sandbox-helper ls DIR                     the names in DIR, each ending in NUL (the keeper, for the export)
  mass-sandbox-helper prepare -owner UID:GID [-protect PATH]...
  mass-sandbox-helper pause                      wait for SIGTERM (a container's main process)
  mass-sandbox-helper du                         bytes allocated under /workspace
  mass-sandbox-helper orphans                    SIGKILL processes whose exec wrapper died
  mass-sandbox-helper killall                    SIGKILL every process of the caller's uid`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(cmd string, args []string) int {
	switch cmd {
	case "op":
		if !noDump() {
			return 1
		}
		return op()
	case "serve":
		if !noDump() {
			return 1
		}
		if err := helper.EnsureSeccomp(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		key, err := helper.ReadSealKey(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := helper.Serve(os.Stdin, os.Stdout, helper.NewServer(sandbox.WorkspaceMount), helper.HelperSeal(key)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "exec":
		fs := flag.NewFlagSet("exec", flag.ContinueOnError)
		timeout := fs.Duration("timeout", 0, "kill the command tree after this long (0: never)")
		dir := fs.String("dir", "", "working directory of the command (the kubernetes backend's execs have none)")
		nofile := fs.Uint64("nofile", 0, "RLIMIT_NOFILE of the command, soft and hard (0: inherit; a pod has no such field)")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if *nofile > 0 {
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: *nofile, Max: *nofile}); err != nil {
				fmt.Fprintln(os.Stderr, "setrlimit nofile:", err)
				return 126
			}
		}
		if *dir != "" {
			if err := os.Chdir(*dir); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 126
			}
		}
		return helper.RunExec(fs.Args(), *timeout)
	case "prepare":
		return prepare(args)
	case "pause":
		// In an agent container it runs under a uid of its own (the agent
		// cannot trace it anyway); non-dumpable as well, in depth.
		if !noDump() {
			return 1
		}
		helper.Pause()
		return 0
	case "du":
		n, err := helper.DiskUsage(sandbox.WorkspaceMount)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(n)
		return 0
	case "ls":
		// The keeper lists a directory for the export's resumption past a
		// file it leaves out; names end in NUL, in os.ReadDir's order.
		if len(args) != 1 {
			return 2
		}
		ents, err := os.ReadDir(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, e := range ents {
			fmt.Print(e.Name() + "\x00")
		}
		return 0
	case "orphans":
		helper.KillOrphans()
		return 0
	case "killall":
		if err := helper.KillAll(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, usage)
	return 2
}

func op() int {
	enc := json.NewEncoder(os.Stdout)
	req, err := helper.DecodeRequest(os.Stdin)
	if err != nil {
		_ = enc.Encode(helper.Response{Kind: helper.KindInvalid, Error: err.Error()})
		return 0
	}
	_ = enc.Encode(helper.NewServer(sandbox.WorkspaceMount).Do(req))
	return 0
}

// noDump makes the file-op helpers untraceable by the agent's processes,
// which run under the same uid.
func noDump() bool {
	if err := helper.NoDump(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return false
	}
	return true
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func prepare(args []string) int {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	owner := fs.String("owner", "65534:65534", "uid:gid that owns the workspace")
	var protect multi
	fs.Var(&protect, "protect", "workspace-relative path agents must not change (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	uid, gid, err := sandbox.ParseUser(*owner)
	if err != nil {
		fmt.Fprintf(os.Stderr, "prepare -owner: %v\n", err)
		return 2
	}
	start := time.Now()
	if err := helper.Prepare(sandbox.WorkspaceMount, uid, gid, protect); err != nil {
		fmt.Fprintf(os.Stderr, "prepare: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "prepare: ok in %s\n", time.Since(start))
	return 0
}
