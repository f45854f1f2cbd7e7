package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// The documentation's commands are the lines of its ```sh blocks (README.md and docs/*.md; the
// journal under docs/journal is history and is not read). A line ending in a backslash goes on
// on the next; "#" starts a comment, and a comment saying "exit N" documents a status other
// than 0. The commands run from the repository's root as documented: the test runs each page's
// commands in order in a temporary directory holding copies of the repository paths they name
// (docFixtures).
//
//   - A line that starts commcal (after NAME=value assignments) runs in process through run,
//     with the assignments as environment variables, globs expanded and a final "> FILE"
//     written; its exit status must be the documented one.
//   - A commcal command that needs what a test does not have (docParsedOnly) runs with --help
//     inserted after its command: its command and every flag before its first argument must
//     parse.
//   - A make line runs as make -n in the repository: the target must exist and its recipe
//     expand. Its recipe is not run: the targets build commcal, run go test (minutes), fuzz,
//     or need root or SimGrid.
//   - A go line is listed, not run: the benchmarks and slow tests it starts take minutes.
//   - Any other line is another program (apt-get, sbatch, smpirun, the shell's case) shown
//     for context; the test does not run it.

// docFixtures are the repository paths the documented commands read. A page's commands find
// copies of those they name at the same relative paths.
var docFixtures = []string{
	"pipeline/sample/lab.toml",
	"pipeline/sample/measured",
	"cmd/commcal/testdata",
	"datasets/testdata/benchmarks",
	"datasets/testdata/graphene_eth",
	"data/saturation",
}

// docParsedOnly are the commcal commands the test parses but does not run, and why.
var docParsedOnly = []struct {
	why   string
	match func(c docCommand, path []string) bool
}{
	{"commcal measure builds network namespaces: it needs root, and takes minutes",
		func(_ docCommand, path []string) bool { return path[0] == "measure" }},
	{"commcal agent is one node of a real cluster, started there by its launcher",
		func(_ docCommand, path []string) bool { return path[0] == "agent" }},
	{"started through a launcher or sudo, which needs a cluster or root",
		func(c docCommand, _ []string) bool { return len(c.prefix) > 0 }},
	{"a script's line: its paths are shell variables set where it runs",
		func(c docCommand, _ []string) bool { return strings.Contains(strings.Join(c.args, " "), "$") }},
}

// docNotRun is why go lines are not run.
const docNotRun = "go test -bench and the slow reference test take minutes"

// docCommand is one command line of the documentation.
type docCommand struct {
	file   string
	line   int
	text   string
	env    []string // NAME=value before the program
	prefix []string // sudo, a launcher and its flags: the words before commcal
	tool   string   // commcal, make, go, or "" for another program
	args   []string // after the program's name
	globs  []bool   // args[i] is unquoted and may be a glob
	stdout string   // "> FILE"
	exit   int      // the documented exit status
}

// TestDocCommands runs every command of README.md and docs/*.md as the comment above says, and
// checks that the README still shows the two set-up commands.
func TestDocCommands(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	app := newApp(io.Discard, io.Discard)
	ran := map[string]int{}
	var readme []docCommand
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		cmds := docCommands(t, page, rel)
		if rel == "README.md" {
			readme = cmds
		}
		t.Run(rel, func(t *testing.T) {
			dir := t.TempDir()
			copyDocFixtures(t, root, dir, cmds)
			t.Chdir(dir)
			for _, c := range cmds {
				t.Run(fmt.Sprintf("line%d", c.line), func(t *testing.T) {
					switch c.tool {
					case "commcal":
						didRun, note, err := runDocCommand(t, app, c)
						if err != nil {
							t.Error(err)
						}
						if note != "" {
							t.Logf("%s:%d: parsed, not run: %s", c.file, c.line, note)
						}
						if didRun {
							ran[rel]++
						}
					case "make":
						makeDryRun(t, root, c)
					case "go":
						t.Logf("%s:%d: not run: %s", c.file, c.line, docNotRun)
					}
				})
			}
		})
	}
	if ran["README.md"] == 0 || !hasCommand(readme, "make run", "make test") {
		t.Errorf("README.md: the set-up commands (make run, make test) or the quick start's commands are missing: %v", ran)
	}
}

