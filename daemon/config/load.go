package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxFileBytes caps the size of a config file.
const MaxFileBytes = 1 << 20

// Parse decodes a YAML config over the defaults in c. Unknown fields are
// errors so that a typo never silently falls back to a default.
func (c *Config) Parse(data []byte) error {
	if len(data) > MaxFileBytes {
		return fmt.Errorf("config is %d bytes; the limit is %d", len(data), MaxFileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config: %s", explainUnknown(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	return nil
}

// LoadFile reads the YAML file at p over c.
func (c *Config) LoadFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("read config %s: %w", p, err)
	}
	if err := c.Parse(data); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// envVars maps MASS_* variables to the settings they override.
var envVars = []struct {
	name string
	set  func(c *Config, v string) error
}{
	{"MASS_SOCKET", func(c *Config, v string) error { c.Socket = v; return nil }},
	{"MASS_DATA_DIR", func(c *Config, v string) error { c.DataDir = v; return nil }},
	{"MASS_TCP_LISTEN", func(c *Config, v string) error { c.TCP.Listen = v; return nil }},
	{"MASS_TCP_TOKEN_FILE", func(c *Config, v string) error { c.TCP.TokenFile = v; return nil }},
	{"MASS_LOG_FORMAT", func(c *Config, v string) error { c.Log.Format = v; return nil }},
	{"MASS_LOG_LEVEL", func(c *Config, v string) error { c.Log.Level = v; return nil }},
	{"MASS_JOBS_CONCURRENCY", func(c *Config, v string) error { return setInt(&c.Jobs.Concurrency, v) }},
	{"MASS_SANDBOX_IMAGE", func(c *Config, v string) error { c.Sandbox.Image = v; return nil }},
	{"MASS_SANDBOX_TEST_IMAGE", func(c *Config, v string) error { c.Sandbox.TestImage = v; return nil }},
	{"MASS_SANDBOX_RUNTIME", func(c *Config, v string) error { c.Sandbox.Runtime = v; return nil }},
	{"MASS_SANDBOX_HELPER", func(c *Config, v string) error { c.Sandbox.Helper = v; return nil }},
	{"MASS_SANDBOX_STRICT", func(c *Config, v string) error { return setBool(&c.Sandbox.Strict, v) }},
	{"MASS_TRAINER_BINARY", func(c *Config, v string) error { c.Trainer.Binary = v; return nil }},
	{"MASS_TRAINER_CUDA_BINARY", func(c *Config, v string) error { c.Trainer.CUDABinary = v; return nil }},
}

// ApplyEnv overrides settings from MASS_* variables read with getenv.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for _, e := range envVars {
		if v := getenv(e.name); v != "" {
			if err := e.set(c, v); err != nil {
				return fmt.Errorf("environment %s=%q: %w", e.name, v, err)
			}
		}
	}
	return nil
}

func setInt(p *int, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	*p = n
	return nil
}

func setBool(p *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*p = b
	return nil
}

// Flags are massd's command-line settings; only flags given explicitly
// override the file and the environment.
type Flags struct {
	fs          *flag.FlagSet
	ConfigPath  string
	Version     bool
	socket      string
	dataDir     string
	tcpListen   string
	tokenFile   string
	logFormat   string
	logLevel    string
	concurrency int
}

// NewFlags registers massd's flags on a new flag set.
func NewFlags(name string) *Flags {
	f := &Flags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	f.fs.StringVar(&f.ConfigPath, "config", "", "YAML config `file` (env MASS_CONFIG)")
	f.fs.BoolVar(&f.Version, "version", false, "print the version and exit")
	f.fs.StringVar(&f.socket, "socket", "", "unix socket `path` (default $XDG_RUNTIME_DIR/mass/massd.sock or /run/mass/massd.sock)")
	f.fs.StringVar(&f.dataDir, "data-dir", "", "state `dir` (default /var/lib/mass, or ~/.local/share/mass for non-root)")
	f.fs.StringVar(&f.tcpListen, "tcp", "", "also listen on TCP `host:port` (requires --token-file)")
	f.fs.StringVar(&f.tokenFile, "token-file", "", "`file` holding the bearer token for TCP clients")
	f.fs.StringVar(&f.logFormat, "log-format", "", "log format: text or json")
	f.fs.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn or error")
	f.fs.IntVar(&f.concurrency, "jobs", 0, "jobs running at once")
	return f
}

// Parse parses args.
func (f *Flags) Parse(args []string) error { return f.fs.Parse(args) }

func (f *Flags) apply(c *Config) {
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "socket":
			c.Socket = f.socket
		case "data-dir":
			c.DataDir = f.dataDir
		case "tcp":
			c.TCP.Listen = f.tcpListen
		case "token-file":
			c.TCP.TokenFile = f.tokenFile
		case "log-format":
			c.Log.Format = f.logFormat
		case "log-level":
			c.Log.Level = f.logLevel
		case "jobs":
			c.Jobs.Concurrency = f.concurrency
		}
	})
}

// Load builds the configuration: defaults, then the config file (flag
// --config or MASS_CONFIG), then MASS_* variables, then explicit flags; and
// validates the result.
func Load(f *Flags, getenv func(string) string) (*Config, error) {
	c := Default()
	path := f.ConfigPath
	if path == "" {
		path = getenv("MASS_CONFIG")
	}
	if path != "" {
		if err := c.LoadFile(path); err != nil {
			return nil, err
		}
	}
	if err := c.ApplyEnv(getenv); err != nil {
		return nil, err
	}
	f.apply(c)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
