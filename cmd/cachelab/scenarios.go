package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/sim"
)

func (m *Main) scenariosCommand() *cobra.Command {
	var commands bool
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List the built-in scenarios, or the commands a scenario file can use",
		Long: `Scenarios lists the built-in scenarios: each one's name (what 'cachelab run'
takes), its title, and the behaviour IDs it covers (REFERENCE.md).

With --commands it lists the commands a scenario file can use instead. A
scenario file is in cockroachdb's datadriven format: a '#' paragraph saying
what it shows and the IDs it covers, then directives, each a command line, a
line '----', and the output the step is expected to print (possibly none)
followed by a blank line:

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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if commands {
				return m.listCommands()
			}
			return m.listScenarios()
		},
	}
	cmd.Flags().BoolVar(&commands, "commands", false, "list the commands a scenario file can use, with their arguments")
	return cmd
}

// listScenarios prints the catalog as aligned columns.
func (m *Main) listScenarios() error {
	cat, err := sim.Catalog()
	if err != nil {
		// The catalog is built in: a bad file in it is cachelab's bug.
		return runError(err)
	}
	w := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTITLE\tCOVERS")
	for _, sc := range cat {
		fmt.Fprintf(w, "%s\t%s\t%s\n", sc.Name, sc.Title, strings.Join(sc.IDs, " "))
	}
	return writeError(w.Flush(), "while listing the scenarios")
}

// listCommands prints the scenario-file commands, one per line.
func (m *Main) listCommands() error {
	for _, line := range sim.CommandHelp() {
		if _, err := fmt.Fprintln(m.Stdout, line); err != nil {
			return writeError(err, "while listing the commands")
		}
	}
	return nil
}
