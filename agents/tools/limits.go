package tools

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxShellTimeoutMS is qwen-code's ceiling on run_shell_command's timeout.
const MaxShellTimeoutMS = 600000

// errBackground answers is_background: true where the sandbox cannot keep
// a process past its call (no sandbox.Backgrounder, or a runtime where it
// refuses); the model is told to run in the foreground.
var errBackground = errors.New("run_shell_command: is_background is not available in this sandbox: every process ends with its call. Run the command in the foreground with a timeout (at most 600000 ms) instead")

// shellLauncher runs $1 as `bash -c "$1"`, as qwen-code does, and under
// sh only in an image without bash (the busybox test image).
const shellLauncher = `if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi; exec sh -c "$1"`

// shellArgv is the argv that runs a run_shell_command command.
func shellArgv(cmd string) []string {
	return []string{"/bin/sh", "-c", shellLauncher, "mass-shell", cmd}
}

var rePages = regexp.MustCompile(`^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$`)

// checkPages validates a read_file pages range: "N" or "N-M", 1-indexed,
// N <= M, no open ends (as qwen-code's PDF page ranges).
func checkPages(s string) error {
	m := rePages.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("%w: read_file: pages %q must be a page or a range such as \"3\" or \"1-5\"", ErrArgs, s)
	}
	first, _ := strconv.Atoi(m[1])
	last := first
	if m[2] != "" {
		last, _ = strconv.Atoi(m[2])
	}
	if first < 1 || last < first {
		return fmt.Errorf("%w: read_file: pages %q: pages count from 1 and a range must not run backwards", ErrArgs, s)
	}
	return nil
}

// ignoreMatcher compiles list_directory's ignore patterns the way
// qwen-code reads them: * is any run of characters, ? one character, and
// everything else literal, matched against the whole entry name.
func ignoreMatcher(patterns []string) func(string) bool {
	var res []*regexp.Regexp
	for _, p := range patterns {
		var b strings.Builder
		b.WriteString("^")
		for _, r := range p {
			switch r {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		b.WriteString("$")
		res = append(res, regexp.MustCompile(b.String())) // every rune is quoted or a fixed token
	}
	return func(name string) bool {
		for _, re := range res {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
}

// Validate makes the checks of argument values that the JSON Schema does
// not express (ranges, formats, uniqueness), as qwen-code's tools do
// before running. Errors wrap ErrArgs.
func Validate(spec Spec, a Args) error {
	switch spec.Name {
	case ReadFile:
		off, _ := a.Int("offset")
		lim, _ := a.Int("limit")
		if off < 0 || lim < 0 {
			return fmt.Errorf("%w: read_file: offset and limit must not be negative", ErrArgs)
		}
		if a.Has("pages") {
			return checkPages(a.String("pages"))
		}
	case Shell:
		if strings.TrimSpace(a.String("command")) == "" {
			return fmt.Errorf("%w: run_shell_command: command must not be empty", ErrArgs)
		}
		if ms, ok := a.Int("timeout"); ok && (ms <= 0 || ms > MaxShellTimeoutMS) {
			return fmt.Errorf("%w: run_shell_command: timeout must be between 1 and %d milliseconds", ErrArgs, MaxShellTimeoutMS)
		}
	case Grep:
		if lim, ok := a.Int("limit"); ok && lim <= 0 {
			return fmt.Errorf("%w: grep_search: limit must be a positive number of lines", ErrArgs)
		}
	case TodoWrite:
		seen := map[string]bool{}
		items, _ := a.Value("todos").([]any)
		for _, it := range items {
			id := it.(map[string]any)["id"].(string)
			if seen[id] {
				return fmt.Errorf("%w: todo_write: todo ids must be unique, %q appears twice", ErrArgs, id)
			}
			seen[id] = true
		}
	}
	return nil
}
