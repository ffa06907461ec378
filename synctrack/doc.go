// Package synctrack holds Lazy: a value worked out only when someone asks
// for it, and again only after someone has said it may have changed.
//
// # The problem
//
// Some answers are expensive and change rarely: "has every handler of
// this informer caught up?" walks every registration, "which pods match
// this selector?" walks a cache. Working them out at every change wastes
// work when nobody asks in between; working them out at every question
// wastes work when nothing has changed. Lazy does neither: a change only
// marks the answer stale (Notify), and the next question (Get) works it
// out once, however many goroutines ask at the same moment.
//
// # Generations
//
//	Notify ──▶ generation 1 ──Get──▶ Evaluate ──▶ 7 (kept)
//	             Get ──▶ 7 (no Evaluate)
//	Notify ──▶ generation 2 ──Get──▶ Evaluate ──▶ error (not kept)
//	             Get ──▶ Evaluate ──▶ 9 (kept)
//
// Each Notify starts a new generation, which takes the Evaluate function
// set at that moment. A generation evaluates at most one Get at a time
// and keeps the first value that comes without an error (L1); Gets that
// arrive while it evaluates wait for that evaluation (L3). An error is
// returned to the Get that asked and not kept: the next Get of the same
// generation evaluates again (L4). A Get holds the generation it found
// when it started, so an evaluation that began before a Notify finishes
// in the old generation and never answers a Get that came after it (L2):
// a caller who saw Notify return is never given a value worked out before
// it.
//
// The zero Lazy is ready to use once Evaluate is set: the first Get
// starts the first generation (L5).
//
// # Mirrors client-go
//
// tools/cache/synctrack/lazy.go in k8s.io/client-go v0.37.2 (Lazy,
// Evaluate, Notify, Get), same API, proven equal by differential tests
// (REFERENCE.md, L1–L5). client-go's other synctrack types,
// AsyncTracker and SingleFileTracker, count a handler's work towards its
// HasSynced: cachelab keeps that inside package informer (its
// syncTracker, listener.go), where it is used. Lazy is a concept of its
// own that needs neither an informer nor a store, so it lives here, where
// client-go's lazy_test.go finds it with only its import path changed.
//
// One difference in shape: a generation keeps its value behind an atomic
// pointer and evaluates under a plain mutex, where client-go reads under
// a read-write lock. Either way a Get that finds no value waits for the
// evaluation in progress, then looks again.
package synctrack
