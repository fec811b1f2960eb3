package pathroot

import "testing"

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, root string
		want    bool
	}{
		{"/workspace", "/workspace", true},
		{"/workspace/a/b", "/workspace", true},
		{"/workspacex", "/workspace", false},
		{"/work", "/workspace", false},
		{"data/x.csv", "data", true},
		{"database", "data", false},
		{"", "data", false},
	} {
		if got := Under(c.p, c.root); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.p, c.root, got, c.want)
		}
	}
	if r, ok := UnderAny("/a/b/c", "/x", "/a/b", "/a"); !ok || r != "/a/b" {
		t.Errorf("UnderAny = %q, %v, want the first root that holds it", r, ok)
	}
	if _, ok := UnderAny("/a"); ok {
		t.Error("UnderAny with no roots matched")
	}
}
