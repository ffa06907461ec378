package store_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// FuzzMutationCache plays random scripts (Mutation, GetByKey, ByIndex,
// OnAddOrUpdate, OnDelete, writes to the backing store and the indexer,
// clock steps) to cachelab's and client-go's mutation caches, made in
// random ways, and compares every result, panic and log line, and the
// keys each cache holds after every step (RunMutationScript).
func FuzzMutationCache(f *testing.F) {
	for _, s := range [][]byte{
		{},
		{0x01, 0, 3, 1, 0, 1, 3, 2, 0, 2, 1},
		{0x0b, 0, 2, 2, 4, 0, 5, 3, 5, 1, 9, 1, 0, 0, 6, 1, 2, 7, 2},
		{0x34, 3, 1, 1, 2, 8, 1, 4, 0, 7, 0, 2, 1, 9, 3, 0, 11, 10, 6, 1},
		{0x80, 0, 1, 12, 1, 0, 13, 0, 5, 2, 0, 14, 3, 0, 1, 2},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		RunMutationScript(t, mcConfig(d), mcOps(d, 48))
	})
}

// mcConfig reads a configuration from one byte and a TTL choice.
func mcConfig(d *Decoder) MCConfig {
	b := d.Byte()
	cfg := MCConfig{
		IncludeAdds:     b&0x01 != 0,
		Options:         b&0x02 != 0,
		NoIndexer:       b&0x0C == 0x04,
		SeparateIndexer: b&0x0C == 0x08,
		FakeClock:       b&0x10 != 0,
	}
	if cfg.Options && b&0x20 != 0 {
		cfg.MaxCacheSize = 2
	}
	cfg.TTL = []time.Duration{0, time.Minute, time.Second, -time.Second}[int(b>>6)]
	return cfg
}

// The small worlds scripts live in.
var (
	mcKeys = []string{"a/web", "a/db", "b/api", "c"}
	mcRVs  = []string{"", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "007", "abc", "18446744073709551616"}
	mcUIDs = []string{"u1", "u2", ""}
	mcApps = []string{"web", "db", ""}
	mcStep = []time.Duration{time.Nanosecond, time.Second, 59 * time.Second, time.Minute, 5 * time.Minute}
)

// mcOps reads up to max operations.
func mcOps(d *Decoder, max int) []MCOp {
	var ops []MCOp
	for len(ops) < max && !d.Done() {
		ops = append(ops, mcOp(d))
	}
	return ops
}

func mcOp(d *Decoder) MCOp {
	switch k := d.Intn(16); {
	case k < 4:
		return MCOp{Kind: "mutation", Obj: mcValue(d)}
	case k < 6:
		return MCOp{Kind: "get", Key: mcKey(d)}
	case k < 7:
		return MCOp{Kind: "byindex", Index: []string{"app", "app", "app", "nope"}[d.Intn(4)], Value: mcApps[d.Intn(len(mcApps))]}
	case k < 10:
		return MCOp{Kind: []string{"add", "update", "delete"}[k-7], Obj: mcPod(d), To: []string{"", "", "backing", "indexer"}[d.Intn(4)]}
	case k < 12:
		return MCOp{Kind: "onaddorupdate", Obj: mcRuntimeObject(d)}
	case k < 14:
		return MCOp{Kind: "ondelete", Obj: mcRuntimeObject(d)}
	default:
		return MCOp{Kind: "step", D: mcStep[d.Intn(len(mcStep))]}
	}
}

func mcKey(d *Decoder) string {
	if d.Intn(8) == 0 {
		return "z/none"
	}
	return mcKeys[d.Intn(len(mcKeys))]
}

// mcPod reads a pod. Bad resourceVersions come one time in four.
func mcPod(d *Decoder) *unstructured.Unstructured {
	b := d.Byte()
	rv := mcRVs[int(b)%12]
	if b>>6 == 3 {
		rv = mcRVs[12+int(b>>4)%2]
	}
	return MPod(mcKeys[d.Intn(len(mcKeys))], rv, mcUIDs[d.Intn(len(mcUIDs))], mcApps[d.Intn(len(mcApps))])
}

// mcRuntimeObject is a pod, or rarely an object without metadata.
func mcRuntimeObject(d *Decoder) any {
	if d.Intn(16) == 0 {
		return &metav1.Status{}
	}
	return mcPod(d)
}

// mcValue is what a Mutation may be given: mostly pods (some of which
// an index function refuses), and sometimes an ExplicitKey, a tombstone,
// something without a key, or nil.
func mcValue(d *Decoder) any {
	switch d.Intn(16) {
	case 0:
		return store.ExplicitKey(mcKey(d))
	case 1:
		return Tomb{Key: mcKey(d), Obj: mcPod(d)}
	case 2:
		return Bad(d.Intn(3))
	case 3:
		return nil
	case 4:
		p := mcPod(d)
		p.SetLabels(map[string]string{"app": "web", LabelIndexFails: "y"})
		return p
	case 5:
		return &metav1.Status{}
	}
	return mcPod(d)
}