// hasCommand says whether cmds hold every one of the command lines want.
func hasCommand(cmds []docCommand, want ...string) bool {
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.tool+" "+strings.Join(c.args, " ")] = true
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

// runDocCommand runs one commcal command, or parses it when it cannot run here (the reason is
// returned in note), and says whether it ran; err says how it disagrees with the documentation.
func runDocCommand(t *testing.T, app *cli.App, c docCommand) (ran bool, note string, err error) {
	path, _, _ := commandPath(app, c.args)
	if len(path) == 0 {
		path = []string{""} // commcal's own flags: --help, --version
	}
	for _, p := range docParsedOnly {
		if !p.match(c, path) {
			continue
		}
		args, err := helpArgs(app, c.args)
		if err != nil {
			return false, "", fmt.Errorf("%s:%d: %v", c.file, c.line, err)
		}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			return false, "", fmt.Errorf("%s:%d: %s\nits command or flags do not parse (commcal %s: exit %d): %s",
				c.file, c.line, c.text, strings.Join(args, " "), code, stderr)
		}
		return false, p.why, nil
	}
	for _, kv := range c.env {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	code, stdout, stderr := runCLI(t, expandGlobs(c.args, c.globs)...)
	if code != c.exit {
		return true, "", fmt.Errorf("%s:%d: %s\nexit %d, the documentation says %d\n%s", c.file, c.line, c.text, code, c.exit, stderr)
	}
	if c.stdout != "" {
		if err := os.WriteFile(c.stdout, []byte(stdout), 0o644); err != nil {
			return true, "", err
		}
	}
	return true, "", nil
}

// makeDryRun checks a make line with make -n in the repository.
func makeDryRun(t *testing.T, root string, c docCommand) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"-n"}, c.args...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s:%d: %s: make -n: %v\n%s", c.file, c.line, c.text, err, out)
	}
}

// commandPath returns the commcal command a line names (e.g. [export simgrid]), its
// definition, and the index of the first argument after it, skipping the global flags before it.
func commandPath(app *cli.App, args []string) ([]string, *cli.Command, int) {
	i := skipFlags(app.Flags, args, 0)
	var path []string
	var cmd *cli.Command
	for cmds := app.Commands; i < len(args); i++ {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		path, cmd, cmds = append(path, args[i]), next, next.Subcommands
	}
	return path, cmd, i
}

// helpArgs makes a command that cannot run into one that only parses: its global flags, its
// command, --help, then its flags up to its first positional argument (with --help, urfave/cli
// would read a positional argument as a help topic).
func helpArgs(app *cli.App, args []string) ([]string, error) {
	_, cmd, i := commandPath(app, args)
	if cmd == nil {
		return nil, fmt.Errorf("no command in %q", args)
	}
	end := skipFlags(cmd.Flags, args, i)
	out := append(append([]string{}, args[:i]...), "--help")
	return append(out, args[i:end]...), nil
}

// skipFlags returns the index of the first word from i on that is not a flag of flags or a
// flag's value (takesValue, as completion reads a command line).
func skipFlags(flags []cli.Flag, args []string, i int) int {
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if takesValue(flags, args[i]) {
			i++
		}
		i++
	}
	return i
}

