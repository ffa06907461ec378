package store_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/cachelab/cachelab/internal/difftest"
)

var (
	ttl10s = expConfig{TTL: 10 * time.Second, Store: "fake"}
	ex1    = Pod("a/x", RV(1))
	ex2    = Pod("a/x", RV(2))
	ey3    = Pod("a/y", RV(3))
	ez4    = Pod("b/z", RV(4))
)

// client-go: expiration_cache.go Add, Update, Replace (X1). cachelab's
// NewExpirationCache ("cache") runs the same script; it has no channel to
// report expiries on.
func TestExpirationStampsEveryWrite(t *testing.T) {
	ops := []expOp{
		eAdd(ex1), eStep(6 * time.Second),
		eUpdate(ex2), // refreshes the timestamp
		eStep(6 * time.Second), eGet(ex1),
		eStep(5 * time.Second), eGet(ex1),
		eReplace("7", ey3, ez4), eStep(time.Second),
		eAdd(ez4), // b/z is stamped a second after a/y
		eStep(10 * time.Second), eGetByKey("a/y"), eGetByKey("b/z"),
		eStep(time.Nanosecond), eGetByKey("b/z"),
	}
	want := []string{
		"t=0s step 6s",
		"t=6s step 6s",
		"t=12s get a/x@1 → a/x@2",
		"t=12s step 5s",
		"t=17s get a/x@1 → not found, expired a/x",
		"t=17s step 1s",
		"t=18s step 10s",
		"t=28s getbykey a/y → not found, expired a/y",
		"t=28s getbykey b/z → b/z@4",
		"t=28s step 1ns",
		"t=28.000000001s getbykey b/z → not found, expired b/z",
	}
	t.Run("fake", func(t *testing.T) { runExp(t, ttl10s, ops, want...) })
	t.Run("cache", func(t *testing.T) {
		var unreported []string
		for _, line := range want {
			line, _, _ = strings.Cut(line, ", expired")
			unreported = append(unreported, line)
		}
		runExp(t, expConfig{TTL: 10 * time.Second, Store: "cache"}, ops, unreported...)
	})
}

// client-go: expiration_cache.go getOrExpire, List, ListKeys (X2)
func TestExpirationIsLazy(t *testing.T) {
	runExp(t, ttl10s, []expOp{
		eAdd(ex1), eAdd(ey3), eStep(5 * time.Second), eAdd(ez4),
		eStep(6 * time.Second),
		eListKeys(), // asks no policy: the expired keys are still there
		eGet(ey3), eListKeys(),
		eList(), eListKeys(),
		eStep(time.Hour), eListKeys(), eGetByKey("b/z"), eListKeys(),
	},
		"t=0s step 5s",
		"t=5s step 6s",
		"t=11s listkeys → [a/x a/y b/z]",
		"t=11s get a/y@3 → not found, expired a/y",
		"t=11s listkeys → [a/x b/z]",
		"t=11s list → [b/z@4], expired a/x",
		"t=11s listkeys → [b/z]",
		"t=11s step 1h0m0s",
		"t=1h0m11s listkeys → [b/z]",
		"t=1h0m11s getbykey b/z → not found, expired b/z",
		"t=1h0m11s listkeys → []",
	)
}

// client-go: expiration_cache.go TTLPolicy.IsExpired (X3)
func TestTTLPolicyBoundary(t *testing.T) {
	t.Run("an entry exactly TTL old is alive", func(t *testing.T) {
		runExp(t, ttl10s, []expOp{
			eAdd(ex1), eStep(10 * time.Second), eGet(ex1), eStep(time.Nanosecond), eGet(ex1),
		},
			"t=0s step 10s",
			"t=10s get a/x@1 → a/x@1",
			"t=10s step 1ns",
			"t=10.000000001s get a/x@1 → not found, expired a/x",
		)
	})
	for _, ttl := range []time.Duration{0, -time.Second} {
		t.Run("TTL "+ttl.String()+" expires nothing", func(t *testing.T) {
			runExp(t, expConfig{TTL: ttl, Store: "fake"}, []expOp{
				eAdd(ex1), eStep(24 * 365 * time.Hour), eList(),
			},
				"t=0s step 8760h0m0s",
				"t=8760h0m0s list → [a/x@1]",
			)
		})
	}
}

