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
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			image.Profile
			Ref  string `json:"ref"`
			Hash string `json:"hash"`
		}{p, p.Ref(), hash})
	}
	w := c.App.Writer
	fmt.Fprintf(w, "profile:  %s\nimage:    %s (and %s)\nhash:     %s\n", p.Name, p.Ref(), image.HashTag(p.Ref(), hash), hash)
	fmt.Fprintf(w, "packages: %s\nenv:      %s\n", strings.Join(p.Packages, " "), strings.Join(p.Env, " "))
	return nil
}
