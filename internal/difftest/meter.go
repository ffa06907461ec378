package difftest

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
	Log
	mu   sync.Mutex
	last map[string]float64
	seen map[string]int // observations per histogram
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter { return &Meter{last: map[string]float64{}, seen: map[string]int{}} }

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

func (m *Meter) made(what, name string, gvr schema.GroupVersionResource, reserved bool) {
	m.Add("new %s name=%s resource=%s reserved=%v", what, name, gvr.String(), reserved)
}

type gauge struct {
	m    *Meter
	what string
}

func (g gauge) Set(v float64) {
	g.m.mu.Lock()
	g.m.last[g.what] = v
	g.m.mu.Unlock()
	g.m.Add("%s %s", g.what, strconv.FormatFloat(v, 'f', -1, 64))
}

func (g gauge) Observe(v float64) {
	g.m.mu.Lock()
	g.m.seen[g.what]++
	g.m.mu.Unlock()
	g.m.Add("%s %gs", g.what, v)
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
	p.m.made(QueuedItems, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, QueuedItems}
}

func (p clMeter) NewProcessingLatencyMetric(id metrics.InformerNameAndResource) metrics.HistogramMetric {
	p.m.made(ProcessingLatency, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, ProcessingLatency}
}

func (p clMeter) NewStoreResourceVersionMetric(id metrics.InformerNameAndResource) metrics.GaugeMetric {
	p.m.made(StoreRV, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, StoreRV}
}

type cgMeter struct{ m *Meter }

func (p cgMeter) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	p.m.made(QueuedItems, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, QueuedItems}
}

func (p cgMeter) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	p.m.made(ProcessingLatency, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, ProcessingLatency}
}

func (p cgMeter) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	p.m.made(StoreRV, id.Name(), id.GroupVersionResource(), id.Reserved())
	return gauge{p.m, StoreRV}
}

var meterNames atomic.Int64

// MeteredIDs reserves one fresh name in each implementation's registry
// (the same string: the registries are separate) and pairs it with pods;
// release gives both names back.
func MeteredIDs() (cl metrics.InformerNameAndResource, cg cache.InformerNameAndResource, release func()) {
	name := fmt.Sprintf("meter-%d", meterNames.Add(1))
	clName, err := metrics.NewInformerName(name)
	if err != nil {
		panic(err) // fresh names cannot collide
	}
	cgName, err := cache.NewInformerName(name)
	if err != nil {
		panic(err)
	}
	return clName.WithResource(PodsGVR), cgName.WithResource(PodsGVR), func() { clName.Release(); cgName.Release() }
}
