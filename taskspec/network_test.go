package taskspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const netBase = "id: t1\nprompt: p\nlimits:\n  episode_wall_time: 1m\n  agent_turns: 3\n"

func TestParseNetwork(t *testing.T) {
	s, err := Parse([]byte(netBase + "network:\n  allow: [api.stlouisfed.org, \"*.rcsb.org\"]\n  max_bytes: 2GiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Network == nil || strings.Join(s.Network.Allow, ",") != "api.stlouisfed.org,*.rcsb.org" || s.Network.MaxBytes != 2<<30 {
		t.Errorf("network = %+v", s.Network)
	}
	s, err = Parse([]byte(netBase))
	if err != nil || s.Network != nil {
		t.Errorf("no network: %+v, %v; want nil", s.Network, err)
	}
}

func TestParseNetworkErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		field     string
		msg       string
	}{
		{"empty allow", "network: {allow: []}\n", 6, "network.allow", "is required"},
		{"no allow", "network: {max_bytes: 1GiB}\n", 6, "network.allow", "is required"},
		{"ip literal", "network:\n  allow: [10.0.0.1]\n", 7, "network.allow[0]", "IP address"},
		{"port", "network:\n  allow: [ok.org, files.rcsb.org:443]\n", 7, "network.allow[1]", "port"},
		{"scheme", "network:\n  allow:\n    - https://fred.stlouisfed.org\n", 8, "network.allow[0]", "scheme"},
		{"bare star", "network:\n  allow: ['*']\n", 7, "network.allow[0]", "wildcard"},
		{"twice", "network:\n  allow: [a.org, a.org]\n", 7, "network.allow[1]", "twice"},
		{"small cap", "network:\n  allow: [a.org]\n  max_bytes: 10\n", 8, "network.max_bytes", "below 1MiB"},
		{"unknown key", "network:\n  allow: [a.org]\n  ports: [22]\n", 8, "network.ports", "unknown field"},
		{"not mapping", "network: [a.org]\n", 6, "network", "mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(netBase + tt.doc))
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("Parse error = %v, want Errors", err)
			}
			e := es[0]
			if e.Line != tt.line || e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error %q (line %d field %q), want line %d field %q msg containing %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
		})
	}
}

func TestNetworkErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	if err := os.WriteFile(p, []byte(netBase+"network:\n  allow: [\"fred.org:80\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+":7: network.allow[0]: ") {
		t.Errorf("Load error = %v, want %s:7: network.allow[0]: ...", err, p)
	}
}
