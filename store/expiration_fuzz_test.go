package store_test

import (
	"testing"
	"time"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// FuzzExpirationCache runs random scripts of writes, reads, bookmarks and
// clock steps (and, under the fake policy, changes to NeverExpire) against
// cachelab's and client-go's expiration caches on one fake clock, with a
// TTL policy or the fake one, through NewFakeExpirationStore on both sides
// (with or without deletedKeys) or cachelab's NewExpirationCache. Every
// result is compared, the keys reported as expired included, and the keys
// and resourceVersion after every step (X1–X7).
func FuzzExpirationCache(f *testing.F) {
	for _, s := range [][]byte{
		{},
		{0, 2, 0, 1, 0, 8, 3, 12, 5, 4, 1, 0, 12, 6, 4, 1},
		{9, 1, 0, 1, 0, 2, 0, 3, 14, 1, 6, 7, 15, 1, 6, 7},
		{4, 0, 0, 9, 2, 1, 0, 4, 12, 2, 8, 10, 3, 11, 12, 9},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		runExpScript(t, fuzzExpConfig(d), fuzzExpOps(d, 64))
	})
}

// Durations around a TTL of 10s: the boundary and its neighbours.
var (
	fuzzTTLs  = []time.Duration{10 * time.Second, 10 * time.Second, time.Nanosecond, 0, -time.Second}
	fuzzSteps = []time.Duration{0, time.Nanosecond, time.Second, 5 * time.Second, 10 * time.Second, 10*time.Second + 1, time.Hour}
	fuzzKeys  = []string{"a/x", "a/y", "b/x", "c", "d/z", "nope"}
)

func fuzzExpConfig(d *Decoder) expConfig {
	b := d.Byte()
	cfg := expConfig{TTL: fuzzTTLs[int(b>>2)%len(fuzzTTLs)], FakePolicy: b&0x40 != 0}
	cfg.Store = []string{"fake", "cache", "fake-nil", "fake"}[b&3]
	return cfg
}

func fuzzExpOps(d *Decoder, max int) []expOp {
	var ops []expOp
	for !d.Done() && len(ops) < max {
		ops = append(ops, fuzzExpOp(d))
	}
	return ops
}

func fuzzExpOp(d *Decoder) expOp {
	switch d.Intn(16) {
	case 0, 1:
		return eAdd(d.Object(true))
	case 2:
		return eUpdate(d.Object(true))
	case 3:
		return eDelete(d.Object(true))
	case 4, 5:
		return eGet(d.Object(true))
	case 6:
		return eGetByKey(fuzzKeys[d.Intn(len(fuzzKeys))])
	case 7:
		return eList()
	case 8:
		return eListKeys()
	case 9:
		return eReplace(d.RV(), d.Objects(4, true)...)
	case 10:
		return eBookmark(d.RV())
	case 11:
		if d.Intn(2) == 0 {
			return eRV()
		}
		return eResync()
	case 12, 13:
		return eStep(fuzzSteps[d.Intn(len(fuzzSteps))])
	case 14:
		return eKeep(fuzzKeys[d.Intn(len(fuzzKeys))])
	}
	return eUnkeep(fuzzKeys[d.Intn(len(fuzzKeys))])
}
