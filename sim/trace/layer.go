package trace

import "strings"

// The layers of a trace, in the order a change travels through them. Each
// event belongs to one. The layers marked "both" are recorded the same way
// for cachelab and client-go and compared after every step; the others
// exist only in cachelab, whose insides are open.
const (
	LayerEtcd      = "etcd"      // the world: writes, compactions, progress, restarts
	LayerCache     = "cache"     // the world: kube-apiserver's watch cache (held back, released)
	LayerSim       = "sim"       // the simulator's own levers: the connection, the clock, pausing
	LayerLog       = "log"       // both: what the informer logged about a handler (resync period changes)
	LayerRequest   = "request"   // both: LIST and WATCH requests and their answers
	LayerWire      = "wire"      // both: over HTTP (--server apiserver), each try of a request and the status it got
	LayerWatch     = "watch"     // both: watch events as the reflector takes them
	LayerReflector = "reflector" // cachelab: replace, resync, backoff, watch endings
	LayerTransform = "transform" // both: objects entering the queue, as the transform sees them
	LayerPop       = "pop"       // cachelab: deltas popped for processing
	LayerIndexer   = "indexer"   // both: what the step changed in the indexer
	LayerHandler   = "handler"   // both: each handler's calls (the layer is "handler/<name>")
	LayerSynced    = "synced"    // both: HasSynced turning true
	LayerWorkqueue = "workqueue" // both: a controller's workqueue (start-controller): keys added, coalesced, taken, requeued, forgotten, done
	LayerReconcile = "reconcile" // both: a controller's reconciles: the key, what it read from the cache, what it returned
	LayerShow      = "show"      // a show command's output
	LayerQueue     = "queue"     // cachelab: what its queue holds (client-go's cannot be seen)
	LayerNote      = "note"      // invariant notes and explanations
)

var layerOrder = []string{LayerEtcd, LayerCache, LayerSim, LayerLog, LayerRequest, LayerWire, LayerWatch, LayerReflector,
	LayerTransform, LayerPop, LayerIndexer, LayerHandler, LayerSynced, LayerWorkqueue, LayerReconcile, LayerShow, LayerQueue, LayerNote}

// Rank orders layers: the order a change travels.
func Rank(layer string) int {
	base, _, _ := strings.Cut(layer, "/")
	for i, l := range layerOrder {
		if l == base {
			return i
		}
	}
	return len(layerOrder)
}

// Compared reports whether a layer is recorded on both sides and
// compared. In the queue world (queueWorld) the simulator pops both
// queues itself, so pops are compared too.
func Compared(layer string, queueWorld bool) bool {
	switch layer {
	case LayerLog, LayerRequest, LayerWire, LayerWatch, LayerTransform, LayerIndexer, LayerSynced, LayerWorkqueue, LayerReconcile, LayerShow, LayerNote:
		return true
	case LayerPop:
		return queueWorld
	}
	return strings.HasPrefix(layer, LayerHandler+"/")
}

// HandlerLayer is the layer of a handler's calls.
func HandlerLayer(name string) string { return LayerHandler + "/" + name }

// printRank orders layers in a step's output. It is Rank, except that a
// controller's workqueue and reconcile lines share one, so that they print
// interleaved in the order they happened (get, reconcile, requeue, done);
// each is still compared on its own.
func printRank(layer string) int {
	if layer == LayerReconcile {
		return Rank(LayerWorkqueue)
	}
	return Rank(layer)
}
