package deltafifo_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// Seeds: hand-picked inputs that reach the interesting paths quickly. The
// fuzzer's own finds live in testdata/fuzz/<FuzzName>/ and run in every
// `go test` too.
var queueSeeds = [][]byte{
	{},
	{0x01, 0, 0x10, 1, 0x21, 2, 3, 0x31, 4, 5, 6, 7, 8, 9},
	{0x07, 3, 2, 0x11, 0x22, 0x13, 0x24, 5, 5, 5, 5},
	{0x0F, 0, 0xF1, 1, 0xE2, 3, 0, 0, 2, 0xFF, 7, 5, 5, 5, 4, 5},
	{0x38, 0, 0x01, 6, 9, 0, 0x12, 8, 0, 7, 7, 3, 8, 1},
	{0x03, 9, 0x01, 10, 0x02, 3, 2, 0x01, 0x02, 8, 5, 5, 4, 5, 5},
}

var deltaFIFOOps = []OpKind{OpAdd, OpUpdate, OpDelete, OpReplace, OpResync, OpPop, OpPop,
	OpClose, OpKnownSet, OpKnownRemove}

var realFIFOOps = []OpKind{OpAdd, OpUpdate, OpDelete, OpReplace, OpResync, OpBookmark,
	OpPop, OpPopBatch, OpPopBatch, OpClose, OpKnownSet, OpKnownRemove}

// FuzzDeltaFIFO runs random scripts, with random options (KnownObjects,
// EmitDeltaTypeReplaced, transformer), against cachelab's and client-go's
// DeltaFIFO, comparing after every step.
func FuzzDeltaFIFO(f *testing.F) { fuzzQueue(f, DeltaFIFOPair, deltaFIFOOps) }

// FuzzRealFIFO does the same for RealFIFO, atomic and not, with bookmarks,
// unlocking and PopBatch.
func FuzzRealFIFO(f *testing.F) { fuzzQueue(f, RealFIFOPair, realFIFOOps) }

func fuzzQueue(f *testing.F, pair func(QueueConfig) func() (Side, Side), kinds []OpKind) {
	for _, s := range queueSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		cfg := d.QueueConfig()
		RunQueueScript(t, false, pair(cfg), d.QueueOps(kinds, 64))
	})
}
