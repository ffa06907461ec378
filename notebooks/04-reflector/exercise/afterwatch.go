// Package exercise is chapter 4's lab: decide what a reflector does when
// its watch ends, then check your decisions against client-go's:
//
//	go test -tags lab -v ./notebooks/04-reflector/exercise
//
// Each way a watch can end prints "pass", or what client-go did instead.
// The reference solution is in solution/; try without it first.
package exercise

import "time"

// WatchEnd is how a watch ended, as the reflector sees it.
type WatchEnd struct {
	// Status is the HTTP status code of the error that ended the watch:
	// 410 (Gone: the resourceVersion asked for is too old), 429 (Too Many
	// Requests), 500 (Internal Server Error) and so on. It is 0 when the
	// server closed the stream without an error, as a watch timeout does.
	Status int
	// FromWatchCall is true when the Watch call itself failed with Status,
	// so no stream was opened; false when the stream was open and ended
	// (Status then came as an Error event inside it).
	FromWatchCall bool
	// Events is how many events the stream delivered before it ended (an
	// Error event does not count).
	Events int
	// Lasted is how long the watch was open: from just before the Watch
	// call to the end of the stream.
	Lasted time.Duration
	// LastSyncedRV is the reflector's last synced resourceVersion when the
	// watch ended: the list's, moved on by every event since.
	LastSyncedRV string
}

// Action is what a reflector does after a watch ends.
type Action int

const (
	// Rewatch opens a new WATCH; the store keeps what it has.
	Rewatch Action = iota + 1
	// Relist fetches everything again (a LIST, or a watch-list request in
	// client-go's default mode), replaces the store's content, then
	// watches.
	Relist
)

// Next is the reflector's reaction to a watch ending: its next request.
type Next struct {
	// Action is the kind of the next request.
	Action Action
	// Backoff is true if the reflector waits a backoff delay (F6) before
	// it; false if it sends it at once.
	Backoff bool
	// ResourceVersion is the resourceVersion the next request asks for.
	ResourceVersion string
}

// AfterWatch decides what the reflector does after a watch ends (F4):
// watch again or relist, at once or after a backoff, and from which
// resourceVersion. Things to weigh:
//
//   - A watch that the server closes normally (a timeout) is the common
//     case; what is cheapest to do next?
//   - A watch closed in under a second with no events at all suggests a
//     server in trouble.
//   - 410 means the history the watch needed is gone; 429 asks the client
//     to slow down; other errors mean something is wrong.
//   - Does an error from the Watch call itself mean the same as one inside
//     the stream?
func AfterWatch(end WatchEnd) Next {
	// TODO: decide.
	return Next{}
}
