package scenario

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Scenario is a parsed scenario file. The format is cockroachdb's
// datadriven format: a comment paragraph, then directives, each a command
// line, a "----" separator, and the output the command is expected to
// print (empty to just run it):
//
//	# Add, update and delete, end to end.
//	# Covers: P1 P2 E6
//
//	create ns0/a labels=(app=web)
//	----
//	etcd       create ns0/a@2
//	...
type Scenario struct {
	Name  string // the file's base name without extension
	File  string // the path it was read from, for errors
	Title string // the first sentence of the opening comment
	About string // the whole opening comment, without the "# "
	// IDs are the behaviour IDs (REFERENCE.md) of its "# Covers:" line,
	// each once, in the order written; none without one.
	IDs []string
	// Server is the world the scenario needs, from its "# Server:" line:
	// ServerEtcd, ServerWatchCache, ServerAny, or "" (not said: the
	// world its levers need, WrittenFor).
	Server string
	// Detector is its "# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true"
	// line: the data consistency detector is on for both informers, as
	// that variable switches it on for a process (package sim).
	Detector bool
	Steps    []Step
	// CustomResources are the resources its crd steps define, in order.
	CustomResources []CustomResource
	// Builtin marks a scenario of the catalog (embedded in the program);
	// File then names it for messages only.
	Builtin bool
	// Hints are its "# Explore:" lines: placements worth exploring.
	Hints []ExploreHint
}

// Step is one directive.
type Step struct {
	Line     int // of the command, 1-based
	Cmd      string
	Args     []datadriven.CmdArg
	Text     string // the command line as written
	Expected string // the output after "----"
	// Input is the lines between the command and its "----" (a crd
	// step's manifest), "" for every other command.
	Input string
	// custom are the custom resources the crd steps before it define;
	// defines is the one a crd step defines.
	custom  []CustomResource
	defines *CustomResource
	// Moves and Informed are the dry run's: how far the step moves the
	// scenario's clock (advance, resync), and whether informers run as
	// it begins (InformedAdvance).
	Moves    time.Duration
	Informed bool

	// The expected block's lines in the file, 0-based: [blockFrom,
	// blockTo), for Rewrite. blockFrom is the line after "----".
	blockFrom, blockTo int
}

// WrittenFor is the world the scenario's expected output is for: the one
// its "# Server:" line names; without one, the etcd world if it pulls a
// lever only that world has (put-raw, delete-raw),
// else the default world, as for "any".
func (s Scenario) WrittenFor() string {
	switch s.Server {
	case ServerEtcd, ServerWatchCache:
		return s.Server
	case "":
		for _, st := range s.Steps {
			if NeedsServer(st.Cmd) == ServerEtcd {
				return ServerEtcd
			}
		}
	}
	return DefaultServer
}

// Pos is the step's file:line.
func (s Scenario) Pos(st Step) string { return fmt.Sprintf("%s:%d", s.File, st.Line) }

// ParseError is a scenario file that cannot be read: File:Line says where,
// Msg what was wrong and what was expected.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a scenario from src; file names it in errors. It checks the
// text, the layout, every command's arguments, and that each step can run
// where it stands (dryrun.go), so a run never starts on a file it would
// fail on halfway or read other than as written.
func Parse(file string, src []byte) (*Scenario, error) {
	sc, err := parseForm(file, src)
	if err != nil {
		return nil, err
	}
	world := newDryRun()
	world.server = sc.Server
	if sc.Server == "" {
		world.server = sc.WrittenFor()
	}
	for i, st := range sc.Steps {
		a, _ := ParseArgs(st) // parseForm checked them
		sc.Steps[i].Informed = world.informed()
		clock := world.clock
		if err := world.step(st, a); err != nil {
			return nil, &ParseError{File: file, Line: st.Line, Msg: err.Error()}
		}
		sc.Steps[i].Moves = world.clock - clock
	}
	return sc, nil
}

