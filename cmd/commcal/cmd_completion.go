package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// The bash and zsh functions ask commcal itself for the candidates (urfave/cli answers
// --generate-bash-completion with the subcommands or flags that fit); fish gets a static
// script generated from the command definitions.
const bashCompletion = `# bash completion for commcal: source it, or put it in /etc/bash_completion.d/commcal
_commcal_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local ask=("${COMP_WORDS[@]:0:COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    ask+=("$cur")
  fi
  COMPREPLY=($(compgen -W "$("${ask[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o bashdefault -o default -F _commcal_complete commcal
`

const zshCompletion = `#compdef commcal
# zsh completion for commcal: put it in a directory of $fpath as _commcal
_commcal() {
  local -a candidates
  local cur=${words[-1]}
  local -a ask=(${words[@]:0:#words[@]-1})
  [[ "$cur" == -* ]] && ask+=("$cur")
  candidates=("${(@f)$(${ask[@]} --generate-bash-completion 2>/dev/null)}")
  if [[ -n "${candidates[1]}" ]]; then
    _describe 'commcal' candidates
  else
    _files
  fi
}
compdef _commcal commcal
`

func completionCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish) or the man page",
		ArgsUsage: "bash|zsh|fish|man",
		Description: `Prints a completion script for the shell, or commcal(1) in roff, generated from the
command definitions.

EXAMPLES:
   source <(commcal completion bash)
   commcal completion zsh > "${fpath[1]}/_commcal"
   commcal completion fish > ~/.config/fish/completions/commcal.fish
   commcal completion man > /usr/local/share/man/man1/commcal.1`,
		Action: func(c *cli.Context) error {
			args, err := positional(c, 1, 1, "bash, zsh, fish or man")
			if err != nil {
				return err
			}
			return writeCompletion(c.App, args[0], c.App.Writer)
		},
	})
}

func writeCompletion(app *cli.App, what string, w io.Writer) error {
	var script string
	var err error
	switch what {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		script, err = app.ToFishCompletion()
	case "man":
		script, err = app.ToManWithSection(1)
	default:
		return usagef("completion: %q: want bash, zsh, fish or man", what)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(w, script)
	return err
}
