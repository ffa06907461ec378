package mermaid

// The watch-cache world and client-go's typed informer factory, which
// cachelab's light build leaves out (sim/world's Full), in this test.
import _ "github.com/cachelab/cachelab/sim/full"
