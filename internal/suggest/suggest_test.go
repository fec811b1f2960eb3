package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"prompt", "limits", "required_outputs", "model"}
	for _, tt := range []struct{ in, want string }{
		{"promt", "prompt"}, {"Limts", "limits"}, {"modle", "model"}, {"required_output", "required_outputs"},
		{"zzz", ""}, {"", ""}, {"prompt", "prompt"},
	} {
		if got := Closest(tt.in, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
