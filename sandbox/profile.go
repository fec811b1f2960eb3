package sandbox

import (
	"fmt"
	"regexp"
	"strings"
)

// Image profiles a task names (its spec's `image:`). The base profile is
// the runtime's configured image (mass-agent); every other profile N is
// the local image mass-N:latest, built by `massctl image build --profile N`.
const (
	ProfileBase     = "base"
	ProfileResearch = "research"
)

var profileNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// CheckProfile reports whether name can name an image profile (see
// ProfileProblem), wrapping ErrInvalid.
func CheckProfile(name string) error {
	if msg := ProfileProblem(name); msg != "" {
		return fmt.Errorf("image profile %q: %s: %w", name, msg, ErrInvalid)
	}
	return nil
}

// ProfileProblem says what is wrong with name as an image profile, or "":
// it must be lower-case letters, digits and dashes, start with a letter,
// be at most 31 bytes, and not be "agent" or "test" (the images mass-agent
// and mass-test are the base profile and the busybox test image).
func ProfileProblem(name string) string {
	if !profileNameRE.MatchString(name) {
		return fmt.Sprintf("want lower-case letters, digits and dashes, starting with a letter, at most 31 (e.g. %q)", ProfileResearch)
	}
	if name == "agent" || name == "test" {
		return fmt.Sprintf("%q is reserved (mass-%s is not a profile image); use %q for the agent image", name, name, ProfileBase)
	}
	return ""
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

// BuildHint is the command that builds image ref, for error messages:
// `massctl image build --profile NAME` for mass-agent (base) and the
// profile images, plain `massctl image build` for any other image.
func BuildHint(ref string) string {
	repo, tag, _ := strings.Cut(ref, ":")
	name, ok := strings.CutPrefix(repo, "mass-")
	switch {
	case !ok || (tag != "" && tag != "latest"):
		return "massctl image build"
	case name == "agent":
		return "massctl image build --profile " + ProfileBase
	case ProfileProblem(name) == "":
		return "massctl image build --profile " + name
	}
	return "massctl image build"
}
