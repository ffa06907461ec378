package store_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// FuzzIndexer runs random store scripts (writes, reads, index queries,
// AddIndexers, bookmarks, transactions; with and without a transformer and
// the deletion-handling key function) against cachelab's Cache and
// client-go's Indexer, comparing results and the whole observable state
// after every step.
func FuzzIndexer(f *testing.F) {
	for _, s := range [][]byte{
		{},
		{0, 0, 1, 0, 2, 3, 9, 1, 10, 2, 1, 11, 0, 12, 2},
		{3, 14, 2, 0, 0x01, 1, 10, 2, 16, 3, 0, 0x02, 2, 0x01, 0, 0x03},
		{1, 9, 3, 0x01, 0x02, 0x03, 7, 15, 9, 8, 13, 1, 0xFD, 0, 1, 2},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		cfg := d.StoreConfig()
		RunStoreScript(t, cfg, d.StoreOps(64))
	})
}
