package image

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mass-dev/mass/sandbox"
)

// Bounds of a profile file.
const (
	MaxProfileBytes    = 64 << 10
	MaxProfilePackages = 500
	MaxProfileEnv      = 100
)

var (
	// Debian policy §5.6.1: lower case, digits, + - ., at least two, alnum first.
	debPackageRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	envKeyRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// profileFile is the YAML layout of a profile file:
//
//	name: research-chem       # the image is mass-research-chem:latest
//	from: research            # base (default) or research
//	packages: [python3-rdkit] # added to from's packages
//	env: {RDKIT_QUIET: "1"}   # added to from's environment (a key replaces)
type profileFile struct {
	Name     string            `yaml:"name"`
	From     string            `yaml:"from"`
	Packages []string          `yaml:"packages"`
	Env      map[string]string `yaml:"env"`
}

// LoadProfile reads a profile file (ParseProfile).
func LoadProfile(path string) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return Profile{}, fmt.Errorf("profile file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return Profile{}, fmt.Errorf("profile file %s: %w", path, err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return Profile{}, fmt.Errorf("profile file %s: %w", path, err)
	}
	return p, nil
}

// ParseProfile decodes a profile file: unknown fields, bad package names,
// environment entries docker import could not carry verbatim and the
// built-in names are errors (wrapping sandbox.ErrInvalid).
func ParseProfile(data []byte) (Profile, error) {
	bad := func(format string, args ...any) (Profile, error) {
		return Profile{}, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sandbox.ErrInvalid)
	}
	if len(data) > MaxProfileBytes {
		return bad("%d bytes; the limit is %d", len(data), MaxProfileBytes)
	}
	var pf profileFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&pf); err != nil {
		if errors.Is(err, io.EOF) {
			return bad("empty; it needs at least name and packages")
		}
		return bad("%v (fields: name, from, packages, env)", err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return bad("expected one YAML document; found more after it")
	}
	if err := sandbox.CheckProfile(pf.Name); err != nil {
		return Profile{}, fmt.Errorf("name: %w", err)
	}
	if _, builtin := BuiltinProfile(pf.Name); builtin {
		return bad("name %q is a built-in profile; give the file's profile a name of its own", pf.Name)
	}
	if pf.From == "" {
		pf.From = sandbox.ProfileBase
	}
	p, ok := BuiltinProfile(pf.From)
	if !ok {
		return bad("from %q: want %q or %q", pf.From, sandbox.ProfileBase, sandbox.ProfileResearch)
	}
	p.Name = pf.Name
	if len(pf.Packages)+len(p.Packages) > MaxProfilePackages {
		return bad("%d packages; the limit is %d", len(pf.Packages)+len(p.Packages), MaxProfilePackages)
	}
	for _, pkg := range pf.Packages {
		if !debPackageRE.MatchString(pkg) {
			return bad("package %q is not a Debian package name (lower case, digits, + - .)", truncate(pkg, 80))
		}
		if !slices.Contains(p.Packages, pkg) {
			p.Packages = append(p.Packages, pkg)
		}
	}
	if len(pf.Env) > MaxProfileEnv {
		return bad("%d env entries; the limit is %d", len(pf.Env), MaxProfileEnv)
	}
	keys := make([]string, 0, len(pf.Env))
	for k := range pf.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkEnv(k, pf.Env[k]); err != nil {
			return Profile{}, err
		}
		p.Env = setEnv(p.Env, k+"="+pf.Env[k])
	}
	return p, nil
}

// checkEnv refuses what an image's ENV line cannot hold verbatim and what
// the runtime sets per box.
func checkEnv(k, v string) error {
	if !envKeyRE.MatchString(k) {
		return fmt.Errorf("env key %q: want letters, digits and _, not starting with a digit: %w", truncate(k, 80), sandbox.ErrInvalid)
	}
	switch strings.ToUpper(k) {
	case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
		return fmt.Errorf("env %s: the egress proxy sets it per box; leave it out: %w", k, sandbox.ErrInvalid)
	}
	if len(v) > 1024 || strings.ContainsAny(v, " \t\r\n\"'\\$`") || strings.ContainsRune(v, 0) {
		return fmt.Errorf("env %s: the value must be at most 1024 bytes without spaces, quotes, backslashes or $: %w", k, sandbox.ErrInvalid)
	}
	return nil
}

// setEnv replaces the entry of kv's key in env or appends kv.
func setEnv(env []string, kv string) []string {
	for i, e := range env {
		if envKey(e) == envKey(kv) {
			env[i] = kv
			return env
		}
	}
	return append(env, kv)
}
