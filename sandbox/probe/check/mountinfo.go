package check

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox/mountinfo"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	Root    string // path inside the source filesystem
	Point   string // mount point in this namespace
	Options string // per-mount options (ro, nosuid, ...)
	FSType  string
	Source  string
}

// ParseMountinfo parses /proc/self/mountinfo text; malformed lines are errors.
func ParseMountinfo(text string) ([]Mount, error) {
	var ms []Mount
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		sep := -1
		for j := 6; j < len(f); j++ {
			if f[j] == "-" {
				sep = j
				break
			}
		}
		if len(f) < 6 || sep < 0 || len(f) < sep+3 {
			return nil, fmt.Errorf("mountinfo line %d: %q: too few fields", i+1, short(l, 80))
		}
		ms = append(ms, Mount{
			Root: mountinfo.Unescape(f[3]), Point: mountinfo.Unescape(f[4]), Options: f[5],
			FSType: f[sep+1], Source: mountinfo.Unescape(f[sep+2]),
		})
	}
	return ms, nil
}

// gVisorCgroupRoot is the root gVisor's cgroupfs shows: /<container id>.
var gVisorCgroupRoot = regexp.MustCompile(`^/[0-9a-f]{64}$`)

// virtualFS are filesystems that hold no host files.
var virtualFS = map[string]bool{
	"proc": true, "sysfs": true, "tmpfs": true, "devpts": true, "mqueue": true, "cgroup": true,
	"cgroup2": true, "overlay": true, "fuse.fuse-overlayfs": true, "shm": true, "9p": false,
}

// engineFileRoot is the one documented residual (egress boxes only): the
// engine's per-container /etc/hosts and /etc/resolv.conf, which name its
// data root and the container's id. A box without network has neither.
var engineFileRoot = regexp.MustCompile(`/containers/[0-9a-f]{64}/(resolv\.conf|hosts)$`)

// helperRoot and hostnameRoot are the mount roots of the helper copy and of
// the neutral /etc/hostname in sandbox.HelperHostDir ("/mass/..." when /run
// is a filesystem of its own): anything else names the host (F6).
var (
	helperRoot   = regexp.MustCompile(`^(/run)?/mass/[0-9a-f]{24}-[0-7]{3}$`)
	hostnameRoot = regexp.MustCompile(`^(/run)?/mass/hostname$`)
	initRoot     = regexp.MustCompile(`^/usr/(s?bin|libexec/docker)/(tini-static|tini|docker-init)$`)
)

// HostPathMounts returns the mounts that expose or name host files other
// than the workspace volume, the helper copy and /etc/hostname from the
// neutral helper directory, the engine's read-only init (a documented
// residual: its host path is the engine's configuration) and, in egress
// boxes, the engine's hosts and resolv.conf (the other residual).
func HostPathMounts(ms []Mount, workspace, helper string) []Mount {
	var bad []Mount
	for _, m := range ms {
		ro := hasOpt(m.Options, "ro")
		switch {
		case m.Point == "/" && virtualFS[m.FSType]:
		case m.Point == helper && ro && helperRoot.MatchString(m.Root):
		case m.Point == "/etc/hostname" && ro && hostnameRoot.MatchString(m.Root):
		case (m.Point == "/sbin/docker-init" || m.Point == "/usr/sbin/docker-init") && ro && initRoot.MatchString(m.Root):
			// the engine's init (tini); /usr/sbin when /sbin is a merged-usr link
		case pathroot.Under(m.Point, workspace):
			if !virtualFS[m.FSType] && !strings.Contains(m.Root, "/volumes/") {
				bad = append(bad, m)
			}
		case (m.Point == "/etc/resolv.conf" || m.Point == "/etc/hosts") &&
			engineFileRoot.MatchString(m.Root) && path.Base(m.Root) == path.Base(m.Point):
		case (m.FSType == "cgroup" || m.FSType == "cgroup2") && m.Root != "/":
			// the host's cgroup path (/docker/<id>): no cgroup namespace
			bad = append(bad, m)
		case virtualFS[m.FSType] && m.Point != "/" && (m.Root == "/" || underAny(m.Point, "/proc", "/dev", "/sys")):
			// A fresh virtual filesystem, or the engine masking /proc paths
			// with its /dev tmpfs. A sub-path of a tmpfs elsewhere is a bind
			// of host state (the engine socket lives on the host's /run tmpfs).
		default:
			bad = append(bad, m)
		}
	}
	return bad
}

// GVisorHostPaths returns the mounts that name a host path under runsc:
// gVisor's mountinfo shows each mount its gofer serves as a 9p filesystem
// rooted at "/", so any other root (or a filesystem gVisor would not
// synthesise) names something of the host. The one other root is current
// gVisor's own cgroupfs, rooted at the container's id (gVisor's cgroup of
// the container, not a host path); its /dev is a filesystem of type "dev".
func GVisorHostPaths(ms []Mount) []Mount {
	var bad []Mount
	for _, m := range ms {
		switch {
		case m.FSType == "cgroup" && gVisorCgroupRoot.MatchString(m.Root):
		case m.FSType == "dev" && m.Root == "/": // current gVisor's own /dev filesystem
		case m.Root != "/":
			bad = append(bad, m)
		case m.FSType == "9p" || virtualFS[m.FSType]:
		default:
			bad = append(bad, m)
		}
	}
	return bad
}

func underAny(p string, dirs ...string) bool {
	_, ok := pathroot.UnderAny(p, dirs...)
	return ok
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

func checkMountinfo(cfg Config) Result {
	const want = "no host path: the workspace volume, helper and /etc/hostname from the neutral helper dir; residuals: the engine's init, egress boxes' hosts/resolv.conf"
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fail(want, "read mountinfo: "+errName(err))
	}
	ms, err := ParseMountinfo(string(b))
	if err != nil {
		return fail(want, err.Error())
	}
	bad := HostPathMounts(ms, cfg.Workspace, cfg.Helper)
	if cfg.GVisor() {
		bad = GVisorHostPaths(ms)
	}
	if len(bad) > 0 {
		var s []string
		for _, m := range bad {
			s = append(s, fmt.Sprintf("%s <- %s (%s)", m.Point, m.Root, m.FSType))
		}
		return fail(want, short(strings.Join(s, "; "), 1500))
	}
	return pass(want, fmt.Sprintf("%d mounts, no host path", len(ms)))
}
