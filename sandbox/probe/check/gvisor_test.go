package check

import "testing"

// TestGVisorHostPaths: current gVisor's cgroupfs is rooted at the
// container's id and names nothing of the host; any other non-"/" root does.
func TestGVisorHostPaths(t *testing.T) {
	id := "/63d6ca193d5d0752be19b329255c55791e49a33e6722f56bc27feeaddbfcea74"
	ms := []Mount{
		{Point: "/", Root: "/", FSType: "overlay"},
		{Point: "/etc/hosts", Root: "/", FSType: "9p"},
		{Point: "/dev", Root: "/", FSType: "dev"},
		{Point: "/sys/fs/cgroup/memory", Root: id, FSType: "cgroup"},
		{Point: "/sys/fs/cgroup/pids", Root: "/docker" + id, FSType: "cgroup"},
		{Point: "/workspace", Root: "/var/lib/docker/volumes/x", FSType: "9p"},
	}
	bad := GVisorHostPaths(ms)
	if len(bad) != 2 || bad[0].Point != "/sys/fs/cgroup/pids" || bad[1].Point != "/workspace" {
		t.Errorf("GVisorHostPaths = %+v, want the /docker/... cgroup root and the host volume path", bad)
	}
}

func TestGVisorCmdline(t *testing.T) {
	for s, want := range map[string]bool{
		"BOOT_IMAGE=/vmlinuz-4.4.0-gvisor quiet":                    true,
		"BOOT_IMAGE=/vmlinuz-4.19.0-gvisor quiet":                   true,
		"BOOT_IMAGE=/boot/vmlinuz-6.1.0-13-amd64 root=/dev/vda ro":  false,
		"BOOT_IMAGE=/vmlinuz-4.19.0-gvisor quiet root=/dev/vda1 ro": false,
	} {
		if got := gVisorCmdline.MatchString(s); got != want {
			t.Errorf("gVisorCmdline(%q) = %v, want %v", s, got, want)
		}
	}
}
