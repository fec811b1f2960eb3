package sandbox

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/internal/boxspec"
)

// Image profiles a task names (its spec's `image:`), as boxspec defines
// them: the base profile is the runtime's configured image (mass-agent);
// every other profile N is the local image mass-N:latest.
const (
	ProfileBase     = boxspec.ProfileBase
	ProfileResearch = boxspec.ProfileResearch
)

// CheckProfile reports whether name can name an image profile (see
// boxspec.ProfileProblem), wrapping ErrInvalid.
func CheckProfile(name string) error {
	if msg := boxspec.ProfileProblem(name); msg != "" {
		return fmt.Errorf("image profile %q: %s: %w", name, msg, ErrInvalid)
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
	case boxspec.ProfileProblem(name) == "":
		return "massctl image build --profile " + name
	}
	return "massctl image build"
}
