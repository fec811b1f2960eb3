package sandbox

import (
	"fmt"
	"regexp"
)

// Image profiles a task names (its spec's `image:`). The base profile is
// the runtime's configured image (mass-agent); every other profile N is
// the local image mass-N:latest, built by `massctl image build --profile N`.
const (
	ProfileBase     = "base"
	ProfileResearch = "research"
)

var profileNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// CheckProfile reports whether name can name an image profile: lower-case
// letters, digits and dashes, starting with a letter, at most 31 bytes,
// and not "agent" or "test" (the images mass-agent and mass-test are the
// base profile and the busybox test image).
func CheckProfile(name string) error {
	if !profileNameRE.MatchString(name) {
		return fmt.Errorf("image profile %q: want lower-case letters, digits and dashes, starting with a letter, at most 31 (e.g. %q): %w", name, ProfileResearch, ErrInvalid)
	}
	if name == "agent" || name == "test" {
		return fmt.Errorf("image profile %q is reserved (mass-%s is not a profile image); use %q for the agent image: %w", name, name, ProfileBase, ErrInvalid)
	}
	return nil
}

// ProfileImage is the image reference of profile name: "" (the runtime's
// configured image) for "" and ProfileBase, mass-<name>:latest otherwise.
// name must pass CheckProfile.
func ProfileImage(name string) string {
	if name == "" || name == ProfileBase {
		return ""
	}
	return "mass-" + name + ":latest"
}
