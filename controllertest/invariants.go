package controllertest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/kubeapiserver"
)

// An Invariant is what must hold of the world once a story has been
// played and the world has been quiet, or, if Always, whenever the
// world has settled after a command of the story: Check returns nil if
// it holds, else what broke it, in a sentence.
type Invariant struct {
	Name string
	// Always: a state that must never be seen, faults or not (two
	// children for one parent), checked after every command. Without
	// it the invariant is checked at the end only: while a fault lasts
	// a controller may not yet have done what it will.
	Always bool
	Check  func(e *End) error
}

// End is the world at the end of a run (or, for an Always invariant, as
// it settled after a command), for the invariants to look at: every
// object, the controller's requests so far, and what it did while the
// world was quiet (zero before the end).
type End struct {
	// Objects are every object of every resource, by resource.
	Objects map[string][]unstructured.Unstructured
	// Requests are every request of the controller, in order.
	Requests []kubeapiserver.Request
	// AllRequests are every request the server took, of every user
	// (the controller, the story, the garbage collector), in order.
	AllRequests []kubeapiserver.Request
	// QuietWrites are the controller's writes (anything but a GET) in
	// the second half of the quiet period that ends a run, when nothing
	// had happened to it for half the period.
	QuietWrites []kubeapiserver.Request
	// QuietReconciles is how many keys its queues handed to a worker in
	// that time.
	QuietReconciles int64
	// Story are the uids of the objects the story created.
	Story map[types.UID]bool
	// ManyChildren are the resources an owner may control several of
	// (Explore.ManyChildren).
	ManyChildren []string
	// Unowned are the namespaces whose objects need no owner
	// (Explore.Unowned).
	Unowned []string
}

// Builtin are the invariants every controller should keep, in the order
// they are checked; Explore.Skip leaves any of them out by name.
var Builtin = []Invariant{
	{"converges", false, converges},
	{"no-stale-writes", false, noStaleWrites},
	{"no-orphans", false, noOrphans},
	{"no-duplicates", true, noDuplicates},
	{"no-finalizer-left", false, noFinalizerLeft},
}

// converges: once the story is over and every fault healed, the
// controller stops: in the second half of the quiet period it writes
// nothing and reconciles nothing. A controller that does either has a
// key it reconciles without end (a requeue that always fails, two
// writers undoing each other).
func converges(e *End) error {
	if len(e.QuietWrites) == 0 && e.QuietReconciles == 0 {
		return nil
	}
	var ws []string
	for _, r := range e.QuietWrites[:min(3, len(e.QuietWrites))] {
		ws = append(ws, r.Method+" "+shortURI(r.URI)+" "+strconv.Itoa(r.Status))
	}
	return fmt.Errorf("still busy after the world had been quiet: %d writes (%s) and %d keys reconciled", len(e.QuietWrites), strings.Join(ws, "; "), e.QuietReconciles)
}

// noStaleWrites: no write of the controller was based on a read older
// than its own previous write of the object. Such a write is seen as an
// update or delete of the controller's answered 409 Conflict (its
// resourceVersion precondition no longer held: REFERENCE.md E2) when the
// object's last write before it was the controller's own (a cache that
// had not yet seen the controller's own update: sample-controller's
// status write, made again from its lister's older copy). A conflict
// after someone else's write (the story's update, made while the
// controller could not see it) says only that the controller's read was
// older than the world, which every controller meets and a retry
// mends. (A create's 409 is AlreadyExists, which says nothing of how old
// a read was.) What it does not see: a stale write after the
// controller's own, when someone else wrote in between.
func noStaleWrites(e *End) error {
	last := map[string]string{} // the object's path: who wrote it last
	for _, r := range e.AllRequests {
		if r.Method != http.MethodPut && r.Method != http.MethodPatch && r.Method != http.MethodDelete {
			continue
		}
		obj := objectPath(r.URI)
		switch {
		case r.Status == http.StatusConflict && r.User == ControllerUser && last[obj] == ControllerUser:
			return fmt.Errorf("%s %s was answered 409 Conflict after the controller's own write of it: a write from a stale read", r.Method, shortURI(r.URI))
		case r.Status >= 200 && r.Status < 300:
			last[obj] = r.User
		}
	}
	return nil
}

// objectPath is the path of the object a request names: its URI without
// the query, or a subresource's (status, scale).
func objectPath(uri string) string {
	path, _, _ := strings.Cut(uri, "?")
	for _, sub := range []string{"/status", "/scale"} {
		path = strings.TrimSuffix(path, sub)
	}
	return path
}

// noOrphans: every object the story did not create (the controller's)
// has an owner that exists, named by uid in its ownerReferences. One
// without is left behind when what it was made for is deleted: nothing,
// not even the garbage collector, will delete it.
func noOrphans(e *End) error {
	live := map[types.UID]bool{}
	for _, objs := range e.Objects {
		for _, o := range objs {
			live[o.GetUID()] = true
		}
	}
	for _, res := range slices.Sorted(maps.Keys(e.Objects)) {
		for _, o := range e.Objects[res] {
			if e.Story[o.GetUID()] || slices.Contains(e.Unowned, o.GetNamespace()) {
				continue
			}
			if !ownedByAny(o.GetOwnerReferences(), live) {
				return fmt.Errorf("%s %s/%s has no owner that exists: an orphan", res, o.GetNamespace(), o.GetName())
			}
		}
	}
	return nil
}

// noDuplicates: an owner controls at most one object of each resource
// (but those of Explore.ManyChildren). Two are a child made twice: a
// create from a cache that did not yet hold the first.
func noDuplicates(e *End) error {
	for _, res := range slices.Sorted(maps.Keys(e.Objects)) {
		if slices.Contains(e.ManyChildren, res) {
			continue
		}
		seen := map[types.UID]string{}
		for _, o := range e.Objects[res] {
			for _, ref := range o.GetOwnerReferences() {
				if ref.Controller == nil || !*ref.Controller {
					continue
				}
				key := o.GetNamespace() + "/" + o.GetName()
				if first, ok := seen[ref.UID]; ok {
					return fmt.Errorf("%s %s and %s are both controlled by %s %s: a child made twice", res, first, key, ref.Kind, ref.Name)
				}
				seen[ref.UID] = key
			}
		}
	}
	return nil
}

// noFinalizerLeft: no object is still being deleted at the end: each
// whose delete a finalizer held has had it taken off, by the controller
// that put it there.
func noFinalizerLeft(e *End) error {
	for _, res := range slices.Sorted(maps.Keys(e.Objects)) {
		for _, o := range e.Objects[res] {
			if o.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s %s/%s is still being deleted, held by finalizers %v", res, o.GetNamespace(), o.GetName(), o.GetFinalizers())
			}
		}
	}
	return nil
}
