package sim

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/store"
)

// A planted bug is a known bug put into cachelab's side of a run, and
// only there: client-go's side runs as it is, so the comparison should
// find it. It shows what a divergence looks like, and what explore finds
// that a scenario's own faults do not (chapter 9): add-update-delete,
// whose author put no faults in it, passes with drop-relist-tombstones
// or rewatch-one-back, and explore finds each (package explore's
// tests); missed-delete-tombstone's relist shows tombstones-last at once
// (TestPlantedOrderingBugIsCaught). A run with a plant says so in its
// header; its trace is not cachelab's.

// Plant is one known bug: its name (Options.Plant, --plant) and what it
// does.
type Plant struct {
	Name  string
	About string
	// handler stands between cachelab's informer and each handler; watch
	// rewrites each WATCH cachelab's reflector sends.
	handler func(informer.ResourceEventHandler) informer.ResourceEventHandler
	watch   func(metav1.ListOptions) metav1.ListOptions
}

// Plants are the bugs a run can plant.
var Plants = []Plant{
	{Name: "drop-relist-tombstones", About: "a delete cachelab's informer only inferred at a relist (a tombstone) never reaches its handlers",
		handler: func(h informer.ResourceEventHandler) informer.ResourceEventHandler { return dropTombstones{h} }},
	{Name: "rewatch-one-back", About: "cachelab's reflector watches again from one revision before the last it had, so a re-watch gets the last event again",
		watch: oneBack},
	{Name: "tombstones-last", About: "cachelab's handlers get a relist's tombstones after its adds and updates, the order neither stack uses (P2)",
		handler: func(h informer.ResourceEventHandler) informer.ResourceEventHandler { return &tombstonesLast{to: h} }},
}

// LookupPlant is the plant of that name.
func LookupPlant(name string) (Plant, error) {
	var names []string
	for _, p := range Plants {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Plant{}, fmt.Errorf("unknown planted bug %q; the plants are: %s", name, strings.Join(names, ", "))
}

// dropTombstones is cachelab's delivery with a relist's tombstones
// dropped: the handler never hears of a delete the informer missed.
type dropTombstones struct{ to informer.ResourceEventHandler }

func (p dropTombstones) OnAdd(obj any, initial bool) { p.to.OnAdd(obj, initial) }
func (p dropTombstones) OnUpdate(old, obj any)       { p.to.OnUpdate(old, obj) }
func (p dropTombstones) OnDelete(obj any) {
	if !isTombstone(obj) {
		p.to.OnDelete(obj)
	}
}

// oneBack is a WATCH from one revision before the one asked (not a
// watch-list, nor from "" or "0").
func oneBack(o metav1.ListOptions) metav1.ListOptions {
	if rv, err := strconv.ParseInt(o.ResourceVersion, 10, 64); err == nil && rv > 1 && (o.SendInitialEvents == nil || !*o.SendInitialEvents) {
		o.ResourceVersion = strconv.FormatInt(rv-1, 10)
	}
	return o
}

// tombstonesLast is a bug planted between cachelab's informer and a
// handler: a tombstone's OnDelete is held back until the next add or
// update has been delivered, so a relist hands the handler its updates
// before its tombstones, the order neither stack ever uses.
type tombstonesLast struct {
	to   informer.ResourceEventHandler
	mu   sync.Mutex
	held []any
}

func (p *tombstonesLast) OnAdd(obj any, initial bool) {
	p.to.OnAdd(obj, initial)
	p.flush()
}

func (p *tombstonesLast) OnUpdate(oldObj, newObj any) {
	p.to.OnUpdate(oldObj, newObj)
	p.flush()
}

func (p *tombstonesLast) OnDelete(obj any) {
	if _, ok := obj.(store.DeletedFinalStateUnknown); ok {
		p.mu.Lock()
		p.held = append(p.held, obj)
		p.mu.Unlock()
		return
	}
	p.to.OnDelete(obj)
}

func (p *tombstonesLast) flush() {
	p.mu.Lock()
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, obj := range held {
		p.to.OnDelete(obj)
	}
}
