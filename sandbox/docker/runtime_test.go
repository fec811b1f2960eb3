package docker

import (
	"context"
	"errors"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func TestNewRejects(t *testing.T) {
	rt := needEngine(t)
	ctx := context.Background()
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"bad daemon id", Config{DaemonID: "a/b", HelperPath: testHelper}, sandbox.ErrInvalid},
		{"missing helper", Config{DaemonID: "d", HelperPath: "/no/such/helper"}, sandbox.ErrInvalid},
	}
	for _, tt := range tests {
		tt.cfg.Client = rt.cli
		if _, err := New(ctx, tt.cfg); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	rep, err := rt.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := New(ctx, Config{DaemonID: "strict", HelperPath: testHelper, Strict: true, Client: rt.cli})
	if got, want := err != nil, len(rep.Warnings) > 0; got != want {
		t.Errorf("strict mode with warnings %v: err %v", rep.Warnings, err)
	}
	if err != nil && !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("strict refusal: %v, want ErrDenied", err)
	}
	if strict != nil {
		weak := sandbox.DefaultPolicy()
		weak.NetworkMode = "bridge"
		if _, err := strict.Create(ctx, sandbox.Spec{Episode: "e", Agent: "a", Policy: weak}); !errors.Is(err, sandbox.ErrDenied) {
			t.Errorf("strict mode with a weakened policy: %v, want ErrDenied", err)
		}
	}
}

func TestFindHelper(t *testing.T) {
	t.Setenv(HelperEnv, testHelper)
	if got, err := FindHelper(); err != nil || got != testHelper {
		t.Errorf("FindHelper = %q, %v; want %q", got, err, testHelper)
	}
	t.Setenv(HelperEnv, "")
	if _, err := FindHelper(); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("FindHelper without a helper beside the test binary: %v, want ErrNotFound", err)
	}
}
