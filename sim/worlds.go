package sim

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// A run's world is where its informers live: what serves their LISTs and
// WATCHes, where the scenario's writes go, what the invariants hold the
// caches to, and when a step has settled. The runner keeps the scenario,
// the clock, the sides and the trace, and asks its world for the rest,
// through runWorld; each world is a type of its own:
//
//	clusterWorld  a real cluster through a kubeconfig (cluster.go)
//	replayWorld   a recording played back (replay.go)
//	ownWorld      kube-apiserver's storage on an etcd: with its watch
//	              cache or without, in process or over HTTPS, on the
//	              embedded etcd or an external one
//
// Which levers a world has is the levers' own answer (package sim/lever,
// WorldOf), asked before the first step.
//
// Each world says where a write goes (writer): ownWorld to etcd, with a
// writer per resource; a cluster to the run's namespace; a replay
// nowhere. ownWorld still keeps its other parts in the runner's fields
// (the etcd and its connections, the kube-apiservers, kubeAPIServer in
// kubeapi.go); the part over the wire is a type of its own (wiring,
// wire.go). The worlds it stands for are to become types of their own as
// well.

// runWorld is a world as the runner asks it.
type runWorld interface {
	// connect reaches the world (starting what it runs) and makes the
	// pair of sides of start's informer (runner.newPair).
	connect() error
	// describe puts the world in the run's header.
	describe(h *trace.Header)
	// server is how the connection of side impl of informer label (the
	// pair's i-th) reaches the world, for a namespace, and the index in
	// runner.clients of the etcd connection it uses (where it uses one).
	// It serves the resource *res names when it is called: start's
	// informer may be started on another resource than the last.
	server(label string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error)
	// writer is where a write of resource (as a scenario names it)
	// goes, or why none can go there.
	writer(resource string) (objectWriter, error)
	// namespace is the namespace an informer's namespace= watches here.
	namespace(ns string) string
	// wrote notes a write; false leaves the runner's own note of it.
	wrote(before, after *unstructured.Unstructured) bool
	// revision is the world's newest resourceVersion, as settling
	// waits for it.
	revision() (int64, error)
	// reached reports whether side s has had everything the world said
	// up to rev.
	reached(s *side, rev int64) bool
	// listAt is what the world held at resourceVersion rv, in the scope
	// of cfg, for the invariants; truth names it.
	listAt(cfg *startConfig, rv string) (map[string]string, error)
	truth() string
	// shown makes a side's events as the trace shows and compares them,
	// in place; comparable does the same for a side's state.
	shown(events []trace.Event)
	comparable(sn snapshot) snapshot
	// took is given each step's (and the run's late) events of the side
	// of cachelab's start informer.
	took(events []trace.Event)
	// stepped is told the step that has been played, begun at began.
	stepped(sr *trace.StepResult, began time.Time)
	// cutters are what a disconnect cuts, and what they stand in front
	// of ("" where the informers do not talk HTTP).
	cutters() ([]cutter, string)
	// end removes what the run made outside the process, within limit,
	// whatever the run's context says; leftBehind is what it could not.
	end(limit time.Duration)
	leftBehind() error
	// close lets go of the world's own connections.
	close()
}

// quietWorld is what a world does where it adds nothing: embedded in
// each world, which overrides what it does.
type quietWorld struct{}

func (quietWorld) describe(*trace.Header)     {}
func (quietWorld) namespace(ns string) string { return ns }
func (quietWorld) writer(string) (objectWriter, error) {
	return nil, errors.New("this world takes no writes")
}
func (quietWorld) wrote(_, _ *unstructured.Unstructured) bool { return false }
func (quietWorld) shown([]trace.Event)                        {}
func (quietWorld) comparable(sn snapshot) snapshot            { return sn }
func (quietWorld) took([]trace.Event)                         {}
func (quietWorld) stepped(*trace.StepResult, time.Time)       {}
func (quietWorld) cutters() ([]cutter, string)                { return nil, "" }
func (quietWorld) end(time.Duration)                          {}
func (quietWorld) leftBehind() error                          { return nil }
func (quietWorld) close()                                     {}
func (quietWorld) truth() string                              { return "etcd" }

// newWorld is the world the run's options name.
func (r *runner) newWorld() runWorld {
	switch {
	case r.opts.Cluster != nil:
		return &clusterWorld{r: r}
	case r.opts.Replay != nil:
		return &replayWorld{r: r}
	}
	return &ownWorld{r: r}
}
