package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/docker/docker/client"
	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox/image"
)

// imageCommand builds the sandbox images against the local Docker engine.
func imageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "build the sandbox images locally (no registry)",
		Subcommands: []*cli.Command{{
			Name:  "build",
			Usage: "build mass-agent (debootstrap, needs root), a profile image and/or mass-test (busybox-static)",
			Description: "Each image carries a content hash of its recipe; an image whose hash matches is kept\n" +
				"unless --force is given. Without --agent/--test/--all/--profile, --all is assumed.\n" +
				"--profile base is mass-agent; --profile research is mass-research (pip, venv, git, a compiler,\n" +
				"torch, ...; built only when asked); --profile FILE builds a profile file (docs/image-profiles.md).\n" +
				"A task picks a profile with `image: NAME` in its spec.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "agent", Usage: "build mass-agent:latest (Debian bookworm minbase + python3 science stack); same as --profile base"},
				&cli.StringSliceFlag{Name: "profile", Usage: "build the image of `PROFILE`: base, research or a profile file (repeatable)"},
				&cli.BoolFlag{Name: "test", Usage: "build mass-test:latest from the host's busybox-static"},
				&cli.BoolFlag{Name: "all", Usage: "build mass-test and mass-agent (not the research profile)"},
				&cli.BoolFlag{Name: "force", Usage: "rebuild even when the recipe hash matches"},
				&cli.BoolFlag{Name: "json", Usage: "print the results as JSON"},
				&cli.StringFlag{Name: "mirror", Value: image.DefaultMirror, Usage: "Debian archive `URL` for debootstrap"},
				&cli.StringFlag{Name: "workdir", Usage: "`DIR` to assemble the root filesystem in (default: the temp dir)"},
			},
			Action: imageBuild,
		}, {
			Name:      "profile",
			Usage:     "print a profile's image, recipe hash, packages and environment",
			ArgsUsage: "base|research|FILE",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print it as JSON"}},
			Action:    imageProfileShow,
		}},
	}
}

func imageBuild(c *cli.Context) error {
	agent, test := c.Bool("agent"), c.Bool("test")
	profiles, err := profilesOf(c.StringSlice("profile"))
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	if c.Bool("all") || (!agent && !test && len(profiles) == 0) {
		agent, test = true, true
	}
	if agent {
		profiles = append([]image.Profile{image.BaseProfile()}, profiles...)
	}
	ctx := ctxOf(c)
	eng, err := dockerEngine()
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer eng.Close()
	if _, err := eng.Ping(ctx); err != nil {
		return cli.Exit(fmt.Sprintf("no Docker engine reachable (%v); start dockerd or set DOCKER_HOST", err), 1)
	}
	progress := os.Stderr
	var results []any
	if test {
		start := time.Now()
		res, err := image.BuildTest(ctx, eng, image.TestOptions{Force: c.Bool("force")})
		if err != nil {
			return cli.Exit(fmt.Sprintf("build test image: %v", err), 1)
		}
		fmt.Fprintf(progress, "%s %s (hash %s, %s) in %s\n", builtWord(res.Built), res.Ref, res.Hash[:12], imageSize(ctx, eng, res.Ref), time.Since(start).Round(time.Millisecond))
		results = append(results, res)
	}
	for _, p := range profiles {
		start := time.Now()
		res, err := image.BuildProfile(ctx, eng, p, image.AgentOptions{
			Force: c.Bool("force"), Mirror: c.String("mirror"), WorkDir: c.String("workdir"), Progress: progress,
		})
		if err != nil {
			return cli.Exit(fmt.Sprintf("build image of profile %s: %v", p.Name, err), 1)
		}
		fmt.Fprintf(progress, "%s %s (hash %s, tags %v, %d packages, %s) in %s\n", builtWord(res.Built), res.Ref,
			res.Hash[:12], res.Tags, len(res.Packages), imageSize(ctx, eng, res.Ref), time.Since(start).Round(time.Second))
		if res.Built {
			fmt.Fprintf(progress, "package manifest: %s inside the image\n", image.ManifestPath)
		}
		results = append(results, res)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return nil
}

func builtWord(built bool) string {
	if built {
		return "built"
	}
	return "up to date:"
}

// imageSize is the engine's size of ref for a progress line, or "size unknown".
func imageSize(ctx context.Context, eng *client.Client, ref string) string {
	info, err := eng.ImageInspect(ctx, ref)
	if err != nil {
		return "size unknown"
	}
	return fmt.Sprintf("%.1f MB", float64(info.Size)/1e6)
}
