package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStderrTail(t *testing.T) {
	if got := StderrTail([]byte("short\n")); got != "short\n" {
		t.Errorf("StderrTail(short) = %q", got)
	}
	long := strings.Repeat("ü", StderrTailBytes) + "end"
	got := StderrTail([]byte(long))
	if !strings.HasSuffix(got, "end") || !utf8.ValidString(got) || len(got) > StderrTailBytes+len("…") {
		t.Errorf("StderrTail(long) = %d bytes, valid %v, suffix %q", len(got), utf8.ValidString(got), got[len(got)-3:])
	}
}
