package image

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

// Profile is a recipe for an agent image: Debian packages on top of
// debootstrap's minbase and the environment baked in. The base profile is
// mass-agent; a task picks another with `image: NAME` in its spec.
type Profile struct {
	Name     string   `json:"name"`
	Packages []string `json:"packages"` // Debian package names
	Env      []string `json:"env"`      // KEY=VALUE, in image order
}

// ResearchPackages are what the research profile adds to the base: the
// tools the paper's research programs reach for that Debian's archive
// (bookworm, main) provides. Not there, and so not here: uv, PyBullet,
// OpenMM, JAX, yfinance; pip and pipx install them into a venv when a task
// allows a package index (docs/image-profiles.md).
var ResearchPackages = []string{
	// packaging and building: pip, venv and pipx, git, a C/C++ toolchain
	// and Python headers for packages that compile an extension
	"python3-pip", "python3-venv", "pipx", "python3-dev", "build-essential", "git",
	"ca-certificates", "curl",
	// modelling and science
	"python3-torch", "python3-networkx", "python3-sympy", "python3-statsmodels",
	"python3-biopython", "python3-seaborn", "python3-h5py", "python3-xgboost",
	// glue the programs use
	"python3-requests", "python3-yaml", "python3-tqdm", "python3-pytest",
}

// researchEnv is added to the base environment: pip never asks the network
// for its own version, and a venv is the way to install (Debian marks the
// system Python externally managed).
var researchEnv = []string{
	"PIP_DISABLE_PIP_VERSION_CHECK=1",
	"PIP_NO_INPUT=1",
}

// BaseProfile is the mass-agent image: python3 and its science stack.
func BaseProfile() Profile {
	return Profile{Name: sandbox.ProfileBase, Packages: slices.Clone(DefaultPackages), Env: slices.Clone(agentEnv)}
}

// ResearchProfile is the base plus ResearchPackages and pip's settings.
func ResearchProfile() Profile {
	p := BaseProfile()
	p.Name = sandbox.ProfileResearch
	p.Packages = append(p.Packages, ResearchPackages...)
	p.Env = append(p.Env, researchEnv...)
	return p
}

// BuiltinProfile returns the profile called name, or false.
func BuiltinProfile(name string) (Profile, bool) {
	switch name {
	case sandbox.ProfileBase:
		return BaseProfile(), true
	case sandbox.ProfileResearch:
		return ResearchProfile(), true
	}
	return Profile{}, false
}

// Ref is the image the profile builds: AgentRef for the base, mass-NAME:latest
// otherwise (sandbox.ProfileImage, which tasks resolve through).
func (p Profile) Ref() string {
	if ref := sandbox.ProfileImage(p.Name); ref != "" {
		return ref
	}
	return AgentRef
}

// recipe is the LabelRecipe value: "agent" for the base (as before
// profiles), "profile:NAME" otherwise.
func (p Profile) recipe() string {
	if p.Name == sandbox.ProfileBase {
		return "agent"
	}
	return "profile:" + p.Name
}

// Hash is the content hash of the profile's image with the default suite
// and mirror (AgentHash).
func (p Profile) Hash() string {
	return AgentHash(AgentOptions{Packages: p.Packages, Env: p.Env})
}

// BuildProfile builds the profile's image (see BuildAgent) unless one with
// the same recipe hash exists. o.Ref, o.Packages and o.Env come from p.
func BuildProfile(ctx context.Context, e Engine, p Profile, o AgentOptions) (AgentResult, error) {
	o.Ref, o.Packages, o.Env, o.recipe = p.Ref(), p.Packages, p.Env, p.recipe()
	return BuildAgent(ctx, e, o)
}

// Missing is the error for a profile image that is not in the engine,
// saying how to build it.
func Missing(profile, ref string) error {
	if profile == "" {
		profile = sandbox.ProfileBase
	}
	return fmt.Errorf("image %s of profile %q is not built; build it with `massctl image build --profile %s` (minutes, needs root and the Debian archive): %w",
		ref, profile, profile, sandbox.ErrUnavailable)
}

func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// State is whether a profile's image is in the engine and current.
type State struct {
	Ref     string `json:"ref"`
	ID      string `json:"id,omitempty"` // "" when the image is not built
	Hash    string `json:"hash"`         // the recipe's
	Have    string `json:"have,omitempty"`
	Current bool   `json:"current"` // built from this recipe
}

// Inspect reports the state of p's image in the engine.
func Inspect(ctx context.Context, e Engine, p Profile) (State, error) {
	st := State{Ref: p.Ref(), Hash: p.Hash()}
	have, id, err := currentHash(ctx, e, st.Ref)
	if err != nil {
		return st, err
	}
	st.ID, st.Have, st.Current = id, have, id != "" && have == st.Hash
	return st, nil
}