// client-go: expiration_cache.go Add, Delete, Replace, Bookmark,
// LastStoreSyncResourceVersion; thread_safe_store.go (X5, S4)
func TestExpirationResourceVersion(t *testing.T) {
	runExp(t, ttl10s, []expOp{
		eAdd(ex1), eRV(), // an entry has no metadata: Add leaves it
		eDelete(ex2), eRV(), // the deleted object's
		eDelete(ez4), eRV(), // even when nothing was stored under its key
		eDelete(Tomb{Key: "a/x"}), // not keyable by MetaNamespaceKeyFunc
		eReplace("9", ey3), eRV(),
		eStep(11 * time.Second), eGet(ey3), eRV(), // an expiry leaves it
		eBookmark("12"), eRV(), eResync(),
	},
		`t=0s rv → ""`,
		`t=0s rv → "2"`,
		`t=0s rv → "4"`,
		`t=0s delete Tombstone(a/x: nil) → error: KeyError: couldn't create key for object {Key:a/x Obj:<nil>}: object has no meta: object does not implement the Object interfaces`,
		`t=0s rv → "9"`,
		`t=0s step 11s`,
		`t=11s get a/y@3 → not found, expired a/y`,
		`t=11s rv → "9"`,
		`t=11s rv → "12"`,
	)
}

// client-go: expiration_cache.go Add, Get, Delete, Replace (X1, X7): an
// object that cannot be keyed fails the call, and a failed Replace
// changes nothing.
func TestExpirationKeyErrors(t *testing.T) {
	runExp(t, ttl10s, []expOp{
		eAdd(ex1), eAdd(Bad(1)), eGet(Bad(2)), eDelete(Bad(3)),
		eReplace("5", ey3, Bad(4)), eListKeys(), eRV(),
	},
		"t=0s add difftest.BadObject{ID:1} → error: KeyError: couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces",
		"t=0s get difftest.BadObject{ID:2} → error: KeyError: couldn't create key for object {ID:2}: object has no meta: object does not implement the Object interfaces",
		"t=0s delete difftest.BadObject{ID:3} → error: KeyError: couldn't create key for object {ID:3}: object has no meta: object does not implement the Object interfaces",
		`t=0s replace [a/y@3 difftest.BadObject{ID:4}] rv="5" → error: KeyError: couldn't create key for object {ID:4}: object has no meta: object does not implement the Object interfaces`,
		"t=0s listkeys → [a/x]",
		`t=0s rv → ""`,
	)
}

// client-go: expiration_cache_fakes.go FakeExpirationPolicy,
// NewFakeExpirationStore (X6)
func TestFakeExpirationStore(t *testing.T) {
	t.Run("reports what it deletes", func(t *testing.T) {
		runExp(t, expConfig{FakePolicy: true, Store: "fake"}, []expOp{
			eAdd(ex1), eAdd(ey3), eAdd(ez4), eKeep("a/y"),
			eList(), eListKeys(), eUnkeep("a/y"), eGet(ey3), eListKeys(),
		},
			"t=0s list → [a/y@3], expired a/x b/z",
			"t=0s listkeys → [a/y]",
			"t=0s get a/y@3 → not found, expired a/y",
			"t=0s listkeys → []",
		)
	})
	t.Run("with deletedKeys nil it deletes nothing", func(t *testing.T) {
		runExp(t, expConfig{FakePolicy: true, Store: "fake-nil"}, []expOp{
			eAdd(ex1), eAdd(ey3), eList(), eGet(ex1), eListKeys(),
			eKeep("a/x"), eGet(ex1), eList(),
		},
			"t=0s list → []",
			"t=0s get a/x@1 → not found",
			"t=0s listkeys → [a/x a/y]",
			"t=0s get a/x@1 → a/x@1",
			"t=0s list → [a/x@1]",
		)
	})
	t.Run("with a TTL and deletedKeys nil", func(t *testing.T) {
		runExp(t, expConfig{TTL: 10 * time.Second, Store: "fake-nil"}, []expOp{
			eAdd(ex1), eStep(11 * time.Second), eGet(ex1), eListKeys(),
			eUpdate(ex2), eGet(ex1),
		},
			"t=0s step 11s",
			"t=11s get a/x@1 → not found",
			"t=11s listkeys → [a/x]",
			"t=11s get a/x@1 → a/x@2",
		)
	})
}
