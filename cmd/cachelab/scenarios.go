package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/internal/suggest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

func (m *Main) scenariosCommand() *cobra.Command {
	var commands, file bool
	cmd := &cobra.Command{
		Use:   "scenarios [name]",
		Short: "List the built-in scenarios, show one, or list the commands a scenario file can use",
		Long: `Scenarios lists the built-in scenarios: each one's name (what 'cachelab run'
takes), its title, and the behaviour IDs it covers (REFERENCE.md).

Given a name, it shows that scenario: what it shows, the IDs it covers, the
kube-apiserver it runs behind, and its steps (the commands, with their
lines in the file; 'cachelab run' prints what each does). With --file it
prints the scenario's file as it is written instead, to copy and edit:

  cachelab scenarios add-update-delete --file > my.txt
  cachelab run my.txt

With --commands it lists the commands a scenario file can use instead,
each one's usage and then its help, wrapped to the terminal's width (80
columns when stdout is not a terminal; CACHELAB_TERM_WIDTH=N sets it, 0
for one line a command).

A scenario file is in cockroachdb's datadriven format: a '#' paragraph
saying what it shows, whose '# Covers:' line names the IDs it covers (those,
and only those, are its COVERS), whose '# Explore:' lines (if any) name
placements of a fault worth exploring and the story each tells ('# Explore:
disconnect at=3 heal=7: an object is first seen at a later version'; 'go
test ./sim/explore -run TestExploreHints' checks them), then directives,
each a command line, a line '----', and the output the step is expected to
print (possibly none) followed by a blank line:

  # Deleting a pod: one DELETED event, one OnDelete.
  # Covers: P1 E6

  add-handler h1
  ----

  create ns0/a
  ----

  start
  ----

  delete ns0/a
  ----`,
		Example: `  cachelab scenarios
  cachelab scenarios relist-after-compaction
  cachelab scenarios relist-after-compaction --file > my.txt
  cachelab scenarios --commands`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case commands && (len(args) > 0 || file):
				return usage(errors.New("--commands lists the commands of every scenario file: drop the name and --file"))
			case commands:
				return m.listCommands()
			case file && len(args) == 0:
				return usage(errors.New("--file prints one scenario's file: name it, as in 'cachelab scenarios add-update-delete --file'"))
			case len(args) == 0:
				return m.listScenarios()
			}
			return m.showScenario(args[0], file)
		},
	}
	cmd.Flags().BoolVar(&commands, "commands", false, "list the commands a scenario file can use, with their arguments")
	cmd.Flags().BoolVar(&file, "file", false, "print the named scenario's file as it is written, to copy and edit")
	return cmd
}

// listScenarios prints the catalog as aligned columns. On a terminal too
// narrow for the table (some 170 columns), each title and its IDs wrap,
// at spaces, under the title column (issue 29).
func (m *Main) listScenarios() error {
	cat, err := catalog()
	if err != nil {
		return err
	}
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTITLE\tCOVERS")
	for _, sc := range cat {
		fmt.Fprintf(w, "%s\t%s\t%s\n", sc.Name, sc.Title, strings.Join(sc.IDs, " "))
	}
	_ = w.Flush() // a strings.Builder takes every write
	width, err := m.width()
	if err != nil {
		return usage(err)
	}
	out := table.String()
	if width > 0 && widest(out) > width {
		out = narrowCatalog(cat, width)
	}
	_, err = io.WriteString(m.Stdout, out)
	return writeError(err, "while listing the scenarios")
}

