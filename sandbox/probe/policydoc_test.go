package probe

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// Every policy field must be printed by `massctl sandbox policy`.
func TestDescribePolicyCoversEveryField(t *testing.T) {
	got := map[string]bool{}
	for _, f := range DescribePolicy(sandbox.DefaultPolicy()) {
		got[f.Name] = true
		if f.Doc == "" || f.Value == "" {
			t.Errorf("field %s has no doc or value", f.Name)
		}
	}
	typ := reflect.TypeOf(sandbox.Policy{})
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !got[name] {
			t.Errorf("policy field %s (%s) is not described", typ.Field(i).Name, name)
		}
	}
}

func TestBridgeGateway(t *testing.T) {
	tests := []struct{ gw, subnet, want string }{
		{"172.18.0.1", "172.18.0.0/16", "172.18.0.1"},
		{"", "not-a-cidr", ""},
		{"", "127.0.0.0/8", "127.0.0.1"},
	}
	for _, tt := range tests {
		if got := bridgeGateway(tt.gw, tt.subnet); got != tt.want {
			t.Errorf("bridgeGateway(%q, %q) = %q, want %q", tt.gw, tt.subnet, got, tt.want)
		}
	}
}
