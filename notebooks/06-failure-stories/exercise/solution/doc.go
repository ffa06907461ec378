// Package solution holds the reference solution of chapter 6's lab:
// story.txt, a scenario that tells the missed-delete story.
package solution
