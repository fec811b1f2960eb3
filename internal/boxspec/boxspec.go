// Package boxspec holds the few names a task spec and the sandbox must
// agree on: the workspace mount, image profile names and egress domain
// names. It is a leaf, so taskspec checks them without linking the sandbox.
package boxspec

import (
	"fmt"
	"regexp"
)

// WorkspaceMount is where every agent sees the episode workspace
// (sandbox.WorkspaceMount); grader paths in a task spec lie below it.
const WorkspaceMount = "/workspace"

// Image profiles a task names (its spec's `image:`). The base profile is
// the runtime's configured image (mass-agent); every other profile N is
// the local image mass-N:latest, built by `massctl image build --profile N`.
const (
	ProfileBase     = "base"
	ProfileResearch = "research"
)

var profileNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

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
