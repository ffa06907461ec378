// Package mermaid draws a run as a Mermaid sequence diagram, the picture
// GitHub renders in any Markdown file with nothing installed
// (`cachelab run --output mermaid`, and each workshop chapter beside the
// scenario it quotes).
//
// # What it shows
//
// cachelab's events, with client-go's verdict at every step: cachelab's
// insides are open (its reflector's replaces, its queue's pops), and
// client-go's are not, so cachelab's side is the one a delta can be
// followed through. The runner compares the two after every step; the
// diagram says "client-go ✓" in the step's note when they agreed, and
// shows the first divergence, with its diff, where they did not.
//
//	participant   etcd   kube-apiserver (watch cache)   reflector   queue   indexer   handler h1 ...
//	etcd write    etcd ->> kube-apiserver: update ns0/a@4
//	watch event   kube-apiserver ->> reflector: w1 ns0/a@4 MODIFIED
//	enqueue       reflector ->> queue: ns0/a@4
//	pop           queue ->> indexer: ns0/a@4 Updated
//	indexer       Note over indexer: update ns0/a@2 -> ns0/a@4
//	handler call  indexer ->> handler h1: ns0/a@4 OnUpdate (was @2)
//
// A message is one trace event that moves a delta from one layer to the
// next; what happens inside a layer (a replace, an indexer change,
// HasSynced) is a note over it. Behind the watch cache a write to etcd is
// an arrow from etcd to kube-apiserver, whose cache hears every write
// through its own watch on etcd: that is where the events its watches
// hand on come from (a held cache hears the writes when it is released,
// in one arrow that names them). Without the watch cache kube-apiserver
// reads etcd for each request, and a write is a note over etcd.
//
// Requests go from the reflector to kube-apiserver and their answers come
// back dashed; an error answer, a watch the server closed and a watch's
// ERROR event end in a cross. Every line between kube-apiserver and a
// reflector names its watch (w1, w2...), or LIST: a step often holds two
// watches' lines, a 410 on the watch that waited for the connection
// after the request of the next, and an unnamed line reads as the nearest
// request's. Over the wire (--server apiserver) each HTTP try is a dashed
// answer too, its method and status. Each step opens with a note naming
// it and its file:line. A step with a fault (a disconnect, a compaction,
// an etcd restart, a closed watch, a held watch cache, a 4xx or 5xx
// answer) is a shaded rect, its faults marked ⚠. A show command's output
// is one note over what it shows (show store over the indexer, show
// requests over the reflector), and what the queue holds and what the
// informer logged are notes too. Within a step, lines come in the
// trace's order: the world's events, then cachelab's layer by layer, in
// the order a change travels.
//
// # Size
//
// GitHub renders Mermaid with mermaid's defaults, which refuse a diagram
// of more than maxTextSize = 50,000 characters ("Maximum text size in
// diagram exceeded") and, in graphs, more than maxEdges = 500 edges
// (https://mermaid.js.org/config/schema-docs/config.html). Render stays
// under Budget (40,000 characters, 400 messages: a margin for what
// GitHub's copy may count differently). Over it, it draws fewer events a
// step (each step keeps its faults, then its first events), says in a note
// per step how many more there were and in which layers, and says at the
// top that the diagram is aggregated; if even the step notes alone do not
// fit, it draws the steps that do and says which are left out. Validate
// checks a diagram against the subset this package writes and the limits.
package mermaid
