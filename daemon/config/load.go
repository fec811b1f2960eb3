package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
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

// ApplyEnv overrides settings from MASS_* variables read with getenv (the
// settings table names them).
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for _, st := range settings {
		if v := getenv(st.env); st.env != "" && v != "" {
			if err := st.assign(c, v); err != nil {
				return fmt.Errorf("environment %s=%q: %w", st.env, v, err)
			}
		}
	}
	return nil
}

// Flags are massd's command-line settings; only flags given explicitly
// override the file and the environment.
type Flags struct {
	fs         *flag.FlagSet
	ConfigPath string
	Version    bool
	vals       map[string]reflect.Value // flag name → the value it parsed into
}

// NewFlags registers massd's flags on a new flag set: --config, --version
// and a flag for each setting the settings table gives one.
func NewFlags(name string) *Flags {
	f := &Flags{fs: flag.NewFlagSet(name, flag.ContinueOnError), vals: map[string]reflect.Value{}}
	f.fs.StringVar(&f.ConfigPath, "config", "", "YAML config `file` (env MASS_CONFIG)")
	f.fs.BoolVar(&f.Version, "version", false, "print the version and exit")
	for _, st := range settings {
		if st.flag == "" {
			continue
		}
		switch st.field(&Config{}).Kind() {
		case reflect.String:
			p := new(string)
			f.fs.StringVar(p, st.flag, "", st.usage)
			f.vals[st.flag] = reflect.ValueOf(p).Elem()
		case reflect.Int:
			p := new(int)
			f.fs.IntVar(p, st.flag, 0, st.usage)
			f.vals[st.flag] = reflect.ValueOf(p).Elem()
		case reflect.Bool:
			p := new(bool)
			f.fs.BoolVar(p, st.flag, false, st.usage)
			f.vals[st.flag] = reflect.ValueOf(p).Elem()
		default:
			panic("config: setting " + st.key + " cannot be a flag")
		}
	}
	return f
}

// Parse parses args.
func (f *Flags) Parse(args []string) error { return f.fs.Parse(args) }

// apply sets the settings of the flags given explicitly.
func (f *Flags) apply(c *Config) {
	f.fs.Visit(func(fl *flag.Flag) {
		for _, st := range settings {
			if st.flag == fl.Name {
				st.field(c).Set(f.vals[fl.Name])
			}
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
