package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox/image"
)

// profileOf resolves a --profile value: a built-in name or a profile file.
func profileOf(arg string) (image.Profile, error) {
	if p, ok := image.BuiltinProfile(arg); ok {
		return p, nil
	}
	if !strings.ContainsAny(arg, "/.") {
		return image.Profile{}, fmt.Errorf("unknown image profile %q: use base, research or the path of a profile file (docs/image-profiles.md)", arg)
	}
	return image.LoadProfile(arg)
}

// profilesOf resolves every --profile value, each image once.
func profilesOf(args []string) ([]image.Profile, error) {
	var out []image.Profile
	seen := map[string]bool{}
	for _, a := range args {
		p, err := profileOf(a)
		if err != nil {
			return nil, err
		}
		if !seen[p.Ref()] {
			seen[p.Ref()] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// imageProfileShow prints what a profile's image holds, without building it.
func imageProfileShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("usage: massctl image profile base|research|FILE", 2)
	}
	p, err := profileOf(c.Args().First())
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	hash := p.Hash()
	state := engineState(c, p)
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			image.Profile
			Ref   string `json:"ref"`
			Hash  string `json:"hash"`
			State string `json:"state"`
		}{p, p.Ref(), hash, state})
	}
	w := c.App.Writer
	fmt.Fprintf(w, "profile:  %s\nimage:    %s (and %s)\nhash:     %s\nstate:    %s\n", p.Name, p.Ref(), image.HashTag(p.Ref(), hash), hash, state)
	fmt.Fprintf(w, "packages: %s\nenv:      %s\n", strings.Join(p.Packages, " "), strings.Join(p.Env, " "))
	return nil
}

// engineState says whether the local engine has p's image and whether it
// was built from this recipe (with the default mirror and suite).
func engineState(c *cli.Context, p image.Profile) string {
	eng, err := dockerEngine()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer eng.Close()
	st, err := image.Inspect(ctxOf(c), eng, p)
	build := "sudo massctl image build --profile " + p.Name
	switch {
	case err != nil:
		return fmt.Sprintf("unknown (no Docker engine reachable: %v)", err)
	case st.ID == "":
		return "not built; build it with `" + build + "`"
	case !st.Current:
		return fmt.Sprintf("built (%s) from another recipe (hash %.12s); rebuild with `%s`", st.ID, st.Have, build)
	}
	return fmt.Sprintf("built (%s), current", st.ID)
}
