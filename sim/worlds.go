package sim

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// A run's world is where its informers live: what serves their LISTs and
// WATCHes, where the scenario's writes go, what the invariants hold the
// caches to, and when a step has settled. The runner keeps the scenario,
// the clock, the sides and the trace, and asks its world for the rest,
// through runWorld; each world is a type of its own, in a file of its
// own:
//
//	etcdWorld    kube-apiserver's storage with its watch cache off, on the
//	             embedded etcd or an external one (etcdworld.go)
//	cacheWorld   the watch cache in front of it, in process (cacheworld.go)
//	httpsWorld   the watch cache over HTTPS (wire.go)
//	clusterWorld a real cluster through a kubeconfig (cluster.go)
//	replayWorld  a recording played back (replay.go)
//
// The first three are one inside the next: the watch cache is etcd's
// world with kube-apiserver in front, HTTPS the watch cache's with a
// front of its own. A lever acts on a part of a world (levers.go): the
// storage (storageWorld) or the caches (cachedWorld). Which worlds have
// the part is the lever's own answer (package sim/lever, WorldOf), asked
// before the first step and at each step; newWorld (newworld.go) is the
// one place that names every world's type.

// runWorld is a world as the runner asks it.
type runWorld interface {
	// connect reaches the world (starting what it runs) and makes the
	// pair of sides of start's informer (runner.newPair).
	connect() error
	// describe puts the world in the run's header.
	describe(h *trace.Header)
	// server is how the connection of side impl of informer label (the
	// pair's i-th) reaches the world, for a namespace, and the index in
	// etcdWorld.clients of the etcd connection it uses (where it uses
	// one).
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
	// heldByCut reports whether one of side s's requests waits in a
	// cutter for the network to come back.
	heldByCut(s *side) bool
	// settling is told a settle begins; settleWorld waits, at each
	// round of it, until what the world runs of its own (a watch
	// cache) has taken in every write and has nothing in flight.
	// quietMoment is a goroutine dump that found it so, if nothing
	// has moved since (parked.go).
	settling()
	settleWorld() error
	quietMoment() []string
	// stalled reports whether side s's calls in progress all wait in
	// the world for something only the clock ends (state c).
	stalled(s *side, c world.State) bool
	// release lets go of what the world holds at the run's end, before
	// the informers stop (a held watch cache).
	release()
	// end removes what the run made outside the process, within limit,
	// whatever the run's context says; leftBehind is what it could not.
	// abandon is end's last part for a process about to exit: what
	// runs of the world's own is stopped without waiting.
	end(limit time.Duration)
	leftBehind() error
	abandon()
	// close lets go of the world's own connections and servers.
	close()

	// clocked reports whether the world does work of its own on the
	// scenario's clock (a watch cache's bookmark timer), so that an
	// advance moves the clock a second at a time while informers run;
	// nextWork is when that work is next due, if it is.
	clocked() bool
	nextWork() (time.Time, bool)
	// asksProgress reports whether the sides watch etcd itself, so that
	// a write their selectors filter out reaches them only as a progress
	// notification settling asks for; applied reports whether etcd's
	// member that serves side s has applied rev, so that asking now
	// gets a bookmark at rev.
	asksProgress() bool
	applied(s *side, rev int64) bool
	// placed is res where the run keeps it: under a prefix of the
	// run's own on an external etcd (ownKeys, the start of every key the
	// run writes there; "" where it writes none of its own).
	placed(res listwatch.Resource) listwatch.Resource
	ownKeys() string
	// made is told of each side's connection, as it is made.
	made(c *world.Conn)
}

// objectWriter is what a run writes with: listwatch.Writer on etcd,
// cluster.Objects on a cluster.
type objectWriter interface {
	Get(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error)
	Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Delete(ctx context.Context, namespace, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error)
	ConflictError(name string) error
}

var (
	_ objectWriter = (*listwatch.Writer)(nil)
	_ objectWriter = (*cluster.Objects)(nil)
)

// A cutter cuts the TCP connections between the informers' HTTP clients
// and their server: a proxy on loopback, in front of the in-process
// kube-apiserver (tcpproxy.Proxy) or the cluster (cluster.Proxy).
type cutter interface {
	Cut() int
	Restore()
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
func (quietWorld) heldByCut(*side) bool                       { return false }
func (quietWorld) settling()                                  {}
func (quietWorld) settleWorld() error                         { return nil }
func (quietWorld) quietMoment() []string                      { return nil }
func (quietWorld) stalled(*side, world.State) bool            { return false }
func (quietWorld) release()                                   {}
func (quietWorld) abandon()                                   {}
func (quietWorld) clocked() bool                              { return false }
func (quietWorld) nextWork() (time.Time, bool)                { return time.Time{}, false }
func (quietWorld) asksProgress() bool                         { return false }
func (quietWorld) applied(*side, int64) bool                  { return true }
func (quietWorld) ownKeys() string                            { return "" }
func (quietWorld) made(*world.Conn)                           {}
func (quietWorld) placed(res listwatch.Resource) listwatch.Resource {
	return res
}
func (quietWorld) end(time.Duration) {}
func (quietWorld) leftBehind() error { return nil }
func (quietWorld) close()            {}
func (quietWorld) truth() string     { return "etcd" }

// comparable is a side's state as it compares, as the world shows it.
func (r *runner) comparable(sn snapshot) snapshot { return r.where.comparable(sn) }
