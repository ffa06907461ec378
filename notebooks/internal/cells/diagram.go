package cells

import (
	"context"
	"fmt"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// diagram runs the built-in scenario name as `cachelab run NAME --output
// mermaid [--object object]` does (seed 1, the scenario's own stack and
// server) and returns its diagram as a Markdown block. A run that
// diverges, or a diagram that is not valid Mermaid, is an error: a
// chapter shows the simulator agreeing with client-go.
func diagram(name, object string) (string, error) {
	f := trace.Filter{}
	if object != "" {
		key, err := trace.ParseObject(object)
		if err != nil {
			return "", fmt.Errorf("mermaid %q: %v", name, err)
		}
		f.Object = key
	}
	sc, err := sim.Load(name)
	if err != nil {
		return "", fmt.Errorf("mermaid %q: %v", name, err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	switch {
	case err != nil:
		return "", fmt.Errorf("mermaid %q: %v", name, err)
	case res.Divergence != nil:
		return "", fmt.Errorf("mermaid %q: %v", name, res.Divergence)
	}
	text := mermaid.Render(mermaid.Run{Header: res.Header, Steps: res.Steps}, mermaid.Options{Filter: f})
	if err := mermaid.Validate(text); err != nil {
		return "", fmt.Errorf("mermaid %q: %v", name, err)
	}
	return "```mermaid\n" + text + "```\n", nil
}
