package sim

import (
	"slices"
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// The command table says what a scenario may write; runs says what each
// command does. Every command must have exactly one run function, and
// every run function a command, or a file that parses could not run.
func TestEveryCommandRuns(t *testing.T) {
	for _, n := range scenario.CommandNames() {
		if runs[n].do == nil {
			t.Errorf("command %q has no run function: add it to runs", n)
		}
	}
	for n := range runs {
		if !slices.Contains(scenario.CommandNames(), n) {
			t.Errorf("runs has %q, which is not in the command table", n)
		}
	}
}
