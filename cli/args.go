package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// positional returns the command's positional arguments, applying any flags
// (the command's or massctl's global ones) written after them ("job start
// wait --params ..."), which urfave/cli would otherwise leave unparsed.
func positional(c *cli.Context) ([]string, error) {
	args := c.Args().Slice()
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := findFlag(append(append([]cli.Flag{}, c.Command.Flags...), c.App.Flags...), name)
		if fl == nil {
			return nil, fmt.Errorf("unknown flag %s for %s (see --help)", a, c.Command.FullName())
		}
		if _, isBool := fl.(*cli.BoolFlag); isBool && !hasValue {
			value, hasValue = "true", true
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			value = args[i]
		}
		if err := c.Set(fl.Names()[0], value); err != nil {
			return nil, fmt.Errorf("flag %s: %w", a, err)
		}
	}
	return out, nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// oneArg returns the single positional argument a command needs.
func oneArg(c *cli.Context, what string) (string, error) {
	args, err := positional(c)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", usageError("%s needs exactly one %s", c.Command.FullName(), what)
	}
	return args[0], nil
}
