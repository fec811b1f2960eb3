package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// setting is one scalar setting of massd, declared once: its yaml key (the
// dotted path of yaml tags to its field of Config), its MASS_* variable
// and, for some, its command-line flag and the flag's usage. The field is
// found from the key, so the yaml tag is the one spelling of where it
// lives; the environment and the flags are made from this table.
type setting struct {
	key, env    string
	flag, usage string
}

// settings are massd's scalar settings, in the order the docs list them.
var settings = []setting{
	{key: "socket", env: "MASS_SOCKET", flag: "socket", usage: "unix socket `path` (default $XDG_RUNTIME_DIR/mass/massd.sock or /run/mass/massd.sock)"},
	{key: "data_dir", env: "MASS_DATA_DIR", flag: "data-dir", usage: "state `dir` (default /var/lib/mass, or ~/.local/share/mass for non-root)"},
	{key: "tcp.listen", env: "MASS_TCP_LISTEN", flag: "tcp", usage: "also listen on TCP `host:port` (requires --token-file)"},
	{key: "tcp.token_file", env: "MASS_TCP_TOKEN_FILE", flag: "token-file", usage: "`file` holding the bearer token for TCP clients"},
	{key: "log.format", env: "MASS_LOG_FORMAT", flag: "log-format", usage: "log format: text or json"},
	{key: "log.level", env: "MASS_LOG_LEVEL", flag: "log-level", usage: "log level: debug, info, warn or error"},
	{key: "jobs.concurrency", env: "MASS_JOBS_CONCURRENCY", flag: "jobs", usage: "jobs running at once"},
	{key: "sandbox.image", env: "MASS_SANDBOX_IMAGE"},
	{key: "sandbox.test_image", env: "MASS_SANDBOX_TEST_IMAGE"},
	{key: "sandbox.runtime", env: "MASS_SANDBOX_RUNTIME"},
	{key: "sandbox.helper", env: "MASS_SANDBOX_HELPER"},
	{key: "sandbox.strict", env: "MASS_SANDBOX_STRICT"},
	{key: "sandbox.kubernetes.max_boxes", env: "MASS_SANDBOX_KUBERNETES_MAX_BOXES"},
	{key: "trainer.binary", env: "MASS_TRAINER_BINARY"},
	{key: "trainer.cuda_binary", env: "MASS_TRAINER_CUDA_BINARY"},
}

// field is the field of c that s's key names. Every key resolves (a test
// checks), so a miss is a programming error.
func (s setting) field(c *Config) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, k := range strings.Split(s.key, ".") {
		f, ok := fieldByYAML(v.Type(), k)
		if !ok {
			panic("config: setting " + s.key + " names no field")
		}
		v = v.FieldByIndex(f.Index)
	}
	return v
}

// fieldByYAML finds the field of struct type t whose yaml key is key.
func fieldByYAML(t reflect.Type, key string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// assign parses text into s's field of c, by the field's type.
func (s setting) assign(c *Config, text string) error {
	f := s.field(c)
	switch f.Kind() {
	case reflect.String:
		f.SetString(text)
	case reflect.Int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		f.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("setting %s: a %s cannot be set from text", s.key, f.Kind())
	}
	return nil
}
