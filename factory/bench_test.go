package factory_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
)

// Two controllers on pods, over an embedded etcd of n pods: sharing one
// factory's informer (one watch-list, one cache) against one factory each
// (two of both), for cachelab's factory and client-go's dynamic one. Each
// iteration starts the informers and waits until both controllers'
// handlers have had the initial list (waiting on their sync, not
// polling); requests/op counts what the server
// was asked. Compare with benchstat -col /impl, or /mode:
//
//	go test ./factory -run XXX -bench TwoControllers -count 6 -benchmem > bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /mode bench.txt
func BenchmarkTwoControllers(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			w := benchWorld(b, n)
			for _, mode := range []string{"shared", "unshared"} {
				for _, impl := range []string{"cachelab", "client-go"} {
					b.Run(fmt.Sprintf("mode=%s/impl=%s", mode, impl), func(b *testing.B) {
						before := len(w.requests(impl))
						for b.Loop() {
							twoControllers(b, w, mode, impl)
						}
						b.ReportMetric(float64(len(w.requests(impl))-before)/float64(b.N), "requests/op")
					})
				}
			}
		})
	}
}

func (w *world) requests(impl string) []string {
	if impl == "cachelab" {
		return w.cl.Lines()
	}
	return w.cg.Lines()
}

// twoControllers starts two controllers' informers, shared or each from
// its own factory, waits for both handlers to have the initial list, and
// stops everything.
func twoControllers(b *testing.B, w *world, mode, impl string) {
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	factories := 1
	if mode == "unshared" {
		factories = 2
	}
	switch impl {
	case "cachelab":
		var fs []*factory.Factory
		for range factories {
			fs = append(fs, factory.New(w.clClient, 0))
		}
		var synced []informer.DoneChecker
		for i := range 2 {
			reg, err := fs[i%factories].ForResource(pods).Informer().AddEventHandler(&counter{})
			if err != nil {
				b.Fatal(err)
			}
			synced = append(synced, reg.HasSyncedChecker())
		}
		for _, f := range fs {
			f.Start(ctx)
		}
		if !informer.WaitFor(ctx, "", synced...) {
			b.Fatal("not synced")
		}
		cancel()
		for _, f := range fs {
			f.Shutdown()
		}
	case "client-go":
		var fs []dynamicinformer.DynamicSharedInformerFactory
		for range factories {
			fs = append(fs, dynamicinformer.NewDynamicSharedInformerFactory(w.cgClient, 0))
		}
		var synced []cache.DoneChecker
		for i := range 2 {
			reg, err := fs[i%factories].ForResource(pods).Informer().AddEventHandler(&counter{})
			if err != nil {
				b.Fatal(err)
			}
			synced = append(synced, reg.HasSyncedChecker())
		}
		for _, f := range fs {
			f.Start(ctx.Done())
		}
		if !cache.WaitFor(ctx, "", synced...) {
			b.Fatal("not synced")
		}
		cancel()
		for _, f := range fs {
			f.Shutdown()
		}
	}
}

// benchWorld is a world of n pods in ten namespaces.
func benchWorld(b *testing.B, n int) *world {
	w := newWorld(b)
	for i := range n {
		w.create(b, pods, fmt.Sprintf("ns%d/p%05d", i%10, i))
	}
	return w
}
