package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

const bashCompletion = `# massctl bash completion; load with: source <(massctl completion bash)
_massctl_complete() {
  local cur words
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$("${words[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
  fi
}
complete -o bashdefault -o default -F _massctl_complete massctl
`

const zshCompletion = `#compdef massctl
# massctl zsh completion; load with: source <(massctl completion zsh)
_massctl() {
  local -a opts
  opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  _describe 'values' opts
}
compdef _massctl massctl
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash or zsh)",
		ArgsUsage: "bash|zsh",
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash", "":
				fmt.Fprint(c.App.Writer, bashCompletion)
			case "zsh":
				fmt.Fprint(c.App.Writer, zshCompletion)
			default:
				return fmt.Errorf("unknown shell %q; use bash or zsh", c.Args().First())
			}
			return nil
		},
	}
}
