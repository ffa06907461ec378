// Package scalescenario writes the scenario the scale benchmarks play
// (issue 28): n objects created before the informers start, one handler,
// a few updates, then a compaction and a closed watch, which make the
// reflector relist everything.
package scalescenario

import (
	"fmt"
	"strings"
)

// Text is the scenario file for n objects.
func Text(n int) string {
	w := len(fmt.Sprint(n))
	var b strings.Builder
	fmt.Fprintf(&b, "# %d objects: a sync, a few updates, a relist\n# Covers: none\n\n", n)
	step := func(cmd string) { fmt.Fprintf(&b, "%s\n----\n\n", cmd) }
	step(fmt.Sprintf("bulk-create n=%d", n))
	step("add-handler h")
	step("start")
	for i := 1; i <= 3; i++ {
		step(fmt.Sprintf("update bulk/obj-%0*d labels=(v=2)", w, i))
	}
	step("compact")
	step("close-watch")
	return b.String()
}
