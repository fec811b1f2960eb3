package check

import (
	"strings"
	"testing"
)

func TestParseResults(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"two", `[{"name":"a","ok":true,"expected":"x","observed":"y"},{"name":"b","ok":false}]`, 2, ""},
		{"empty list", `[]`, 0, ""},
		{"not json", `uid=0`, 0, "decode"},
		{"object not list", `{"name":"a"}`, 0, "decode"},
		{"no name", `[{"ok":true}]`, 0, "bad name"},
		{"space in name", `[{"name":"a b","ok":true}]`, 0, "bad name"},
		{"duplicate", `[{"name":"a","ok":true},{"name":"a","ok":false}]`, 0, "duplicate"},
		{"too big", "[" + strings.Repeat(" ", MaxOutput) + "]", 0, "cap"},
	}
	for _, tt := range tests {
		rs, err := ParseResults([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got, want := len(rs), tt.want; got != want {
			t.Errorf("%s: %d results, want %d", tt.name, got, want)
		}
	}
}

func FuzzParseResults(f *testing.F) {
	f.Add([]byte(`[{"name":"a","ok":true,"expected":"x","observed":"y"}]`))
	f.Add([]byte(`[{"name":"","ok":1}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseResults(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, r := range rs {
			if r.Name == "" || seen[r.Name] || strings.ContainsAny(r.Name, " \t\n\"") {
				t.Fatalf("accepted bad or duplicate name %q", r.Name)
			}
			seen[r.Name] = true
		}
	})
}

const mountinfoSample = `69 45 0:39 / / ro,nodev,noatime master:2 - fuse.fuse-overlayfs fuse-overlayfs rw,user_id=0
70 69 0:41 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
71 69 0:42 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
86 69 254:0 /var/lib/docker/containers/d89595f133ce0c66fd34ef63ec624c9f52bb65da864aa7db14ab18266b90f763/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda rw
87 69 254:0 /usr/bin/tini-static /sbin/docker-init ro,relatime - ext4 /dev/vda rw
88 69 254:0 /run/mass/f9199e95810b0f963dd7076f-711 /.mass/mass-sandbox-helper ro,relatime - ext4 /dev/vda rw
89 69 0:50 / /workspace rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k
90 89 0:50 /protected /workspace/protected ro,nosuid,nodev - tmpfs tmpfs rw
`

func TestHostPathMounts(t *testing.T) {
	base, err := ParseMountinfo(mountinfoSample)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(base), 8; got != want {
		t.Fatalf("parsed %d mounts, want %d", got, want)
	}
	tests := []struct {
		name  string
		extra string
		bad   string
	}{
		{"production layout", "", ""},
		{"host home bind", `91 69 254:0 /root /data rw - ext4 /dev/vda rw`, "/data"},
		{"docker socket bind", `91 69 0:25 /docker.sock /var/run/docker.sock rw - tmpfs tmpfs rw`, "/var/run/docker.sock"},
		{"init under merged usr", `91 69 254:0 /usr/bin/tini-static /usr/sbin/docker-init ro,relatime - ext4 /dev/vda rw`, ""},
		{"writable init", `91 69 254:0 /usr/bin/tini-static /usr/sbin/docker-init rw,relatime - ext4 /dev/vda rw`, "/usr/sbin/docker-init"},
		{"masked proc path", `91 70 0:42 /null /proc/kcore rw - tmpfs tmpfs rw`, ""},
		{"writable helper", `91 69 254:0 /x /.mass/other rw - ext4 /dev/vda rw`, "/.mass/other"},
		{"workspace from host dir", `91 69 254:0 /srv/data /workspace/in rw - ext4 /dev/vda rw`, "/workspace/in"},
		{"workspace disk volume", `91 69 254:0 /var/lib/docker/volumes/mass-ws-e1/_data /workspace rw - ext4 /dev/vda rw`, ""},
		{"helper from the temporary dir", `91 69 254:0 /tmp/mass-helper-0/mass-sandbox-helper-f9199e95810b0f963dd7076f-711 /.mass/mass-sandbox-helper ro - ext4 /dev/vda rw`, "/.mass/mass-sandbox-helper"},
		{"neutral hostname", `91 69 254:0 /run/mass/hostname /etc/hostname ro - ext4 /dev/vda rw`, ""},
		{"engine hostname", `91 69 254:0 /var/lib/docker/containers/9569d8955f49ac6fee19eeaa12c4451078432e57cc63e75939e97ced19480df1/hostname /etc/hostname ro - ext4 /dev/vda rw`, "/etc/hostname"},
		{"host cgroup path", `91 69 0:29 /docker/9569d8955f49ac6fee19eeaa12c4451078432e57cc63e75939e97ced19480df1 /sys/fs/cgroup/cpu ro - cgroup cgroup rw,cpu`, "/sys/fs/cgroup/cpu"},
		{"namespaced cgroup", `91 69 0:29 / /sys/fs/cgroup/cpu ro - cgroup cgroup rw,cpu`, ""},
		{"init from elsewhere", `91 69 254:0 /home/u/tini /sbin/docker-init ro - ext4 /dev/vda rw`, "/sbin/docker-init"},
		{"forged resolv.conf", `91 69 254:0 /etc/shadow /etc/resolv.conf rw - ext4 /dev/vda rw`, "/etc/resolv.conf"},
		{"escaped space", `91 69 254:0 /a\040b /my\040data rw - ext4 /dev/vda rw`, "/my data"},
	}
	for _, tt := range tests {
		ms, err := ParseMountinfo(mountinfoSample + tt.extra + "\n")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		bad := HostPathMounts(ms, "/workspace", "/.mass/mass-sandbox-helper")
		var got string
		if len(bad) > 0 {
			got = bad[0].Point
		}
		if len(bad) > 1 {
			t.Errorf("%s: %d bad mounts %v, want at most 1", tt.name, len(bad), bad)
		}
		if got != tt.bad {
			t.Errorf("%s: flagged %q, want %q", tt.name, got, tt.bad)
		}
	}
}

func TestParseMountinfoErrors(t *testing.T) {
	for _, in := range []string{"1 2 3", "1 2 0:1 / / rw no-separator here", "1 2 0:1 / / rw - tmpfs"} {
		if _, err := ParseMountinfo(in); err == nil {
			t.Errorf("ParseMountinfo(%q) accepted a malformed line", in)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(mountinfoSample)
	f.Add("1 2 0:1 / / rw - tmpfs tmpfs rw\n")
	f.Add(`1 2 0:1 /\040 /\1 rw - x y z`)
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := ParseMountinfo(text)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.FSType == "" {
				t.Fatalf("mount %+v has no filesystem type", m)
			}
		}
		HostPathMounts(ms, "/workspace", "/.mass/h")
	})
}

func TestCheckEnv(t *testing.T) {
	tests := []struct {
		env  []string
		want bool
	}{
		{[]string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "HOSTNAME=worker-1"}, true},
		{[]string{"PATH=/bin", "OPENAI_API_KEY=sk-abc"}, false},
		{[]string{"MODEL=http://10.0.0.5:8000/v1"}, false},
		{[]string{"X=sk-0123456789abcdef"}, false},
		{[]string{"DOCKER_HOST=unix:///var/run/docker.sock"}, false},
		{[]string{"HF_TOKEN=hf_x"}, false},
		{[]string{"AWS_SECRET_ACCESS_KEY=x"}, false},
	}
	for _, tt := range tests {
		if got := CheckEnv(tt.env); got.OK != tt.want {
			t.Errorf("CheckEnv(%v).OK = %v, want %v (%s)", tt.env, got.OK, tt.want, got.Observed)
		}
	}
}

func TestStaticNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range StaticNames() {
		if seen[n] {
			t.Errorf("duplicate check name %s", n)
		}
		seen[n] = true
	}
}
