package main

import (
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// cmdMermaid checks that the last command's stdout is a diagram of the
// Mermaid that --output mermaid writes, within GitHub's limits
// (mermaid.Validate).
//
//	mermaid
func cmdMermaid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: mermaid")
	}
	if err := mermaid.Validate(ts.ReadFile("stdout")); err != nil {
		ts.Fatalf("%v", err)
	}
}
