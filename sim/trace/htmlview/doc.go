// Package htmlview draws a run as one self-contained HTML page: a
// timeline that a new user opens offline in any browser, for
// `cachelab run --output html=FILE`.
//
// The page shows the run's steps as columns and its layers as lanes, the
// world's first (etcd, kube-apiserver's watch cache, the simulator's
// levers), then each layer of the two implementations in the order a
// change travels through it (trace.Rank), each handler in a lane of its
// own, cachelab's lane of a layer right above client-go's: one look down
// a step's column compares them, where a half for each side put
// client-go's lanes a screen below cachelab's (issue 47):
//
//	                        step 1      step 2        step 3       step 4
//	faults                              ▓▓ disconnected ▓▓▓▓▓▓▓▓▓▓▓▓
//	etcd                    create a@2  update a@3
//	watch       cachelab    w1 ADDED a@2 ─┐                        w2 ERROR 410 Gone
//	watch       client-go   w1 ADDED a@2  │                        w2 ERROR 410 Gone
//	indexer     cachelab    add a@2  ◄────┘ ...
//	indexer     client-go   add a@2
//	handler/h1  cachelab    OnAdd a@2                              OnUpdate b@3 no-op
//	...
//
// A chip says the few words a learner needs without a click
// (assets/chips.js): the watch a line is about (w1, w2...; LIST), an
// update as a@2→4, a relist and its backoff; and it is marked for the
// distinctions the chapters teach, which a legend under the verdict
// names: an update that changed nothing (no-op, dashed) against a real
// one, a tombstone (DeletedFinalStateUnknown) against a delete, a 410
// (the watch's history compacted away: relist) against other errors. A
// chip's words wrap rather than be cut off. A reconcile or workqueue chip
// names its controller when the run has several.
//
// Clicking an event shows its whole trace line and typed fields, and puts
// its object in focus (so does typing its key; a run of one object starts
// with it in focus): the object's events are highlighted and joined by
// arrows, one path per implementation, and no other object's are. A
// drawer under the timeline tells the object's story, the sentences of
// `cachelab run --object` (trace.Tell), a row per step, cachelab's and
// client-go's side by side, with the faults the world was under. The
// first divergence is marked on its step and its layer's cell, with its
// diff at the top. Filters keep some objects (by part of their key), some
// layers, some implementations.
//
// The page of one of cachelab explore's groups (Run.Explored) is titled
// by the group's story, says where the faults went, numbers its steps as
// the explored scenario does ("+" for a fault explore put in), and shows,
// in lanes "without faults", what the scenario's own run handed its
// handlers and reconciles at the same steps (explored.go).
//
// # Scale
//
// A run of 10,000 objects has some 260,000 events. The page carries them
// all, so that any object's journey can be drawn and its story told, but
// compactly: a step's events in one lane are a cell, and an event in a
// cell is five entries (object, shape, rv, prevRV, uid), its words and
// its story's sentence a shape shared with every event worded alike but
// for its object and resourceVersions (view in model.go); a step records
// the order of its events across lanes as runs of lanes. A cell of
// more than a few events is drawn as a counted band ("10,000 events ·
// 10,000 objects · OnAdd ×10,000") until it is clicked or the objects are
// filtered, so the page draws a few hundred elements however many objects
// there are; the band keeps, as chips under it, the few events unlike the
// rest (the only one of its shape in the cell, and every tombstone).
//
// # Determinism
//
// The page depends only on the run: the same run gives the same bytes.
// Tables are sorted or in order of first appearance, JSON is written by
// encoding/json, and nothing records the wall clock.
//
// The page's script is assets/chips.js (a chip's words and marks) and
// assets/view.js (the drawing), its style assets/view.css, all embedded
// (go:embed) and written inline; the run is JSON in a
// <script type="application/json"> element. The browser test
// (browser_test.go) opens pages in headless Chromium.
package htmlview
