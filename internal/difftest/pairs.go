package difftest

import (
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/internal/meter"
)

// QueueConfig selects a queue's options; the same config builds both sides.
type QueueConfig struct {
	Known        bool // give the queue KnownObjects (a Known per side)
	EmitReplaced bool // DeltaFIFO: EmitDeltaTypeReplaced
	Transform    bool // use Transform as the queue's transformer
	Atomic       bool // RealFIFO: AtomicEvents
	Unlock       bool // RealFIFO: UnlockWhileProcessing
	Bookmarks    bool // RealFIFO: EmitDeltaTypeBookmark
	Metered      bool // RealFIFO: a reserved Identifier and a Meter per side
}

func (c QueueConfig) transformer() func(any) (any, error) {
	if c.Transform {
		return Transform
	}
	return nil
}

// FIFOPair builds a cachelab FIFO and a client-go FIFO.
func FIFOPair() func() (cl, cg Side) {
	return func() (Side, Side) {
		cl := fifo.New(fifo.Options{})
		cg := cache.NewFIFO(cache.MetaNamespaceKeyFunc)
		return Side{Q: ClFIFO{cl}, Len: cl.Len}, Side{Q: CgFIFO{cg}, ClientGo: true}
	}
}

// DeltaFIFOPair builds a cachelab DeltaFIFO and a client-go DeltaFIFO.
func DeltaFIFOPair(c QueueConfig) func() (cl, cg Side) {
	return func() (Side, Side) {
		clOpts := deltafifo.DeltaFIFOOptions{EmitDeltaTypeReplaced: c.EmitReplaced, Transformer: c.transformer()}
		cgOpts := cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, EmitDeltaTypeReplaced: c.EmitReplaced, Transformer: c.transformer()}
		var clKnown, cgKnown *Known
		if c.Known {
			clKnown, cgKnown = NewKnown(), NewKnown()
			clOpts.KnownObjects, cgOpts.KnownObjects = clKnown, cgKnown
		}
		cl := deltafifo.NewDeltaFIFO(clOpts)
		cg := cache.NewDeltaFIFOWithOptions(cgOpts)
		return Side{Q: ClDeltaFIFO{cl}, Known: clKnown, Len: cl.Len}, Side{Q: CgDeltaFIFO{cg}, Known: cgKnown, ClientGo: true}
	}
}

// RealFIFOPair builds a cachelab RealFIFO and a client-go RealFIFO.
// Known is implied by !Atomic, as both constructors require.
func RealFIFOPair(c QueueConfig) func() (cl, cg Side) {
	return func() (Side, Side) {
		clOpts := deltafifo.RealFIFOOptions{Transformer: c.transformer(), AtomicEvents: c.Atomic,
			UnlockWhileProcessing: c.Unlock, EmitDeltaTypeBookmark: c.Bookmarks}
		cgOpts := cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, Transformer: c.transformer(),
			AtomicEvents: c.Atomic, UnlockWhileProcessing: c.Unlock, EmitDeltaTypeBookmark: c.Bookmarks}
		var clKnown, cgKnown *Known
		if !c.Atomic {
			clKnown, cgKnown = NewKnown(), NewKnown()
			clOpts.KnownObjects, cgOpts.KnownObjects = clKnown, cgKnown
		}
		var clMeter, cgMeter *meter.Meter
		if c.Metered {
			clMeter, cgMeter = meter.New(), meter.New()
			clOpts.Identifier, cgOpts.Identifier, _ = meter.Reserve("meter") // fresh names, left reserved
			clOpts.MetricsProvider, cgOpts.MetricsProvider = clMeter.Provider(), cgMeter.ClientGoProvider()
		}
		cl := deltafifo.NewRealFIFO(clOpts)
		cg := cache.NewRealFIFOWithOptions(cgOpts)
		return Side{Q: ClRealFIFO{cl}, Known: clKnown, Len: cl.Len, Meter: clMeter},
			Side{Q: CgRealFIFO{cg}, Known: cgKnown, ClientGo: true, Meter: cgMeter}
	}
}
