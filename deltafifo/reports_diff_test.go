package deltafifo_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: delta_fifo.go Replace, syncKeyLocked; the_real_fifo.go
// Replace, Resync (D4, D5, R2, R4): when the consumer's cache fails a
// lookup, or no longer has a key it listed, the queues say so outside
// their return values, each in its own words: DeltaFIFO reports an error
// through utilruntime.HandleErrorWithLogger and logs a vanished key at
// Info; RealFIFO reports both as errors (D9, R9). The harness compares what each
// side reported at every step.
func TestLookupReports(t *testing.T) {
	fails := Pod("a/x", RV(1), Label(LabelLookupFails, "y"))
	vanished := Pod("b/y", RV(2), Label(LabelLookupMissing, "y"))
	ops := []Op{KnownSet(fails), KnownSet(vanished), Resync(), Replace("7"), Pop(), Pop()}
	t.Run("DeltaFIFO", func(t *testing.T) {
		got := RunQueueScript(t, false, DeltaFIFOPair(QueueConfig{Known: true}), ops)
		checkTranscript(t, got, []string{
			`resync → reported: error "Unexpected error during lookup, unable to queue object for sync" err=lookup of "a/x" refused [key a/x] @library`,
			`resync → reported: "Key does not exist in known objects store, unable to queue object for sync" logger=DeltaFIFO key=b/y @library`,
			`replace [] rv="7" → reported: error "Unexpected error during lookup, placing DeleteFinalStateUnknown marker without object" err=lookup of "a/x" refused [key a/x] @library`,
			`replace [] rv="7" → reported: "Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object" logger=DeltaFIFO key=b/y @library`,
			"pop → [Deleted Tombstone(a/x: nil)] initial",
			"pop → [Deleted Tombstone(b/y: nil)] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → error: closed",
		})
	})
	t.Run("RealFIFO", func(t *testing.T) {
		got := RunQueueScript(t, false, RealFIFOPair(QueueConfig{}), ops)
		checkTranscript(t, got, []string{
			`resync → reported: error "Unable to queue object for sync" err=lookup of "a/x" refused [key a/x] @library`,
			`resync → reported: error "Key does not exist in known objects store, unable to queue object for sync" err=<nil> [key b/y] @library`,
			`replace [] rv="7" → reported: error "Error during lookup, placing DeleteFinalStateUnknown marker without object" err=lookup of "a/x" refused [key a/x] @library`,
			`replace [] rv="7" → reported: error "Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object" err=<nil> [key b/y] @library`,
			"pop → [Deleted Tombstone(a/x: nil)] initial",
			"pop → [Deleted Tombstone(b/y: nil)] initial",
			"  (HasSynced is now true)",
			"pop → error: closed",
		})
	})
}
