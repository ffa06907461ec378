package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdBigSession writes a recorded session whose informer starts with a
// LIST of n pods (at resourceVersion 100), then watches: a start no
// replay settles in a nanosecond, as big-start.txt is for a run (with
// a session of one pod, a busy machine let the informer finish before
// the runner first looked, and --settle-timeout 1ns then settled).
//
//	bigsession big.jsonl 3000
func cmdBigSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bigsession <file> <pods>")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b strings.Builder
	b.WriteString(`{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n")
	b.WriteString(`{"kind":"list","at":"10ms","listRV":"100","items":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns0","resourceVersion":"90"}}`, i)
	}
	b.WriteString("]}\n")
	b.WriteString(`{"kind":"watch","at":"11ms","watch":1,"resourceVersion":"100"}` + "\n")
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}