// parseForm is Parse without the dry run: every line well-formed on its
// own, whether or not the steps make sense in their order.
func parseForm(file string, src []byte) (*Scenario, error) {
	sc := &Scenario{File: file, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	// An editor's byte order mark is not text; anything else that is not
	// plain text is refused before it can reach a terminal.
	body := strings.TrimPrefix(string(src), "\ufeff")
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	fail := func(line int, format string, args ...any) (*Scenario, error) {
		return nil, &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if n, msg := checkText(lines); n > 0 {
		return fail(n, "%s", msg)
	}
	i := 0
	// The opening comment paragraph describes the scenario.
	var about []string
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		about = append(about, strings.TrimSpace(strings.TrimPrefix(lines[i], "#")))
	}
	if len(about) == 0 {
		return fail(1, "a scenario starts with a # paragraph saying what it shows and the behaviour IDs it covers")
	}
	sc.About = strings.Join(about, "\n")
	sc.Title = firstSentence(strings.Join(about, " "))
	ids, n, err := parseCovers(about)
	if err != nil {
		return fail(n+1, "%v", err)
	}
	sc.IDs = ids
	if sc.Detector, n, err = parseEnv(about); err != nil {
		return fail(n+1, "%v", err)
	}
	serverLine := 0
	for n, l := range about {
		v, ok := strings.CutPrefix(l, "Server:")
		if !ok {
			continue
		}
		if serverLine > 0 {
			return fail(n+1, "a second \"# Server:\" line; line %d says %q already: a scenario runs behind one kube-apiserver, so say it once", serverLine, sc.Server)
		}
		serverLine = n + 1
		switch sc.Server = strings.TrimSpace(v); sc.Server {
		case ServerEtcd, ServerWatchCache, ServerAny:
		default:
			return fail(n+1, "# Server: says which kube-apiserver the scenario needs: %s (watch cache off), %s (kube-apiserver's watch cache) or %s; not %q", ServerEtcd, ServerWatchCache, ServerAny, sc.Server)
		}
	}
	for i < len(lines) {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		if line == "----" {
			return fail(i+1, `"----" with no command before it`)
		}
		start := i
		var text string
		text, i = commandLine(lines, i)
		if len(text) > maxCommandLine {
			return fail(start+1, "a command line may be at most %d bytes, continuations included; this one is longer: split it into several commands", maxCommandLine)
		}
		cmd, args, err := parseLine(text)
		if err != nil {
			return fail(start+1, "%v", err)
		}
		st := Step{Line: start + 1, Cmd: cmd, Args: args, Text: text, custom: sc.CustomResources}
		if err := checkStep(st); err != nil {
			return fail(start+1, "%v", err)
		}
		if cmd == "crd" {
			var n int
			if st.Input, i, n, err = inputBlock(lines, i); err != nil {
				return fail(start+1, "%v", err)
			}
			c, line, err := parseCRD(st.Input, n+1)
			if err != nil {
				return fail(line, "%v", err)
			}
			if _, dup := customNamed(sc.CustomResources, c.Plural); dup {
				return fail(start+1, "crd %s: a crd before this line defines %s already", c.Name(), c.Plural)
			}
			c.Line = st.Line
			sc.CustomResources = append(slices.Clip(sc.CustomResources), c)
			st.defines = &sc.CustomResources[len(sc.CustomResources)-1]
		}
		if i >= len(lines) || strings.TrimSpace(lines[i]) != "----" {
			return fail(start+1, "expected a line \"----\" after the command %q (and then its expected output, possibly none)", cmd)
		}
		st.blockFrom = i + 1
		if st.Expected, i, err = expectedOutput(lines, i+1); err != nil {
			return fail(start+1, "%v", err)
		}
		st.blockTo = i
		if n, ok := misplacedCommand(lines, st.blockFrom, st.blockTo); ok {
			return fail(n+1, "this looks like a command, not output: the expected output of the step at line %d runs on until a blank line, "+
				"so %q is taken as what that step prints. Put a blank line after the step's \"----\" (or after its output) to make it a step of its own", st.Line, strings.TrimSpace(lines[n]))
		}
		sc.Steps = append(sc.Steps, st)
	}
	if len(sc.Steps) == 0 {
		return fail(1, "the scenario has no commands")
	}
	if sc.Hints, n, err = parseHints(about, len(sc.Steps)); err != nil {
		return fail(n+1, "%v", err)
	}
	return sc, nil
}

// misplacedCommand finds, among lines[from:to] (an expected block), the
// first that reads as a command of its own: a known command with valid
// arguments, written as people write commands (words one space apart; a
// trace line pads its layer column with two or more). Such a line is
// almost always a step whose blank line before it was forgotten.
func misplacedCommand(lines []string, from, to int) (int, bool) {
	for n := from; n < to; n++ {
		text := strings.TrimSpace(lines[n])
		name, _, _ := strings.Cut(text, " ")
		if _, known := commands[name]; !known || strings.Contains(text, "  ") {
			continue
		}
		cmd, args, err := parseLine(text)
		if err == nil && checkStep(Step{Cmd: cmd, Args: args}) == nil {
			return n, true
		}
	}
	return 0, false
}

// HasExpectations reports whether any step has expected output: a file
// whose blocks are all empty is run without checking, so that its
// commands can be written first and the blocks filled in by a rewrite.
func (sc *Scenario) HasExpectations() bool {
	for _, st := range sc.Steps {
		if st.Expected != "" {
			return true
		}
	}
	return false
}

// Rewrite returns src, the file sc was parsed from, with each step's
// expected block replaced by outputs[i] (a step's StepOutput): the same
// layout as datadriven's rewrite (output with a blank line in it goes
// between "----" "----" pairs), everything else kept as it was. It
// refuses outputs that do not match the steps.
func (sc *Scenario) Rewrite(src []byte, outputs []string) ([]byte, error) {
	if len(outputs) != len(sc.Steps) {
		return nil, fmt.Errorf("%s: %d outputs for %d steps", sc.File, len(outputs), len(sc.Steps))
	}
	body := strings.TrimPrefix(string(src), "\ufeff")
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	var out []string
	at := 0
	for i, st := range sc.Steps {
		if st.blockFrom > len(lines) || st.blockTo > len(lines) || st.blockFrom < at {
			return nil, fmt.Errorf("%s: the file changed since it was read", sc.File)
		}
		out = append(out, lines[at:st.blockFrom]...)
		block := strings.TrimSuffix(outputs[i], "\n")
		switch {
		case block == "":
		case strings.Contains("\n"+block+"\n", "\n\n"):
			out = append(out, "----")
			out = append(out, strings.Split(block, "\n")...)
			out = append(out, "----", "----")
		default:
			out = append(out, strings.Split(block, "\n")...)
		}
		at = st.blockTo
	}
	out = append(out, lines[at:]...)
	return []byte(strings.Join(out, "\n")), nil
}

// commandLine is the command starting at lines[i], with the lines that a
// trailing "\" continues joined by spaces (it stops joining once the
// line is too long, so a file of continuations costs no more than one
// long line); next is the line after it.
func commandLine(lines []string, i int) (text string, next int) {
	text = strings.TrimSpace(lines[i])
	for strings.HasSuffix(text, `\`) && i+1 < len(lines) && len(text) <= maxCommandLine {
		i++
		text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + strings.TrimSpace(lines[i])
	}
	return text, i + 1
}

// expectedOutput reads a command's expected output, starting at lines[i]
// (after its "----"): up to a blank line, or, after a second "----", up
// to a "----" "----" pair (output with blank lines). next is the line
// after it.
func expectedOutput(lines []string, i int) (out string, next int, err error) {
	var got []string
	if i < len(lines) && lines[i] == "----" {
		for i++; ; i++ {
			if i+1 >= len(lines) {
				return "", 0, fmt.Errorf("output opened with \"----\" twice is never closed by two \"----\" lines")
			}
			if lines[i] == "----" && lines[i+1] == "----" {
				i += 2
				break
			}
			got = append(got, lines[i])
		}
	} else {
		for ; i < len(lines) && lines[i] != ""; i++ {
			got = append(got, lines[i])
		}
	}
	if len(got) == 0 {
		return "", i, nil
	}
	return strings.Join(got, "\n") + "\n", i, nil
}

// parseLine is datadriven's line parser, made safe: a bad file must be an
// error, never a panic, whatever the parser does with it.
func parseLine(text string) (cmd string, args []datadriven.CmdArg, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot parse %q: %v", text, r)
		}
	}()
	cmd, args, err = datadriven.ParseLine(text)
	if err != nil {
		return "", nil, fmt.Errorf("cannot parse %q: %v", text, err)
	}
	return cmd, args, nil
}

// firstSentence is text up to its first ". " or ": ", or all of it.
func firstSentence(text string) string {
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' {
			return text[:i+1]
		}
		if text[i] == ':' && text[i+1] == ' ' {
			return text[:i]
		}
	}
	return text
}

// inputBlock reads a crd step's manifest: the lines from lines[i] up to
// a line "----", which next is; first is the manifest's first line
// (0-based).
func inputBlock(lines []string, i int) (input string, next, first int, err error) {
	first = i
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != "----"; i++ {
	}
	if i == first {
		return "", 0, 0, fmt.Errorf("crd wants a CustomResourceDefinition's manifest on the lines between it and its \"----\"")
	}
	if i >= len(lines) {
		return "", 0, 0, fmt.Errorf("the manifest after crd is never ended by a line \"----\"")
	}
	return strings.Join(lines[first:i], "\n") + "\n", i, first, nil
}
