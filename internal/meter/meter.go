// Package meter is a metrics provider for both implementations that
// writes down what it hears: the differential tests compare two of them,
// and the simulator shows what one holds.
package meter

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/metrics"
)

// PodsGVR is the resource the metered queues and informers are named for.
var PodsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Meter is a metrics provider for one side that writes down, in order,
// every instrument made and every value published (R8, S6, P20): a
// "new <instrument> <resource>" line when an informer asks for one, then
// "<instrument> <value>" per Set or Observe. It also keeps each gauge's
// last value, which is what a scrape would see.
type Meter struct {
	mu    sync.Mutex
	lines []string
	taken int
	last  map[string]float64
	seen  map[string]int // observations per histogram
	made  map[string]bool
}

// New returns an empty Meter.
func New() *Meter {
	return &Meter{last: map[string]float64{}, seen: map[string]int{}, made: map[string]bool{}}
}

func (m *Meter) add(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, fmt.Sprintf(format, args...))
}

// Take returns the lines written since the last Take.
func (m *Meter) Take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]string(nil), m.lines[m.taken:]...)
	m.taken = len(m.lines)
	return out
}

// Value is a gauge's last value; ok is false if it was never set.
func (m *Meter) Value(instrument string) (v float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok = m.last[instrument]
	return v, ok
}

// Made reports whether an informer asked for the instrument.
func (m *Meter) Made(instrument string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.made[instrument]
}

// Observations is how many values a histogram heard.
func (m *Meter) Observations(instrument string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[instrument]
}

// Current is what a scrape would see now: each gauge's last value and
// each histogram's number of observations.
func (m *Meter) Current() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.last {
		out[k] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	for k, n := range m.seen {
		out[k] = fmt.Sprintf("%d observations", n)
	}
	return out
}

func (m *Meter) newInstrument(what, name string, gvr schema.GroupVersionResource, reserved bool) {
	m.mu.Lock()
	m.made[what] = true
	m.mu.Unlock()
	m.add("new %s name=%s resource=%s reserved=%v", what, name, gvr.String(), reserved)
}

type gauge struct {
	m    *Meter
	what string
}

func (g gauge) Set(v float64) {
	g.m.mu.Lock()
	g.m.last[g.what] = v
	g.m.mu.Unlock()
	g.m.add("%s %s", g.what, strconv.FormatFloat(v, 'f', -1, 64))
}

func (g gauge) Observe(v float64) {
	g.m.mu.Lock()
	g.m.seen[g.what]++
	g.m.mu.Unlock()
	g.m.add("%s %gs", g.what, v)
}

// The instruments' names in a Meter's lines.
const (
	QueuedItems       = "queued-items"
	ProcessingLatency = "processing-latency"
	StoreRV           = "store-resource-version"
)

// Provider is the Meter as cachelab's metrics.Provider.
func (m *Meter) Provider() metrics.Provider { return clMeter{m} }

// ClientGoProvider is the Meter as client-go's InformerMetricsProvider.
func (m *Meter) ClientGoProvider() cache.InformerMetricsProvider { return cgMeter{m} }

type clMeter struct{ m *Meter }

func (p clMeter) NewQueuedItemMetric(id metrics.InformerNameAndResource) metrics.GaugeMetric {
	p.m.newInstrument(QueuedItems, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, QueuedItems}
}

func (p clMeter) NewProcessingLatencyMetric(id metrics.InformerNameAndResource) metrics.HistogramMetric {
	p.m.newInstrument(ProcessingLatency, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, ProcessingLatency}
}

func (p clMeter) NewStoreResourceVersionMetric(id metrics.InformerNameAndResource) metrics.GaugeMetric {
	p.m.newInstrument(StoreRV, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, StoreRV}
}

type cgMeter struct{ m *Meter }

func (p cgMeter) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	p.m.newInstrument(QueuedItems, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, QueuedItems}
}

func (p cgMeter) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	p.m.newInstrument(ProcessingLatency, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, ProcessingLatency}
}

func (p cgMeter) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	p.m.newInstrument(StoreRV, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, StoreRV}
}

var reserved atomic.Int64

// Reserve reserves one fresh name, prefix-N, in each implementation's
// registry (the same string: the registries are separate) and pairs it
// with pods; release gives both names back.
func Reserve(prefix string) (cl metrics.InformerNameAndResource, cg cache.InformerNameAndResource, release func()) {
	name := fmt.Sprintf("%s-%d", prefix, reserved.Add(1))
	cl, clRelease := reserveCachelab(name)
	cg, cgRelease := reserveClientGo(name)
	return cl, cg, func() { clRelease(); cgRelease() }
}

// ReserveCachelab reserves a fresh name, prefix-N, in cachelab's registry
// only, paired with pods.
func ReserveCachelab(prefix string) (metrics.InformerNameAndResource, func()) {
	return reserveCachelab(fmt.Sprintf("%s-%d", prefix, reserved.Add(1)))
}

// ReserveClientGo reserves a fresh name, prefix-N, in client-go's
// registry only, paired with pods.
func ReserveClientGo(prefix string) (cache.InformerNameAndResource, func()) {
	return reserveClientGo(fmt.Sprintf("%s-%d", prefix, reserved.Add(1)))
}

// ReserveCachelabFor is ReserveCachelab paired with gvr.
func ReserveCachelabFor(prefix string, gvr schema.GroupVersionResource) (metrics.InformerNameAndResource, func()) {
	return reserveCachelabFor(fmt.Sprintf("%s-%d", prefix, reserved.Add(1)), gvr)
}

// ReserveClientGoFor is ReserveClientGo paired with gvr.
func ReserveClientGoFor(prefix string, gvr schema.GroupVersionResource) (cache.InformerNameAndResource, func()) {
	return reserveClientGoFor(fmt.Sprintf("%s-%d", prefix, reserved.Add(1)), gvr)
}

func reserveCachelab(name string) (metrics.InformerNameAndResource, func()) {
	return reserveCachelabFor(name, PodsGVR)
}

func reserveClientGo(name string) (cache.InformerNameAndResource, func()) {
	return reserveClientGoFor(name, PodsGVR)
}

func reserveCachelabFor(name string, gvr schema.GroupVersionResource) (metrics.InformerNameAndResource, func()) {
	n, err := metrics.NewInformerName(name)
	if err != nil {
		panic(err) // fresh names cannot collide
	}
	return n.WithResource(gvr), n.Release
}

func reserveClientGoFor(name string, gvr schema.GroupVersionResource) (cache.InformerNameAndResource, func()) {
	n, err := cache.NewInformerName(name)
	if err != nil {
		panic(err) // fresh names cannot collide
	}
	return n.WithResource(gvr), n.Release
}
