package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// Builders for mutation scripts.
func mutate(obj any) MCOp          { return MCOp{Kind: "mutation", Obj: obj} }
func getKey(key string) MCOp       { return MCOp{Kind: "get", Key: key} }
func byIndex(index, v string) MCOp { return MCOp{Kind: "byindex", Index: index, Value: v} }
func storeAdd(obj any) MCOp        { return MCOp{Kind: "add", Obj: obj} }
func storeUpdate(obj any) MCOp     { return MCOp{Kind: "update", Obj: obj} }
func storeDelete(obj any) MCOp     { return MCOp{Kind: "delete", Obj: obj} }
func onAddOrUpdate(obj any) MCOp   { return MCOp{Kind: "onaddorupdate", Obj: obj} }
func onDelete(obj any) MCOp        { return MCOp{Kind: "ondelete", Obj: obj} }
func stepBy(d time.Duration) MCOp  { return MCOp{Kind: "step", D: d} }

// runMC plays ops to both sides (RunMutationScript fails at the first
// difference) and checks the transcript against want.
func runMC(t *testing.T, cfg MCConfig, ops []MCOp, want ...string) {
	t.Helper()
	got := RunMutationScript(t, cfg, ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

// Objects of the stories: web at resourceVersions 2 to 5 (UID u1), and
// its successor of the same name (UID u2).
var (
	web2 = MPod("a/web", "2", "u1", "web")
	web3 = MPod("a/web", "3", "u1", "web")
	web4 = MPod("a/web", "4", "u1", "web")
	web5 = MPod("a/web", "5", "u1", "web")
	new6 = MPod("a/web", "6", "u2", "web")
	db7  = MPod("a/db", "7", "u3", "db")
	api8 = MPod("b/api", "8", "u4", "web")
)

// client-go: mutation_cache.go Mutation, GetByKey, newerObject (M1, M2):
// a write read back at once, while the store still has the version
// before it; once the store has it, the store answers and the copy goes;
// an older write is ignored.
func TestMutationReadYourWrite(t *testing.T) {
	runMC(t, MCConfig{}, []MCOp{
		storeAdd(web2), mutate(web3), getKey("a/web"), getKey("a/web"),
		storeUpdate(web3), getKey("a/web"),
		mutate(web5), mutate(web4), getKey("a/web"), mutate(web5), getKey("a/nope"),
	},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
		"update a/web@3 uid=u1 app=web → [] | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys []",
		"mutation a/web@5 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → a/web@5 uid=u1 app=web | keys [a/web]",
		"mutation a/web@5 uid=u1 app=web → ok | keys [a/web]",
		"get a/nope → exists=false err= | keys [a/web]",
	)
}

// client-go: mutation_cache.go, apimachinery util/cache LRUExpireCache
// (M1): a copy is answered for the TTL, up to and including its last
// instant, and not a nanosecond after; a TTL of 0 means 5 minutes.
// Reading a copy does not extend it; a new Mutation does.
func TestMutationTTL(t *testing.T) {
	for _, cfg := range []MCConfig{{TTL: time.Minute}, {Options: true, FakeClock: true, TTL: time.Minute}} {
		runMC(t, cfg, []MCOp{
			storeAdd(web2), mutate(web3), stepBy(30 * time.Second), getKey("a/web"),
			stepBy(30 * time.Second), getKey("a/web"), stepBy(time.Nanosecond), getKey("a/web"),
			mutate(web4), stepBy(59 * time.Second), mutate(web5), stepBy(59 * time.Second), getKey("a/web"),
		},
			"add a/web@2 uid=u1 app=web → [] | keys []",
			"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
			"step 30s → ok | keys [a/web]",
			"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
			"step 30s → ok | keys [a/web]",
			"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
			"step 1ns → ok | keys []",
			"get a/web → a/web@2 uid=u1 app=web | keys []",
			"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
			"step 59s → ok | keys [a/web]",
			"mutation a/web@5 uid=u1 app=web → ok | keys [a/web]",
			"step 59s → ok | keys [a/web]",
			"get a/web → a/web@5 uid=u1 app=web | keys [a/web]",
		)
	}
	runMC(t, MCConfig{}, []MCOp{
		storeAdd(web2), mutate(web3), stepBy(5 * time.Minute), getKey("a/web"), stepBy(time.Nanosecond), getKey("a/web"),
	},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"step 5m0s → ok | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
		"step 1ns → ok | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
	)
}

// client-go: mutation_cache.go GetByKey (M3): a key the store does not
// have. Without IncludeAdds it is not found, whatever the cache holds.
// With it the copy is answered, once: the copy is compared with itself,
// is not newer, and is dropped by that answer. A copy that is not a
// runtime.Object is answered as it is, and kept.
func TestMutationKeyNotInStore(t *testing.T) {
	ops := []MCOp{
		mutate(web3), getKey("a/web"), getKey("a/web"),
		mutate(store.ExplicitKey("b/explicit")), getKey("b/explicit"), getKey("b/explicit"),
	}
	runMC(t, MCConfig{}, ops,
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"mutation explicit(b/explicit) → ok | keys [a/web b/explicit]",
		"get b/explicit → exists=false err= | keys [a/web b/explicit]",
		"get b/explicit → exists=false err= | keys [a/web b/explicit]",
	)
	runMC(t, MCConfig{IncludeAdds: true}, ops,
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys []",
		"get a/web → exists=false err= | keys []",
		"mutation explicit(b/explicit) → ok | keys [b/explicit]",
		"get b/explicit → explicit(b/explicit) | keys [b/explicit]",
		"get b/explicit → explicit(b/explicit) | keys [b/explicit]",
	)
}

// client-go: mutation_cache.go ByIndex (M4): the indexer's objects in
// key order, each replaced by a newer copy (and an older copy dropped);
// with IncludeAdds the copies of keys the indexer does not have follow,
// least recently used first, and stay (ByIndex does not compare them).
// An index function that fails on a copy (an ExplicitKey has no labels)
// leaves it out, logged at V(4).
func TestMutationByIndex(t *testing.T) {
	ops := []MCOp{
		storeAdd(web2), storeAdd(db7), mutate(web4), mutate(MPod("a/db", "5", "u3", "db")),
		byIndex("app", "web"), byIndex("app", "db"),
		mutate(api8), mutate(MPod("c", "9", "u5", "web")), mutate(store.ExplicitKey("b/explicit")),
		byIndex("app", "web"), byIndex("app", "web"), getKey("b/api"), byIndex("app", "web"),
	}
	runMC(t, MCConfig{}, ops,
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"add a/db@7 uid=u3 app=db → [] | keys []",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/db@5 uid=u3 app=db → ok | keys [a/web a/db]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys [a/db a/web]",
		"byindex app=db → [a/db@7 uid=u3 app=db] | keys [a/web]",
		"mutation b/api@8 uid=u4 app=web → ok | keys [a/web b/api]",
		"mutation c@9 uid=u5 app=web → ok | keys [a/web b/api c]",
		"mutation explicit(b/explicit) → ok | keys [a/web b/api c b/explicit]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys [b/api c b/explicit a/web]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys [b/api c b/explicit a/web]",
		"get b/api → exists=false err= | keys [b/api c b/explicit a/web]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys [b/api c b/explicit a/web]",
	)
	runMC(t, MCConfig{IncludeAdds: true}, ops,
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"add a/db@7 uid=u3 app=db → [] | keys []",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/db@5 uid=u3 app=db → ok | keys [a/web a/db]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys [a/db a/web]",
		"byindex app=db → [a/db@7 uid=u3 app=db] | keys [a/web]",
		"mutation b/api@8 uid=u4 app=web → ok | keys [a/web b/api]",
		"mutation c@9 uid=u5 app=web → ok | keys [a/web b/api c]",
		"mutation explicit(b/explicit) → ok | keys [a/web b/api c b/explicit]",
		"byindex app=web → [a/web@4 uid=u1 app=web b/api@8 uid=u4 app=web c@9 uid=u5 app=web] | log V(4) \"Unable to calculate an index entry for mutation cache entry\" [key b/explicit err not an object: ExplicitKey] | keys [b/api c b/explicit a/web]",
		"byindex app=web → [a/web@4 uid=u1 app=web b/api@8 uid=u4 app=web c@9 uid=u5 app=web] | log V(4) \"Unable to calculate an index entry for mutation cache entry\" [key b/explicit err not an object: ExplicitKey] | keys [b/api c b/explicit a/web]",
		"get b/api → b/api@8 uid=u4 app=web | keys [c b/explicit a/web]",
		"byindex app=web → [a/web@4 uid=u1 app=web c@9 uid=u5 app=web] | log V(4) \"Unable to calculate an index entry for mutation cache entry\" [key b/explicit err not an object: ExplicitKey] | keys [c b/explicit a/web]",
	)
}

// client-go: mutation_cache.go ByIndex (M4): its errors. No indexer; an
// index the indexer does not have (the indexer's own error).
func TestMutationByIndexErrors(t *testing.T) {
	runMC(t, MCConfig{NoIndexer: true}, []MCOp{storeAdd(web2), byIndex("app", "web"), getKey("a/web")},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"byindex app=web → error: no indexer has been provided to the mutation cache (items []) | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
	)
	runMC(t, MCConfig{IncludeAdds: true}, []MCOp{storeAdd(web2), mutate(api8), byIndex("nope", "web")},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation b/api@8 uid=u4 app=web → ok | keys [b/api]",
		"byindex nope=web → error: Index with name nope does not exist (items []) | keys [b/api]",
	)
}

// client-go: mutation_cache.go ByIndex, GetByKey (M2, M4): the backing
// store and the indexer are separate. GetByKey reads the store, ByIndex
// the indexer, each compared with the same copies.
func TestMutationSeparateIndexer(t *testing.T) {
	runMC(t, MCConfig{SeparateIndexer: true, IncludeAdds: true}, []MCOp{
		{Kind: "add", Obj: web2, To: "backing"}, {Kind: "add", Obj: web4, To: "indexer"}, mutate(web3),
		getKey("a/web"), byIndex("app", "web"), getKey("a/web"),
		{Kind: "add", Obj: db7, To: "indexer"}, mutate(MPod("a/db", "8", "u3", "db")), getKey("a/db"), byIndex("app", "db"),
	},
		"add a/web@2 uid=u1 app=web (backing) → [] | keys []",
		"add a/web@4 uid=u1 app=web (indexer) → [] | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
		"byindex app=web → [a/web@4 uid=u1 app=web] | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
		"add a/db@7 uid=u3 app=db (indexer) → [] | keys []",
		"mutation a/db@8 uid=u3 app=db → ok | keys [a/db]",
		"get a/db → a/db@8 uid=u3 app=db | keys []",
		"byindex app=db → [a/db@7 uid=u3 app=db] | keys []",
	)
}

// client-go: mutation_cache.go OnAddOrUpdate (M5): the informer's object
// at least as new as the copy drops it, whatever its UID; an older one
// leaves it. A tombstone is dropped the same way.
func TestMutationOnAddOrUpdate(t *testing.T) {
	runMC(t, MCConfig{}, []MCOp{
		storeAdd(web2), mutate(web4), onAddOrUpdate(web3), getKey("a/web"),
		onAddOrUpdate(MPod("a/web", "4", "u9", "web")), getKey("a/web"),
		mutate(web5), onAddOrUpdate(new6), getKey("a/web"),
		onDelete(new6), onAddOrUpdate(web5), onAddOrUpdate(new6),
	},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"onaddorupdate a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → a/web@4 uid=u1 app=web | keys [a/web]",
		"onaddorupdate a/web@4 uid=u9 app=web → ok | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
		"mutation a/web@5 uid=u1 app=web → ok | keys [a/web]",
		"onaddorupdate a/web@6 uid=u2 app=web → ok | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
		"ondelete a/web@6 uid=u2 app=web → ok | keys [a/web]",
		"onaddorupdate a/web@5 uid=u1 app=web → ok | keys [a/web]",
		"onaddorupdate a/web@6 uid=u2 app=web → ok | keys []",
	)
}

// client-go: mutation_cache.go OnDelete, Mutation (M6): the informer saw
// web deleted. The copy goes if it is of the same object (UID) or not
// newer than the deletion, and a tombstone takes its place, which makes a
// late Mutation of the deleted object (its resourceVersion, or its UID)
// be ignored; a newer object of another UID is taken. A copy of another
// UID newer than the deletion (created after it) is kept. An object
// without metadata is ignored.
func TestMutationOnDelete(t *testing.T) {
	ops := []MCOp{
		storeAdd(web2), mutate(web4), storeDelete(web3), onDelete(web3), getKey("a/web"),
		mutate(web4), mutate(MPod("a/web", "3", "u9", "web")), mutate(MPod("a/web", "9", "u1", "web")), getKey("a/web"),
		mutate(new6), getKey("a/web"),
		onDelete(MPod("a/web", "5", "u8", "web")), getKey("a/web"), byIndex("app", "web"),
		onDelete(db7), mutate(MPod("a/db", "7", "u3", "db")), mutate(MPod("a/db", "8", "u3", "db")), byIndex("app", "db"),
		onDelete(&metav1.Status{}),
	}
	runMC(t, MCConfig{}, ops,
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"delete a/web@3 uid=u1 app=web → [] | keys [a/web]",
		"ondelete a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/web@3 uid=u9 app=web → ok | keys [a/web]",
		"mutation a/web@9 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"mutation a/web@6 uid=u2 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"ondelete a/web@5 uid=u8 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"byindex app=web → [] | keys [a/web]",
		"ondelete a/db@7 uid=u3 app=db → ok | keys [a/web a/db]",
		"mutation a/db@7 uid=u3 app=db → ok | keys [a/web a/db]",
		"mutation a/db@8 uid=u3 app=db → ok | keys [a/web a/db]",
		"byindex app=db → [] | keys [a/web a/db]",
		"ondelete *v1.Status → ok | keys [a/web a/db]",
	)
	runMC(t, MCConfig{IncludeAdds: true}, ops,
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"delete a/web@3 uid=u1 app=web → [] | keys [a/web]",
		"ondelete a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"mutation a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/web@3 uid=u9 app=web → ok | keys [a/web]",
		"mutation a/web@9 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"mutation a/web@6 uid=u2 app=web → ok | keys [a/web]",
		"get a/web → a/web@6 uid=u2 app=web | keys []",
		"ondelete a/web@5 uid=u8 app=web → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"byindex app=web → [] | keys [a/web]",
		"ondelete a/db@7 uid=u3 app=db → ok | keys [a/web a/db]",
		"mutation a/db@7 uid=u3 app=db → ok | keys [a/web a/db]",
		"mutation a/db@8 uid=u3 app=db → ok | keys [a/web a/db]",
		"byindex app=db → [] | keys [a/web a/db]",
		"ondelete *v1.Status → ok | keys [a/web a/db]",
	)
}

// client-go: mutation_cache.go newerObject (M6): a tombstone is answered
// where the store has an object older than the deletion, which an
// informer's store cannot have, but a store fed out of step can. Both
// libraries then return their own tombstone type.
func TestMutationTombstoneAnswered(t *testing.T) {
	runMC(t, MCConfig{}, []MCOp{
		storeAdd(web2), onDelete(web4), getKey("a/web"), byIndex("app", "web"),
	},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"ondelete a/web@4 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → tombstone a/web@4 uid=u1 | keys [a/web]",
		"byindex app=web → [tombstone a/web@4 uid=u1] | keys [a/web]",
	)
}

// client-go: mutation_cache.go etcdObjectVersioner (M7): resourceVersions
// are compared as unsigned integers ("" is 0, "007" is 7), and only when
// there are two to compare. One that is not an integer panics then, with
// strconv's error: in GetByKey, ByIndex, Mutation, OnAddOrUpdate and
// OnDelete alike. The cache stays usable after a panic (its lock is
// released on the way out).
func TestMutationNonIntegerVersions(t *testing.T) {
	bad := MPod("a/web", "abc", "u1", "web")
	huge := MPod("a/web", "18446744073709551616", "u1", "web")
	runMC(t, MCConfig{IncludeAdds: true}, []MCOp{
		storeAdd(bad), getKey("a/web"), mutate(web3), getKey("a/web"), byIndex("app", "web"),
		storeUpdate(web2), getKey("a/web"), mutate(bad), mutate(huge), onAddOrUpdate(huge), onDelete(bad),
		mutate(MPod("b/api", "", "u4", "web")), mutate(MPod("b/api", "007", "u4", "web")), mutate(MPod("b/api", "6", "u4", "web")),
		storeAdd(MPod("b/api", "6", "u4", "web")), getKey("b/api"),
	},
		"add a/web@abc uid=u1 app=web → [] | keys []",
		"get a/web → a/web@abc uid=u1 app=web | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"get a/web → panic: strconv.ParseUint: parsing \"abc\": invalid syntax | keys [a/web]",
		"byindex app=web → panic: strconv.ParseUint: parsing \"abc\": invalid syntax | keys [a/web]",
		"update a/web@2 uid=u1 app=web → [] | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
		"mutation a/web@abc uid=u1 app=web → panic: strconv.ParseUint: parsing \"abc\": invalid syntax | keys [a/web]",
		"mutation a/web@18446744073709551616 uid=u1 app=web → panic: strconv.ParseUint: parsing \"18446744073709551616\": value out of range | keys [a/web]",
		"onaddorupdate a/web@18446744073709551616 uid=u1 app=web → panic: strconv.ParseUint: parsing \"18446744073709551616\": value out of range | keys [a/web]",
		"ondelete a/web@abc uid=u1 app=web → panic: strconv.ParseUint: parsing \"abc\": invalid syntax | keys [a/web]",
		"mutation b/api@ uid=u4 app=web → ok | keys [a/web b/api]",
		"mutation b/api@007 uid=u4 app=web → ok | keys [a/web b/api]",
		"mutation b/api@6 uid=u4 app=web → ok | keys [a/web b/api]",
		"add b/api@6 uid=u4 app=web → [] | keys [a/web b/api]",
		"get b/api → b/api@007 uid=u4 app=web | keys [a/web b/api]",
	)
}

// client-go: mutation_cache.go Mutation, OnAddOrUpdate, OnDelete (M1):
// what cannot be keyed is reported to utilruntime's error handlers with
// the cache's logger and ignored; OnDelete ignores an object without
// metadata before it tries.
func TestMutationUnkeyable(t *testing.T) {
	runMC(t, MCConfig{}, []MCOp{
		mutate(Bad(1)), mutate(nil), mutate("a string"), onAddOrUpdate(&metav1.Status{}), onDelete(&metav1.Status{}),
		mutate(Tomb{Key: "a/web", Obj: web2}), getKey("a/web"), storeAdd(web3), getKey("a/web"),
	},
		"mutation bad(1) → ok | log error \"DeletionHandlingMetaNamespaceKeyFunc\" err=object has no meta: object does not implement the Object interfaces [] | keys []",
		"mutation nil → ok | log error \"DeletionHandlingMetaNamespaceKeyFunc\" err=object has no meta: object does not implement the Object interfaces [] | keys []",
		"mutation string(a string) → ok | log error \"DeletionHandlingMetaNamespaceKeyFunc\" err=object has no meta: object does not implement the Object interfaces [] | keys []",
		"onaddorupdate *v1.Status → ok | log error \"DeletionHandlingMetaNamespaceKeyFunc\" err=object has no meta: object does not implement the Object interfaces [] | keys []",
		"ondelete *v1.Status → ok | keys []",
		"mutation dfsu(a/web, a/web@2 uid=u1 app=web) → ok | keys [a/web]",
		"get a/web → exists=false err= | keys [a/web]",
		"add a/web@3 uid=u1 app=web → [] | keys [a/web]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/web]",
	)
}

// client-go: mutation_cache.go NewIntegerResourceVersionMutationCacheWithOptions,
// apimachinery LRUExpireCache (M1): with MaxCacheSize 2 a third copy
// evicts the least recently used, and a read makes a copy recently used.
func TestMutationCacheSize(t *testing.T) {
	runMC(t, MCConfig{Options: true, MaxCacheSize: 2, IncludeAdds: true}, []MCOp{
		storeAdd(web2), storeAdd(db7), mutate(web3), mutate(MPod("a/db", "8", "u3", "db")), getKey("a/web"),
		mutate(api8), getKey("a/db"), getKey("a/web"), byIndex("app", "web"),
	},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"add a/db@7 uid=u3 app=db → [] | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys [a/web]",
		"mutation a/db@8 uid=u3 app=db → ok | keys [a/web a/db]",
		"get a/web → a/web@3 uid=u1 app=web | keys [a/db a/web]",
		"mutation b/api@8 uid=u4 app=web → ok | keys [a/web b/api]",
		"get a/db → a/db@7 uid=u3 app=db | keys [a/web b/api]",
		"get a/web → a/web@3 uid=u1 app=web | keys [b/api a/web]",
		"byindex app=web → [a/web@3 uid=u1 app=web b/api@8 uid=u4 app=web] | keys [b/api a/web]",
	)
}

// client-go: mutation_cache.go, apimachinery LRUExpireCache (M1): a
// negative TTL expires a copy at once (it is never answered), and a
// negative MaxCacheSize panics when the cache is made.
func TestMutationNegativeSettings(t *testing.T) {
	runMC(t, MCConfig{TTL: -time.Second}, []MCOp{storeAdd(web2), mutate(web3), getKey("a/web")},
		"add a/web@2 uid=u1 app=web → [] | keys []",
		"mutation a/web@3 uid=u1 app=web → ok | keys []",
		"get a/web → a/web@2 uid=u1 app=web | keys []",
	)
	cl := CatchPanic(func() {
		store.NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), store.NewStore(store.MetaNamespaceKeyFunc), store.MutationCacheOptions{MaxCacheSize: -1})
	})
	cg := CatchPanic(func() {
		cache.NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), cache.NewStore(cache.MetaNamespaceKeyFunc), cache.MutationCacheOptions{MaxCacheSize: -1})
	})
	if cl != cg || cl != "maxSize must be > 0" {
		t.Errorf("MaxCacheSize -1: cachelab panics %q, client-go %q", cl, cg)
	}
}
