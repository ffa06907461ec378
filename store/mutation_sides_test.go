package store_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// The two sides of the harness. Each keeps its stores with one index,
// "app" (IndexByApp), and makes its mutation cache as cfg says.

func newCachelabSide(cfg MCConfig) *mcSide {
	newStore := func() *store.Cache {
		return store.New(store.Options{Indexers: store.Indexers{"app": IndexByApp}})
	}
	s := &mcSide{log: &lineLog{}}
	backing := newStore()
	var indexer store.Indexer = backing
	if cfg.SeparateIndexer {
		indexer = newStore()
	}
	s.backing, s.indexer = backing, indexer
	if cfg.NoIndexer {
		indexer = nil
	}
	var mc store.MutationCache
	if cfg.Options {
		opts := store.MutationCacheOptions{Indexer: indexer, TTL: cfg.TTL, IncludeAdds: cfg.IncludeAdds, MaxCacheSize: cfg.MaxCacheSize}
		if cfg.FakeClock {
			s.clock = clocktesting.NewFakeClock(time.Now())
			opts.Clock = s.clock
		}
		mc = store.NewIntegerResourceVersionMutationCacheWithOptions(s.log.logger(), backing, opts)
	} else {
		mc = store.NewIntegerResourceVersionMutationCache(s.log.logger(), backing, indexer, cfg.TTL, cfg.IncludeAdds)
	}
	s.mc = mc
	s.do = func(op MCOp) string {
		return doOp(s, op, mcCalls{mc.Mutation, mc.GetByKey, mc.ByIndex, mc.OnAddOrUpdate, mc.OnDelete}, false)
	}
	return s
}

func newClientGoSide(cfg MCConfig) *mcSide {
	newStore := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"app": IndexByApp})
	}
	s := &mcSide{log: &lineLog{}}
	backing := newStore()
	indexer := backing
	if cfg.SeparateIndexer {
		indexer = newStore()
	}
	s.backing, s.indexer = backing, indexer
	if cfg.NoIndexer {
		indexer = nil
	}
	var mc cache.MutationCache
	if cfg.Options {
		opts := cache.MutationCacheOptions{Indexer: indexer, TTL: cfg.TTL, IncludeAdds: cfg.IncludeAdds, MaxCacheSize: cfg.MaxCacheSize}
		mc = cache.NewIntegerResourceVersionMutationCacheWithOptions(s.log.logger(), backing, opts)
	} else {
		mc = cache.NewIntegerResourceVersionMutationCache(s.log.logger(), backing, indexer, cfg.TTL, cfg.IncludeAdds)
	}
	s.mc = mc
	s.do = func(op MCOp) string {
		return doOp(s, op, mcCalls{mc.Mutation, mc.GetByKey, mc.ByIndex, mc.OnAddOrUpdate, mc.OnDelete}, true)
	}
	return s
}

// mcCalls is a mutation cache's methods, the same on both sides.
type mcCalls struct {
	mutation      func(any)
	getByKey      func(string) (any, bool, error)
	byIndex       func(string, string) ([]any, error)
	onAddOrUpdate func(runtime.Object)
	onDelete      func(runtime.Object)
}

// doOp runs one step and renders its result.
func doOp(s *mcSide, op MCOp, mc mcCalls, clientGo bool) string {
	obj := sideValue(op.Obj, clientGo)
	switch op.Kind {
	case "mutation":
		mc.mutation(obj)
	case "get":
		got, exists, err := mc.getByKey(op.Key)
		if err != nil || !exists {
			return fmt.Sprintf("exists=%t err=%s", exists, NormErr(err))
		}
		return render(got)
	case "byindex":
		got, err := mc.byIndex(op.Index, op.Value)
		if err != nil {
			return fmt.Sprintf("%s (items %s)", NormErr(err), render(got))
		}
		return render(got)
	case "onaddorupdate":
		mc.onAddOrUpdate(obj.(runtime.Object))
	case "ondelete":
		mc.onDelete(obj.(runtime.Object))
	case "step":
		if s.clock != nil {
			s.clock.Step(op.D)
		}
	case "add", "update", "delete":
		return writeStores(s, op, obj)
	default:
		panic("unknown mutation script op " + op.Kind)
	}
	return "ok"
}

// writeStores writes obj to the backing store, the indexer, or both.
func writeStores(s *mcSide, op MCOp, obj any) string {
	targets := []any{s.backing, s.indexer}
	switch {
	case op.To == "backing" || s.backing == s.indexer:
		targets = targets[:1]
	case op.To == "indexer":
		targets = targets[1:]
	}
	res := ""
	for _, t := range targets {
		w := t.(interface {
			Add(any) error
			Update(any) error
			Delete(any) error
		})
		write := map[string]func(any) error{"add": w.Add, "update": w.Update, "delete": w.Delete}[op.Kind]
		res += fmt.Sprintf("[%s]", NormErr(write(obj)))
	}
	return res
}

// sideValue turns script values into one side's types.
func sideValue(v any, clientGo bool) any {
	switch x := v.(type) {
	case Tomb:
		if clientGo {
			return cache.DeletedFinalStateUnknown{Key: x.Key, Obj: x.Obj}
		}
		return store.DeletedFinalStateUnknown{Key: x.Key, Obj: x.Obj}
	case store.ExplicitKey:
		if clientGo {
			return cache.ExplicitKey(x)
		}
	}
	return v
}
