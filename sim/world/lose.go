package world

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/sim/trace"
)

// A watch cache that lost an object: the lever behind the scenario
// command watch-list-lose. The informer's next watch-list streams every
// object but the lost ones, and ends with the usual bookmark, while a
// LIST (from etcd, or from the cache's own store) still has them. Without
// the data consistency detector the informer syncs without them, and
// nothing in the informer notices; with it, the reflector LISTs the
// bookmark's resourceVersion and panics (REFERENCE.md V6).

// LoseFromNextWatchList makes the informer's next watch-list leave the
// object key (namespace/name) out of its initial events.
func (p *Conn) LoseFromNextWatchList(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lose == nil {
		p.lose = map[string]bool{}
	}
	p.lose[key] = true
}

// takeLost hands what LoseFromNextWatchList armed to the watch-list
// being opened, and disarms the connection.
func (p *Conn) takeLost() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	lost := p.lose
	p.lose = nil
	return lost
}

// loses reports whether the watch leaves ev out: an initial ADDED event
// of an object its watch-list was armed to lose. The event counts as
// taken from the server and done with (Delivered), and a sim line says
// what was left out.
func (w *connWatch) loses(ev watch.Event) bool {
	if !w.initial || ev.Type != watch.Added || len(w.lose) == 0 {
		return false
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil || !w.lose[m.GetNamespace()+"/"+m.GetName()] {
		return false
	}
	w.p.mu.Lock()
	w.through++
	w.p.mu.Unlock()
	w.p.rec.Record(trace.Event{Layer: trace.LayerSim, Kind: trace.KindWorld, Watch: w.id,
		Detail: fmt.Sprintf("%s leaves %s out of its initial events: a watch cache that lost it (watch-list-lose)", w.id, trace.Describe(ev.Object))})
	return true
}
