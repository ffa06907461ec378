// Package solution is the reference solution of chapter 4's lab.
package solution

import (
	"net/http"
	"time"

	"github.com/cachelab/cachelab/notebooks/04-reflector/exercise"
)

// AfterWatch is the exercise's decision, done. It follows client-go's
// reflector.go watch() and ListAndWatch: the order of the cases matters.
func AfterWatch(end exercise.WatchEnd) exercise.Next {
	rv := end.LastSyncedRV // every reaction asks for the last synced RV (F5 is about a LIST failing)
	switch {
	case end.Status == http.StatusTooManyRequests:
		// The server asked us to slow down: wait, then carry on watching.
		return exercise.Next{Action: exercise.Rewatch, Backoff: true, ResourceVersion: rv}
	case end.Status != 0:
		// 410 (the history is gone), 500 or any other error, from the Watch
		// call or inside the stream: list again, after a backoff.
		return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: rv}
	case end.Lasted < time.Second && end.Events == 0:
		// A stream the server closes at once, without a single event:
		// something is wrong on its side. Treat it like an error.
		return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: rv}
	}
	// A normal close (a timeout): the store is up to date, carry on at once.
	return exercise.Next{Action: exercise.Rewatch, ResourceVersion: rv}
}
