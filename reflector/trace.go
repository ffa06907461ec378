package reflector

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Step names what the reflector is doing. Every Event carries one, so a
// trace can say which step produced each request, watch event and store
// call that follows it.
type Step string

// The steps of a reflector, in the order a healthy one takes them.
const (
	// StepWatchList: a watch-list request (initial events streamed into a
	// temporary store until the end bookmark; F2).
	StepWatchList Step = "watch-list"
	// StepWatchListFallback: the watch-list failed; this cycle lists (F1).
	StepWatchListFallback Step = "watch-list-fallback"
	// StepList: a LIST page request (F1, F5).
	StepList Step = "list"
	// StepConsistencyCheck: with the data consistency detector on, the
	// watch-list's Count initial objects are about to be compared with a
	// LIST of RV from etcd, before they are stored (V6).
	StepConsistencyCheck Step = "consistency-check"
	// StepReplace: the store has been given the listed objects
	// (Store.Replace returned).
	StepReplace Step = "replace"
	// StepWatch: a plain WATCH request from the last synced RV.
	StepWatch Step = "watch"
	// StepEvent: a watch event was given to the store (F3); reported once
	// the store call has returned.
	StepEvent Step = "event"
	// StepEventDropped: a watch event was dropped (wrong type, no metadata).
	StepEventDropped Step = "event-dropped"
	// StepWatchEnded: a watch ended; Err says why (nil: closed normally).
	StepWatchEnded Step = "watch-ended"
	// StepWatchRefused: a watch-list request failed before any watch
	// opened; Err is the server's answer.
	StepWatchRefused Step = "watch-refused"
	// StepRVUnavailable: the last synced RV is gone (410 or too large);
	// the next request asks for RV "" (F5).
	StepRVUnavailable Step = "rv-unavailable"
	// StepWatchErrorHandler: ListAndWatch failed; the handler is called.
	StepWatchErrorHandler Step = "watch-error-handler"
	// StepRelistBackoff: waiting Delay before the next ListAndWatch (F6).
	StepRelistBackoff Step = "relist-backoff"
	// StepRewatchBackoff: waiting Delay before re-watching after 429 or a
	// refused connection (F4).
	StepRewatchBackoff Step = "rewatch-backoff"
	// StepResync: the resync timer fired and Store.Resync is called (F7).
	StepResync Step = "resync"
)

// Event is one thing a reflector did. Fields that do not apply to the
// step are zero.
type Event struct {
	Step Step
	// Options is the request of StepWatchList, StepList and StepWatch.
	Options *metav1.ListOptions
	// Type and Object are the watch event of StepEvent and
	// StepEventDropped.
	Type   watch.EventType
	Object any
	// RV is the resourceVersion a StepReplace brings the store to, and
	// the one a StepConsistencyCheck lists.
	RV string
	// Count is how many objects a StepReplace hands over, or a
	// StepConsistencyCheck compares.
	Count int
	// Delay is the wait of a backoff step.
	Delay time.Duration
	// Err is why a watch ended or a request failed.
	Err error
}
