package taskspec

import (
	"strings"
	"testing"
)

func TestParseImage(t *testing.T) {
	base := "id: t1\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	for _, name := range []string{"base", "research", "research-chem"} {
		s, err := Parse([]byte(base + "image: " + name + "\n"))
		if err != nil {
			t.Fatalf("image: %s: %v", name, err)
		}
		if got, want := s.Image, name; got != want {
			t.Errorf("image = %q, want %q", got, want)
		}
	}
	tests := []struct{ value, want string }{
		{"Research", "lower-case"},
		{"mass-agent:latest", "lower-case"},
		{"agent", "reserved"},
		{"test", "reserved"},
		{"../x", "lower-case"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(base + "image: " + tt.value + "\n"))
		if err == nil {
			t.Errorf("image: %s: no error", tt.value)
			continue
		}
		fe := fieldErrors(err)
		if len(fe) != 1 || fe[0].Field != "image" || fe[0].Line != 4 || !strings.Contains(fe[0].Msg, tt.want) {
			t.Errorf("image: %s: %v, want one error on line 4 field image saying %q", tt.value, err, tt.want)
		}
	}
}

func fieldErrors(err error) []*FieldError {
	es, _ := err.(Errors)
	return es
}
