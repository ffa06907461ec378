// Package trace is what a simulator run shows, as typed events, and the
// rules for comparing two implementations' events.
//
// # Events
//
// Every line of a trace is an Event: a layer (where it happened), a kind
// (its shape: a handler call, a watch event, an indexer change, ...; the
// set is closed), and typed fields: the object's key, uid and
// resourceVersions before and after, the watch, the handler, the
// operation. Text is one rendering of an event; the JSON records of
// --output json carry the fields themselves (JSONWriter).
//
//	etcd ─► request/watch ─► reflector ─► transform ─► pop ─► indexer ─► handler/<name> ─► synced
//	            (both)        (cachelab)     (both)   (cachelab)  (both)      (both)          (both)
//
// After the handlers, a controller's (start-controller) workqueue and
// reconcile layers, both compared. A step's events are printed layer by
// layer, in that order, and within a layer in the order they happened on
// the side that recorded them (Arrange); workqueue and reconcile lines
// print together, interleaved as they happened.
//
// # Order
//
// client-go leaves some orders to chance: wherever it ranges over a map,
// any permutation can come out. Those events carry an Order naming their
// batch: a relist's tombstones, a watch-list's objects replayed from the
// reflector's temporary store (MarkListed finds them), initial-list adds,
// updates that change nothing (a resync), and some log lines. cachelab's
// store lists in key order, one of the permutations client-go can
// produce, so cachelab's trace is the same on every run.
//
// Compare splits each compared layer into segments: each fixed event on
// its own, each maximal run of one batch together. Two sides agree when
// their segments match one for one: fixed events exactly, batches as
// multisets. So the order of the batches is checked (the default stack's
// tombstones before its adds and updates) and so is everything client-go
// fixes; only the order within a batch is not. A batch may be wider than
// client-go's freedom (a LIST relist's unchanged objects come in the
// LIST's order, yet are marked like a resync's), never narrower, so a
// valid client-go order is never a difference.
//
// Align prints client-go's batches in cachelab's order when the two
// agree, so that a trace with both sides is also the same on every run.
//
// # Text for people
//
// Format and StepOutput write every event on its own line: that is what a
// scenario file's expected output holds and is compared with. WriteStep,
// for a person, can also fit a step to a screen (TextStyle): a group of
// more than Summarize lines alike (Shape: one layer, kind and shape of
// words) shows its first SummaryHead and a line that counts the rest and
// their objects, while a line unlike the others always shows; a line
// of more words than that shows its first LongLineWords and the words
// about the objects of the step's rare lines (its news), and with Width
// each line wraps at spaces, continuing under the text after the layer
// column (Wrap). A 10,000-object start is then some 30 lines, not 50,000.
//
// # Stories
//
// An object's story (StoryOf, WriteStory; --object, the HTML page's
// drawer) tells each event about it as a sentence, step by step. A
// Narrator, given the steps in order, adds each sentence's cause where
// the trace shows it: the relist that replaced the store and the 410 it
// came after, the disconnect a write did not reach the informer through,
// the resync that sent an unchanged object again. It reads only the
// world's lines and the compared layers, so both sides tell the same
// story where they agree, and it never adds a cause the trace does not
// show.
//
// # JSON
//
// --output json writes a run as JSON lines (JSONWriter): a header record,
// each step's event records and its step record, an error record if the
// run failed, and always a summary record last (verdict, exit status,
// steps run, the scenario's clock, events per implementation and layer,
// and the wall time, the one field that changes from run to run). The
// records are versioned (Schema, now 2) and documented in SCHEMA.md beside
// this file; schema.json (JSONSchema) is the same as a JSON Schema that
// the tests validate every built-in scenario's records against.
package trace
