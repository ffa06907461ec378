// Package metrics gives informers a name and lets a program measure them:
// how many deltas wait in the queue, how long each pop's processing takes,
// and which resourceVersion the store is at. It mirrors what client-go
// v0.36 added to tools/cache (identity.go, informer_metrics.go).
//
// # Names
//
// A name is reserved once per process ([NewInformerName]): two informers
// that claimed the same name would publish into the same time series.
// A reserved name is then paired with the resource an informer watches
// ([InformerName.WithResource]); the first informer for a name and
// resource gets metrics, a second one for the same pair gets none (and a
// log line saying so). [InformerName.Release] gives the name back: every
// pair made from it reports Reserved false from then on, and the name may
// be reserved again. Queues and stores ask Reserved only once, when they
// are made; an instrument is expected to ask it before each update, which
// is how a stopped informer's series stop.
//
// # Metrics
//
// A [Provider] makes the three instruments for one named informer. Which
// provider an informer uses: its own (the informer's Options), else the
// one [SetProvider] installed for the whole process, else none. An
// informer without a reserved name publishes nothing, whatever the
// provider.
//
//	queued items    a gauge, set to the queue's length after every delta
//	                it queues (but a Bookmark) and every pop (RealFIFO
//	                only: client-go's DeltaFIFO has no metrics)
//	processing      a histogram of seconds per popped item or batch, from
//	                pop to the end of processing (the queue's clock:
//	                a scenario's fake one in sim)
//	store RV        a gauge, set to the store's resourceVersion whenever
//	                the store remembers one that is a number (its last
//	                15 digits, so that a float64 holds it exactly)
//
// The instruments are interfaces of one method, so a Prometheus gauge or
// histogram fits them, and so does a test's recorder.
package metrics
