package egress

import (
	"strings"
	"testing"
)

// A plain-HTTP record names the path fetched, without the query and cut
// to MaxRecordPath; a CONNECT record has none (the proxy cannot see it).
func TestProxyRecordsPath(t *testing.T) {
	w := newWorld(t, []string{"data.test.example"}, 0, true)
	long := "/" + strings.Repeat("é", MaxRecordPath)
	for _, p := range []string{"/packages/x-1.0-py3-none-any.whl?token=secret", long} {
		if _, _, err := w.get("http", "data.test.example", p); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.get("https", "data.test.example", "/hidden"); err != nil {
		t.Fatal(err)
	}
	rs := w.recs(t, 3)
	if got, want := rs[0].Path, "/packages/x-1.0-py3-none-any.whl"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got := rs[1].Path; len(got) > MaxRecordPath || len(got) < MaxRecordPath-1 || !strings.HasPrefix(long, got) || !strings.HasSuffix(got, "é") {
		t.Errorf("long path cut to %d bytes %q", len(got), got)
	}
	if rs[2].Kind != KindConnect || rs[2].Path != "" {
		t.Errorf("connect record %+v has a path", rs[2])
	}
}
