package probe

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

var wantEgress = []string{
	"proxy_allowed_http", "proxy_allowed_https", "proxy_denied_name", "proxy_ip_literal",
	"proxy_direct_socket", "proxy_host_unreachable", "proxy_dns_exfil", "proxy_byte_cap", "proxy_dns_never_left", "proxy_denied_recorded",
}

var (
	proxyOnce sync.Once
	proxyBin  string
	proxyErr  error
)

// verifyEgress runs the egress probes against a fresh stand-in, with the
// named egress weakening applied ("" for none).
func verifyEgress(t *testing.T, weaken string) Report {
	t.Helper()
	if testEngine == nil {
		t.Skip(testSkip)
	}
	proxyOnce.Do(func() {
		proxyBin, proxyErr = sandboxtest.BuildStatic(t.TempDir(), "github.com/mass-dev/mass/sandbox/egress/cmd/mass-egress-proxy")
		if proxyErr == nil {
			// t.TempDir is removed with this test; keep the binary for the others.
			dst := os.TempDir() + "/mass-egress-proxy-probetest"
			if b, err := os.ReadFile(proxyBin); err == nil && os.WriteFile(dst, b, 0o755) == nil {
				proxyBin = dst
			}
		}
	})
	if proxyErr != nil {
		t.Fatal(proxyErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	labels := map[string]string{docker.LabelDaemon: testDaemonID(), docker.LabelEpisode: "standin-" + randHex(4), docker.LabelKind: "egress"}
	st, err := StartStandin(ctx, testEngine, testProbe, image.TestRef, "mass-"+labels[docker.LabelEpisode], labels)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	ref := testReference()
	ref.Egress = DefaultEgress()
	pol := ref
	e := *ref.Egress
	pol.Egress = &e
	o := EgressOptions{Engine: testEngine, Standin: st, Probe: testProbe, Image: image.TestRef, Reference: ref, Policy: pol}
	WeakenEgress(&o, []string{weaken})
	rt, err := docker.New(ctx, docker.Config{
		DaemonID: testDaemonID(), HelperPath: testHelper, Image: image.TestRef, Policy: testReference(), Client: testEngine,
		Egress: docker.EgressConfig{ProxyPath: proxyBin, Network: st.Network, DNS: []string{st.Address}, AllowPrivate: true,
			HostAddress: o.HostAddress},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o.Runtime = rt
	rep, err := RunEgress(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	t.Log("\n" + buf.String())
	return rep
}

// TestVerifyEgress: with the reference egress policy every egress probe
// passes, and each one is reported.
func TestVerifyEgress(t *testing.T) {
	rep := verifyEgress(t, "")
	if f := rep.Failing(); len(f) > 0 {
		t.Errorf("egress probes failed on the reference policy: %v", f)
	}
	got := names(rep)
	for _, w := range wantEgress {
		if !slices.Contains(got, w) {
			t.Errorf("probe %s missing from the report", w)
		}
	}
}

// TestVerifyEgressWeakenings: each egress weakening makes exactly its
// probes fail, so each probe can fail.
func TestVerifyEgressWeakenings(t *testing.T) {
	for _, w := range EgressWeakenings {
		t.Run(w.Name, func(t *testing.T) {
			rep := verifyEgress(t, w.Name)
			got := rep.Failing()
			want := slices.Clone(w.Fails)
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("failing probes = %v, want %v", got, want)
			}
		})
	}
}
