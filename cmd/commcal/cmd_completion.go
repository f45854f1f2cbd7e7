package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The bash and zsh functions ask commcal itself for the candidates of the word being
// completed (`commcal completion --words -- WORDS...`, answered by completions) and leave a
// positional argument or a flag's value to the shell's file completion, which they fall back
// to when commcal offers nothing. fish gets a static script generated from the command
// definitions.
const bashCompletion = `# bash completion for commcal: source it, or put it in /etc/bash_completion.d/commcal
_commcal_complete() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion --words -- "${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null)" -- "${COMP_WORDS[COMP_CWORD]}"))
}
complete -o bashdefault -o default -F _commcal_complete commcal
`

const zshCompletion = `#compdef commcal
# zsh completion for commcal: put it in a directory of $fpath as _commcal
_commcal() {
  local -a candidates
  candidates=("${(@f)$(${words[1]} completion --words -- "${(@)words[1,CURRENT]}" 2>/dev/null)}")
  candidates=(${candidates:#})
  if (( ${#candidates} )); then
    compadd -a candidates
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
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "words", Hidden: true, Usage: "print the candidates for the last of the words after --, a command line being completed"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("words") {
				return writeLines(c.App.Writer, completions(c.App, c.Args().Slice()))
			}
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

// completions returns the candidates for the last of words, a command line up to the word
// being completed (words[0] is the program): the subcommands or the flags that start with
// it, the choices of an argument its command lists as a|b|c, or nothing for a positional
// argument or a flag's value, which the shell completes as a file. It walks the commands
// itself, reading flags as urfave/cli does (a flag's value is the next word unless given
// with '='; bash splits "--out=x" into three words), so that a partial or unknown flag is
// only a word to complete.
func completions(app *cli.App, words []string) []string {
	if len(words) < 2 {
		return nil
	}
	cur := words[len(words)-1]
	cmd := &cli.Command{Flags: app.Flags, Subcommands: app.Commands}
	positional, value, depth := false, false, 0
	for _, w := range words[1 : len(words)-1] {
		switch {
		case value:
			value = w == "="
		case positional:
		case w == "--":
			positional = true
		case strings.HasPrefix(w, "-") && w != "-":
			value = takesValue(cmd.Flags, w)
		default:
			if sub := subcommand(cmd, w); sub != nil {
				cmd, depth = sub, depth+1
			} else {
				positional = true
			}
		}
	}
	var all []string
	subs := visibleCommands(cmd, depth > 0)
	switch {
	case value || cur == "=":
		return nil
	case positional:
		return nil
	case strings.HasPrefix(cur, "-"):
		all = flagNames(cmd.Flags)
	case len(subs) > 0:
		all = subs
	default:
		all = argChoices(cmd.ArgsUsage)
	}
	var out []string
	for _, a := range all {
		if strings.HasPrefix(a, cur) {
			out = append(out, a)
		}
	}
	return out
}

// subcommand returns cmd's subcommand named (or aliased) name, or nil.
func subcommand(cmd *cli.Command, name string) *cli.Command {
	for _, sub := range cmd.Subcommands {
		if sub.HasName(name) {
			return sub
		}
	}
	return nil
}

// visibleCommands lists the names of cmd's subcommands that its help shows, without the help
// command if asked (urfave/cli adds one to every command it runs, so a command without
// subcommands of its own would offer "help" where its arguments go).
func visibleCommands(cmd *cli.Command, noHelp bool) []string {
	var names []string
	for _, sub := range cmd.Subcommands {
		if !sub.Hidden && !(noHelp && sub.HasName("help")) {
			names = append(names, sub.Name)
		}
	}
	return names
}

// flagNames lists every visible flag as written on a command line ("--out", "-o"), and the
// help flag that urfave/cli adds to every command.
func flagNames(flags []cli.Flag) []string {
	seen := map[string]bool{}
	var names []string
	for _, f := range append(flags[:len(flags):len(flags)], cli.HelpFlag) {
		if v, ok := f.(cli.VisibleFlag); f == nil || ok && !v.IsVisible() {
			continue
		}
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			if !seen[n] {
				seen[n] = true
				names = append(names, dash+n)
			}
		}
	}
	return names
}

// takesValue reports whether the flag a word gives takes the next word as its value: it
// takes a value and the word does not hold it after '='.
func takesValue(flags []cli.Flag, word string) bool {
	name, _, inline := strings.Cut(strings.TrimLeft(word, "-"), "=")
	if inline {
		return false
	}
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			d, ok := f.(cli.DocGenerationFlag)
			return ok && d.TakesValue()
		}
	}
	return false
}

// argChoices returns the choices of an argument that a command's usage lists as "a|b|c".
func argChoices(usage string) []string {
	choices := strings.Split(usage, "|")
	if len(choices) < 2 {
		return nil
	}
	for _, c := range choices {
		if c == "" || strings.Trim(c, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return nil
		}
	}
	return choices
}

// writeLines writes one line per string.
func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
