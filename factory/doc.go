// Package factory is the shared informer factory, from scratch: the
// first thing the controller recipe makes ("create informers with the
// shared informer factory, add handlers, Start, WaitForCacheSync, run
// workers"), and the reason two controllers watching pods cost the API
// server one LIST and one WATCH, not two.
//
// It mirrors client-go v0.37.2's dynamic shared informer factory
// (dynamic/dynamicinformer/informer.go), named by resource as cachelab's
// objects are unstructured, with the options of the typed factory
// (informers/factory.go): a namespace, a tweak of the list options, a
// transform, resync periods per resource, an informer name for metrics,
// and InformerFor for an informer of one's own making.
//
// # What it promises (REFERENCE.md I1-I7)
//
//   - One informer per resource (I1): ForResource and InformerFor make it
//     on the first request and return the same one after that, so every
//     requester shares its cache, its requests and its events; each adds
//     its own handlers.
//   - Start starts what is not started (I2): each informer asked for and
//     not started yet, on a goroutine of its own, and only those. An
//     informer asked for after Start is not started by it: it sends
//     nothing and never syncs until the next Start. Start again is safe.
//   - WaitForCacheSync waits for the started ones (I3), and its answer has
//     one entry per started informer: a late one is not in it at all, so a
//     controller that checks the answer sees nothing wrong, and one that
//     waits on the late informer's own HasSynced waits forever.
//   - Shutdown waits, it does not stop (I4): it marks the factory shut
//     down (Start starts nothing after it) and waits for the informers'
//     goroutines, which end when the context given to Start ends. Called
//     before that, it blocks until then.
//   - Options apply to every informer the factory makes (I5); a name for
//     metrics is released by Shutdown (I6); and two factories share
//     nothing (I7): each has its own informers, so two factories over the
//     same resource send twice the requests.
//
// Where client-go's Start takes a stop channel, this one takes a context
// (as the typed factory's StartWithContext); its informers are cachelab's
// (package informer), built with WithInformerOptions' stack and clock.
// The differential tests (factory_diff_test.go) run this factory and
// client-go's dynamic and typed factories over the same embedded etcd and
// compare the requests each side sends, the caches, the handlers' calls,
// WaitForCacheSync's answers and what Start logs.
package factory
