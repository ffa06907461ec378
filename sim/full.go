package sim

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/world"
)

// A NotLinkedError is a run that needs what this build leaves out:
// kube-apiserver's watch cache, or client-go's typed informer factory,
// which package sim/full links in (sim/world's Full). Check returns it
// before the run's first step.
type NotLinkedError struct {
	Scenario string // the scenario's name
	Needs    string // what it needs, as a sentence's verb phrase
}

func (e *NotLinkedError) Error() string {
	return fmt.Sprintf("%s %s, which this build of cachelab leaves out to build faster: "+
		"build cachelab with -tags full (go run -tags full ./cmd/cachelab ...), "+
		"or, in Go code, import _ \"github.com/cachelab/cachelab/sim/full\"", e.Scenario, e.Needs)
}

// NeedsFull says what in sc, run with opts, needs package sim/full, or
// "": a run behind the watch cache (in process or over HTTPS), and a
// shared informer factory, which is compared with client-go's typed
// one.
func NeedsFull(sc *scenario.Scenario, opts Options) string {
	if opts.Cluster == nil && opts.Replay == nil {
		server := opts.Server
		if server == "" {
			server = sc.WrittenFor()
		}
		if server == scenario.ServerWatchCache || opts.Wire {
			return "runs behind kube-apiserver's watch cache"
		}
	}
	if len(sc.CustomResources) > 0 {
		return "serves custom resources, which kube-apiserver's apiextensions prunes, defaults and validates"
	}
	for _, st := range sc.Steps {
		if st.Cmd == "factory" {
			return "makes a shared informer factory, which is compared with client-go's SharedInformerFactory"
		}
	}
	return ""
}

// checkLinked returns a *NotLinkedError if sc, run with opts, needs
// what this build leaves out.
func checkLinked(sc *scenario.Scenario, opts Options) error {
	if world.Linked() != nil {
		return nil
	}
	if needs := NeedsFull(sc, opts); needs != "" {
		return &NotLinkedError{Scenario: sc.Name, Needs: needs}
	}
	return nil
}
