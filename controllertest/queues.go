package controllertest

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// QueueMetrics is the metrics provider to give each of the controller's
// work queues (workqueue.TypedRateLimitingQueueConfig.MetricsProvider,
// with a Name: client-go keeps no metrics of a queue without one). The
// world reads from it whether a queue holds a key or a worker is
// reconciling one, which Settle waits for, and how many keys each queue
// has taken, which the invariants read.
func (w *World) QueueMetrics() workqueue.MetricsProvider { return w.queues }

// queueMetrics counts, per queue name, what client-go's queue reports.
// A queue made again under a name (a controller started anew) starts a
// count of its own: client-go asks for a queue's depth metric first.
type queueMetrics struct {
	mu     sync.Mutex
	queues map[string]*queueCount // the newest queue of each name
	gone   int64                  // keys taken by queues made again since
}

// queueCount is one queue's counts: its depth (keys waiting for a
// worker), keys handed to a worker (Get, the latency metric) and keys
// done (Done, the work-duration metric).
type queueCount struct {
	depth, gets, dones int64
}

func newQueueMetrics() *queueMetrics { return &queueMetrics{queues: map[string]*queueCount{}} }

func (m *queueMetrics) of(name string) *queueCount {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[name]
	if q == nil {
		q = &queueCount{}
		m.queues[name] = q
	}
	return q
}

// made starts the count of a queue made under name.
func (m *queueMetrics) made(name string) *queueCount {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.queues[name]; old != nil {
		m.gone += old.gets
	}
	q := &queueCount{}
	m.queues[name] = q
	return q
}

// busy names the queues that hold a key or whose worker is reconciling
// one, sorted, with what they hold.
func (m *queueMetrics) busy() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name, q := range m.queues {
		if q.depth > 0 || q.gets > q.dones {
			out = append(out, fmt.Sprintf("queue %q holds %d keys, %d being reconciled", name, q.depth, q.gets-q.dones))
		}
	}
	slices.Sort(out)
	return out
}

// taken is how many keys the queues have handed to workers in all: a
// key reconciled is one more.
func (m *queueMetrics) taken() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.gone
	for _, q := range m.queues {
		n += q.gets
	}
	return n
}

// counter is a metric that counts one field of a queue up (or down).
type counter struct {
	m *queueMetrics
	q *queueCount
	f func(*queueCount) *int64
}

func (c counter) Inc() { c.bump(1) }
func (c counter) Dec() { c.bump(-1) }
func (c counter) bump(d int64) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	*c.f(c.q) += d
}

// Observe counts one observation (a histogram's: a key handed out, a
// key done); the value is the wall clock's and not kept.
func (c counter) Observe(float64) { c.bump(1) }

// ignored is a metric the world does not read.
type ignored struct{}

func (ignored) Set(float64) {}
func (ignored) Inc()        {}

func (m *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return counter{m, m.made(name), func(q *queueCount) *int64 { return &q.depth }}
}

func (m *queueMetrics) NewAddsMetric(string) workqueue.CounterMetric { return ignored{} }

func (m *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return counter{m, m.of(name), func(q *queueCount) *int64 { return &q.gets }}
}

func (m *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return counter{m, m.of(name), func(q *queueCount) *int64 { return &q.dones }}
}

func (m *queueMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return ignored{} }

func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return ignored{}
}

func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return ignored{}
}
