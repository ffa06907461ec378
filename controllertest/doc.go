// Package controllertest runs your controller, unchanged, in a world
// of real kube-apiserver over a real etcd, in your test's process, and
// explores it under every placement of the faults that world has:
//
//	your controller ──(World.Config: HTTPS over an in-memory network)──▶ kube-apiserver ──▶ watch cache ──▶ etcd
//	   informers, queue (World.Clock, World.QueueMetrics), reconcile       k8s.io/apiserver's handlers, registry and cacher
//
// A World (Start) is an embedded etcd on loopback, kube-apiserver's
// storage over it for each resource (with its watch cache, as in every
// cluster), and kube-apiserver's generic API server serving them over
// HTTPS (package kubeapiserver: k8s.io/apiserver's handler chain, REST
// handlers and generic registry, not a re-implementation), with
// namespaces, finalizers (REFERENCE.md E18), custom resources from a
// CRD manifest, pruned, defaulted and validated by apiextensions-
// apiserver's own code (E20), and a garbage collector (E19, gc.go).
// Config is a *rest.Config for it: build your clients from it. Run
// starts your controller; every goroutine it starts is the world's to
// watch.
//
// A Story is what happens around the controller, in cachelab's scenario
// language: writes (create foos ns0/f spec=(replicas=2)), moves of the
// world's clock (advance 30s), and faults. Explore plays it once without
// faults and once per placement of each fault (Faults: disconnect,
// close-watch, compact, restart-apiserver, partition, stop), each in a fresh
// world with the controller started anew, and checks invariants at the
// end: Builtin's (it converges, no update from a stale read, no orphan,
// no child made twice, no finalizer left) and yours, Go functions over
// every object and the controller's requests. The Report groups the
// placements by what they broke, each group with the trace of its first
// placement and the story with its fault written in, a file that
// ParseStory reads back.
//
// # Knowing when the controller is done
//
// Between two steps the world settles (Settle): nothing will happen until
// the clock moves or someone writes. It knows this without a quiet
// period, by counting what is on its way: every byte on the in-memory
// network (internal/memnet), every request in the server, every key in
// a queue that reports to QueueMetrics, every event in a watch cache
// (apistorage's Quiescent); and by looking, in one stack dump taken with
// the world stopped, at every goroutine of the server's connections and
// of the controller (Run labels them, and goroutines inherit labels):
// all must be parked on a channel, a condition or the network. Then the
// server lets the next event of the controller's watches go (package
// kubeapiserver's Gate), the one at the lowest resourceVersion, and the
// world settles again: the controller handles one event at a time, in
// one order, the same in every run, however loaded the machine. What the
// world cannot order is inside the controller: an event its informer
// turns into several keys (a relist that finds two objects gone) races
// its own worker, which may take the first key before the second is
// added and reconcile twice where it otherwise would once. An idempotent
// reconcile keeps its verdict; its trace may differ.
//
// # Time
//
// The world's time is its own clock (World.Clock), which moves only when
// the story advances it, stopping at each timer due on it. Give it to
// your work queues (workqueue.TypedRateLimitingQueueConfig.Clock, with
// Name and MetricsProvider: QueueMetrics): a requeue after a backoff then
// waits on the world's time, and an exploration's quiet period (Explore.
// Quiet, two minutes of it) costs nothing. A controller-runtime Manager
// takes such a queue through controller.Options.NewQueue (its default,
// the priority queue, takes no clock); examples/foocr runs one.
//
// Some waits are on the wall clock and cannot be moved: client-go's
// reflector backs off 0.8 to 1.6 s after a watch fails (its informers
// take no clock), cache.WaitForCacheSync polls every 100 ms, a client's
// rate limiter waits for a token. The world knows these by their frames
// (settle.go) and waits them out (Options.RealWait bounds it): a backoff
// before it lets any event go, since which reflector ends its backoff
// first is drawn at random; a WaitForCacheSync once every watch has sent
// its initial events (kubeapiserver's Gate.Listing), since its next
// tick starts the workers. A timer of your own code on the wall clock
// (time.After in a select, a queue given no clock) is not seen: the world
// may settle and move on while it runs, and what it does then lands in
// a later step, or is missed. time.Sleep is seen, and waited out.
//
// # A controller in another process
//
// With Options.Outside the server also listens on loopback TCP for a
// controller in another process, any binary in any language: Command
// starts one per run with a kubeconfig of the world's (WriteKubeconfig),
// Attach waits for one someone else starts. The world cannot see such a
// controller's goroutines or queues; it asks the kernel instead
// (outside.go): bytes in its sockets, its threads' states, a short
// timer it waits on in epoll, and the watches it had before a fault. A
// longer timer of its own (a RequeueAfter of seconds, a resync period)
// runs on the wall clock, unseen. cachelab serve and explore --serve
// are this, from the command line.
//
// # What the world is not
//
// The server answers in JSON (Config asks for it; a typed clientset in
// another process may send protobuf bodies of built-in resources, which
// it takes), serves no PATCH, no subresource but a custom resource's
// status (when its definition has one: GET and PUT of /status, the
// object's own PUT then keeping the stored status), no server-side
// apply; a pod is stored as sent, and no node runs it; there is no
// controller of its own but the garbage collector (a Deployment makes no ReplicaSet). Requests
// are those of one controller user, in system:masters.
//
// The from-scratch packages never import this one; it is a world for a
// user's code, as sim is for cachelab's informers.
package controllertest
