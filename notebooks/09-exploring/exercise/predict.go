// Package exercise is chapter 9's lab: predict which placements of one
// disconnect, and its reconnect, lose a delete in a small scenario, then
// check your prediction against what the explorer finds:
//
//	go test -tags lab -v ./notebooks/09-exploring/exercise
//
// The checks explore lost-delete.txt with one disconnect (explore.Run,
// Faults disconnect, at most one per run), and hold your LosesDelete
// against every placement's story. The reference solution is in
// solution/; try without it first.
package exercise

// LosesDelete says whether the handler loses the delete of ns0/b when a
// disconnect is put before step disconnectBefore of lost-delete.txt and
// its reconnect before step reconnectBefore (1 <= disconnectBefore <
// reconnectBefore <= 8; 8, one past the last step, is the end). The
// steps are numbered as in the file, and as the explorer's report
// numbers them:
//
//	1 add-handler h1
//	2 create ns0/a ns0/b
//	3 start
//	4 advance 1s
//	5 delete ns0/b
//	6 create ns0/c
//	7 compact
//
// Without a disconnect the watch delivers the delete and the handler
// gets OnDelete ns0/b@4. The delete is lost when the handler never gets
// that call: it gets a DeletedFinalStateUnknown tombstone instead (the
// informer noticed the delete only at a relist), or it never hears of
// ns0/b at all (ns0/b came and went while the informer could not look).
// A delete that comes late, at the reconnect, as OnDelete ns0/b@4, is not
// lost.
func LosesDelete(disconnectBefore, reconnectBefore int) bool {
	// TODO
	return false
}
