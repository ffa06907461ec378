package metrics

import (
	"strconv"
	"sync"
)

// GaugeMetric is a value that goes up and down (a Prometheus gauge fits).
type GaugeMetric interface {
	Set(float64)
}

// HistogramMetric counts observations into buckets (a Prometheus
// histogram fits).
type HistogramMetric interface {
	Observe(float64)
}

// Provider makes the instruments of one named informer. Each method is
// called once per informer, when its queue or store is made, and only for
// a reserved id. client-go: InformerMetricsProvider.
type Provider interface {
	// NewQueuedItemMetric is the number of deltas in the queue.
	NewQueuedItemMetric(id InformerNameAndResource) GaugeMetric
	// NewProcessingLatencyMetric is the seconds each pop's processing
	// takes.
	NewProcessingLatencyMetric(id InformerNameAndResource) HistogramMetric
	// NewStoreResourceVersionMetric is the store's resourceVersion.
	NewStoreResourceVersionMetric(id InformerNameAndResource) GaugeMetric
}

var (
	global     Provider = none{}
	globalOnce sync.Once
)

// SetProvider installs p for every informer made after it that has no
// provider of its own. Only the first call has an effect.
// client-go: SetInformerMetricsProvider.
func SetProvider(p Provider) {
	globalOnce.Do(func() { global = p })
}

// Queue holds a queue's instruments.
type Queue struct {
	QueuedItems       GaugeMetric
	ProcessingLatency HistogramMetric
}

// ForQueue returns the instruments a queue for id publishes to: p's (the
// installed provider's if p is nil) when id is reserved, else ones that
// drop everything.
func ForQueue(id InformerNameAndResource, p Provider) Queue {
	if !id.Reserved() {
		return Queue{none{}, none{}}
	}
	p = orGlobal(p)
	return Queue{p.NewQueuedItemMetric(id), p.NewProcessingLatencyMetric(id)}
}

// ForStore is ForQueue for a store's resourceVersion gauge.
func ForStore(id InformerNameAndResource, p Provider) GaugeMetric {
	if !id.Reserved() {
		return none{}
	}
	return orGlobal(p).NewStoreResourceVersionMetric(id)
}

func orGlobal(p Provider) Provider {
	if p == nil {
		return global
	}
	return p
}

// ResourceVersionValue is the gauge value of a resourceVersion: its last
// 15 digits as a number (so that a float64 holds it exactly), 0 for "";
// ok is false when it is not a number.
func ResourceVersionValue(rv string) (v float64, ok bool) {
	if rv == "" {
		return 0, true
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	return float64(n), err == nil
}

// none is the instrument and provider that drop everything.
type none struct{}

func (none) Set(float64)     {}
func (none) Observe(float64) {}

func (none) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric            { return none{} }
func (none) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric { return none{} }
func (none) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric  { return none{} }