// expandGlobs expands the unquoted words holding *, ? or [ as the shell would, in the working
// directory; a word that matches nothing stays as it is.
func expandGlobs(args []string, globs []bool) []string {
	var out []string
	for i, a := range args {
		if globs[i] && strings.ContainsAny(a, "*?[") {
			if m, _ := filepath.Glob(a); len(m) > 0 {
				out = append(out, m...)
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// copyDocFixtures copies into dir the fixtures that cmds name, at their relative paths.
func copyDocFixtures(t *testing.T, root, dir string, cmds []docCommand) {
	for _, f := range docFixtures {
		named := false
		for _, c := range cmds {
			named = named || strings.Contains(c.text, f)
		}
		if !named {
			continue
		}
		src, dst := filepath.Join(root, f), filepath.Join(dir, f)
		info, err := os.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if info.IsDir() {
			err = os.CopyFS(dst, os.DirFS(src))
		} else {
			var b []byte
			if b, err = os.ReadFile(src); err == nil {
				err = os.WriteFile(dst, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

var (
	exitComment = regexp.MustCompile(`\bexit (\d+)\b`)           // "# exit 3: ..."
	assignment  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) // NAME=value before a program
)

// docCommands extracts the command lines of the ```sh blocks of one page.
func docCommands(t *testing.T, path, name string) []docCommand {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	in, joined, first := false, "", 0
	for n, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in:
			in = trimmed == "```sh"
			continue
		case trimmed == "```":
			in = false
			continue
		}
		if joined == "" {
			first = n + 1
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			joined += cont + " "
			continue
		}
		joined += trimmed
		if c, ok := parseDocLine(t, name, first, joined); ok {
			cmds = append(cmds, c)
		}
		joined = ""
	}
	return cmds
}

// parseDocLine splits one (joined) line into a command; ok is false for a line of comments
// only or of another program.
func parseDocLine(t *testing.T, file string, line int, text string) (docCommand, bool) {
	c := docCommand{file: file, line: line, text: text}
	words, quoted, comment, err := shellWords(text)
	if err != nil {
		if strings.Contains(text, "commcal") {
			t.Errorf("%s:%d: %v in %q", file, line, err, text)
		}
		return c, false
	}
	if m := exitComment.FindStringSubmatch(comment); m != nil {
		c.exit, _ = strconv.Atoi(m[1])
	}
	i := 0
	for i < len(words) && assignment.MatchString(words[i]) {
		c.env = append(c.env, words[i])
		i++
	}
	if i == len(words) {
		return c, false
	}
	if words[i] == "make" || words[i] == "go" {
		c.tool, c.args = words[i], words[i+1:]
		return c, true
	}
	at := -1
	for j := i; j < len(words) && at < 0; j++ {
		if words[j] == "commcal" && !quoted[j] {
			at = j
		}
	}
	if at < 0 {
		return c, false
	}
	c.tool, c.prefix = "commcal", words[i:at]
	for j := at + 1; j < len(words); j++ {
		switch w := words[j]; {
		case w == ">" && j+1 < len(words):
			c.stdout = words[j+1]
			j++
		case strings.HasPrefix(w, ">") && !quoted[j]:
			c.stdout = w[1:]
		case !quoted[j] && (w == "|" || w == "||" || w == "&&" || w == ";" || w == "<"):
			t.Errorf("%s:%d: %q: a pipe or list the test cannot run; show the commcal command alone", file, line, text)
			return c, false
		default:
			c.args = append(c.args, w)
			c.globs = append(c.globs, !quoted[j])
		}
	}
	return c, true
}

// shellWords splits a line into words as sh does for simple commands: blanks separate words,
// single and double quotes group (no expansion inside), and an unquoted # starts the comment,
// which is returned apart. quoted[i] says that word i had quotes.
func shellWords(s string) (words []string, quoted []bool, comment string, err error) {
	var w strings.Builder
	inWord, q, wasQuoted := false, rune(0), false
	end := func() {
		if inWord {
			words, quoted = append(words, w.String()), append(quoted, wasQuoted)
		}
		w.Reset()
		inWord, wasQuoted = false, false
	}
	for i, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			q, inWord, wasQuoted = r, true, true
		case r == '#' && !inWord:
			end()
			return words, quoted, s[i:], nil
		case r == ' ' || r == '\t':
			end()
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if q != 0 {
		return nil, nil, "", fmt.Errorf("unbalanced %c", q)
	}
	end()
	return words, quoted, "", nil
}

// TestDocCommandFails keeps the documentation test able to fail: a wrong documented exit
// status, and a flag commcal lacks on a command that is run or only parsed, are caught.
func TestDocCommandFails(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"commcal version", true},
		{"commcal version   # exit 3", false},
		{"commcal version --no-such-flag", false},
		{"commcal simulate --cluster no-such-cluster --out sim   # exit 2: an unknown cluster", true},
		{"sudo commcal measure --cluster lab.toml --out measured", true},
		{"sudo commcal measure --no-such-flag x --out measured", false},
		{`srun commcal agent --rendezvous "$HOME/rdv" --out measured`, true},
	} {
		c, ok := parseDocLine(t, "case", 1, tc.line)
		if !ok {
			t.Fatalf("%q: not a command", tc.line)
		}
		t.Chdir(t.TempDir())
		if _, _, err := runDocCommand(t, app, c); (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok = %v", tc.line, err, tc.ok)
		}
	}
}