// widest is the number of runes in text's longest line.
func widest(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// narrowCatalog is the catalog for a terminal width columns wide: the
// names in a column, each title followed by the IDs it covers, wrapped
// under the title; a name too long for half the width gets a line of its
// own.
func narrowCatalog(cat []*scenario.Scenario, width int) string {
	nameCol := len("NAME")
	for _, sc := range cat {
		nameCol = max(nameCol, len(sc.Name))
	}
	nameCol = min(nameCol, width/2)
	indent := strings.Repeat(" ", nameCol+2)
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  TITLE (COVERS)\n", nameCol, "NAME")
	for _, sc := range cat {
		text := sc.Title
		if len(sc.IDs) > 0 {
			text += " (" + strings.Join(sc.IDs, " ") + ")"
		}
		lines := trace.Wrap(text, max(width-nameCol-2, 20))
		if len(sc.Name) > nameCol {
			b.WriteString(sc.Name + "\n" + indent)
		} else {
			fmt.Fprintf(&b, "%-*s  ", nameCol, sc.Name)
		}
		b.WriteString(strings.Join(lines, "\n"+indent) + "\n")
	}
	return b.String()
}

// catalog is sim.Catalog; a bad file in it is cachelab's bug (exit 3).
func catalog() ([]*scenario.Scenario, error) {
	cat, err := sim.Catalog()
	if err != nil {
		return nil, runError(err)
	}
	return cat, nil
}

// showScenario prints the built-in scenario name: its description, or with
// file its file as written.
func (m *Main) showScenario(name string, file bool) error {
	cat, err := catalog()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(cat, func(sc *scenario.Scenario) bool { return sc.Name == name })
	if i < 0 {
		return usage(unknownScenario(name, cat))
	}
	if file {
		src, ok := sim.BuiltinSource(name)
		if !ok {
			return runError(fmt.Errorf("the built-in scenario %s has no file", name)) // Catalog read it: a bug
		}
		_, err := m.Stdout.Write(src)
		return writeError(err, "while printing the scenario")
	}
	width, err := m.width()
	if err != nil {
		return usage(err)
	}
	w := &errWriter{w: m.Stdout}
	describe(w, cat[i], width)
	return writeError(w.err, "while printing the scenario")
}

// subcommandGuesses are words a user may give 'cachelab scenarios' as if
// it had subcommands ('cachelab scenarios commands'), and where each
// would have led: without them, the word is looked for in the catalog
// like any other name (issue 47, case 21). A scenario of that name would
// win (unknownScenario is asked only when there is none).
var subcommandGuesses = map[string]string{
	"commands": "to list the commands a scenario file can use, run 'cachelab scenarios --commands'",
	"command":  "to list the commands a scenario file can use, run 'cachelab scenarios --commands'",
	"list":     "'cachelab scenarios', with no name, lists them all",
	"ls":       "'cachelab scenarios', with no name, lists them all",
	"all":      "'cachelab scenarios', with no name, lists them all",
	"help":     "'cachelab scenarios --help' says what this command does",
}

// unknownScenario is the error for a name the catalog does not have,
// suggesting the closest names, or, for a word that reads as a
// subcommand, what the user was after.
func unknownScenario(name string, cat []*scenario.Scenario) error {
	if advice, ok := subcommandGuesses[name]; ok {
		return fmt.Errorf("no built-in scenario %q: %s", name, advice)
	}
	var names []string
	for _, sc := range cat {
		names = append(names, sc.Name)
	}
	if near := suggest.Closest(name, names, 3); len(near) > 0 {
		return fmt.Errorf("no built-in scenario %q; did you mean %s? ('cachelab scenarios' lists them all)", name, strings.Join(near, ", "))
	}
	return fmt.Errorf("no built-in scenario %q; 'cachelab scenarios' lists them all", name)
}

// nearScenario is sim.Load's error for a name that is neither a built-in
// scenario nor a file, with the closest built-in names in place of the
// list of them all, where some are close.
func nearScenario(name string, err error) error {
	var unknown *sim.UnknownScenarioError
	if !errors.As(err, &unknown) {
		return err
	}
	if near := suggest.Closest(name, unknown.BuiltIn, 3); len(near) > 0 {
		return fmt.Errorf("no built-in scenario %q and no such file; did you mean %s? ('cachelab scenarios' lists them all)", name, strings.Join(near, ", "))
	}
	return err
}
