package sandbox

import (
	"errors"
	"testing"
)

func TestProfileImage(t *testing.T) {
	tests := []struct{ name, ref, hint string }{
		{"", "", ""},
		{ProfileBase, "", ""},
		{ProfileResearch, "mass-research:latest", "massctl image build --profile research"},
		{"research-chem", "mass-research-chem:latest", "massctl image build --profile research-chem"},
	}
	for _, tt := range tests {
		if err := CheckProfile(tt.name); tt.name != "" && err != nil {
			t.Errorf("CheckProfile(%q) = %v", tt.name, err)
		}
		if got := ProfileImage(tt.name); got != tt.ref {
			t.Errorf("ProfileImage(%q) = %q, want %q", tt.name, got, tt.ref)
		}
		if tt.ref != "" {
			if got := BuildHint(tt.ref); got != tt.hint {
				t.Errorf("BuildHint(%q) = %q, want %q", tt.ref, got, tt.hint)
			}
		}
	}
	for ref, want := range map[string]string{
		"mass-agent:latest": "massctl image build --profile base",
		"mass-test:latest":  "massctl image build",
		"mass-research:abc": "massctl image build",
		"debian:bookworm":   "massctl image build",
	} {
		if got := BuildHint(ref); got != want {
			t.Errorf("BuildHint(%q) = %q, want %q", ref, got, want)
		}
	}
	for _, bad := range []string{"", "Research", "agent", "test", "a/b", "x:y", "-x", "abcdefghijklmnopqrstuvwxyz0123456"} {
		if err := CheckProfile(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckProfile(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}
