package boxspec

import (
	"strings"
	"testing"
)

func TestCheckDomain(t *testing.T) {
	tests := []struct {
		in, want string // want: "" for valid, else a fragment of the error
	}{
		{"api.stlouisfed.org", ""},
		{"*.rcsb.org", ""},
		{"query1.finance.yahoo.com", ""},
		{"xn--bcher-kva.example", ""},
		{"", "empty"},
		{"https://fred.stlouisfed.org", "scheme"},
		{"fred.stlouisfed.org/data", "path"},
		{"user@host.org", "path or user"},
		{"files.rcsb.org:443", "port"},
		{"10.0.0.1", "IP address"},
		{"[::1]", "IP address"},
		{"::1", "IP address"},
		{"*", "wildcard"},
		{"*.*.org", "wildcard"},
		{"a.*.org", "wildcard"},
		{"localhost", "single label"},
		{"Example.ORG", "lower-case"},
		{"example.org.", "empty label"},
		{"-bad.org", "starts or ends"},
		{"a_b.org", "lower-case"},
		{"host.123", "numeric"},
		{strings.Repeat("a", 64) + ".org", "1-63"},
	}
	for _, tt := range tests {
		err := CheckDomain(tt.in)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckDomain(%q) = %v, want nil", tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckDomain(%q) = %v, want an error with %q", tt.in, err, tt.want)
		}
	}
}
