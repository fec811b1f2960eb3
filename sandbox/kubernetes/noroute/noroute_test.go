package noroute

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestAdd(t *testing.T) {
	var out bytes.Buffer
	if err := Run("ADD", "abc", "/var/run/netns/x", "eth0", strings.NewReader(`{"cniVersion":"1.0.0","name":"n","type":"mass-cni-noroute"}`), &out); err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.IPs) != 1 || r.IPs[0].Address != Address("abc") || r.Interfaces[0].Name != "eth0" || r.CNIVersion != "1.0.0" {
		t.Fatalf("result %s", out.String())
	}
	if !strings.HasPrefix(r.IPs[0].Address, "169.254.") {
		t.Fatalf("address %s is not link-local", r.IPs[0].Address)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ cmd, id, conf string }{
		{"ADD", "", `{}`}, {"ADD", "x", `{`}, {"BOGUS", "x", `{}`},
	} {
		if err := Run(tc.cmd, tc.id, "", "", strings.NewReader(tc.conf), &bytes.Buffer{}); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
	if err := Run("DEL", "x", "", "", strings.NewReader(`{}`), &bytes.Buffer{}); err != nil {
		t.Errorf("DEL: %v", err)
	}
	var out bytes.Buffer
	if err := Run("VERSION", "", "", "", strings.NewReader(""), &out); err != nil || !strings.Contains(out.String(), "1.0.0") {
		t.Errorf("VERSION: %v %s", err, out.String())
	}
}

func FuzzRun(f *testing.F) {
	f.Add("ADD", `{"cniVersion":"1.0.0"}`)
	f.Fuzz(func(t *testing.T, cmd, conf string) {
		_ = Run(cmd, "id", "", "eth0", strings.NewReader(conf), &bytes.Buffer{})
	})
}
