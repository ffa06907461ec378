// Package testparallel sets a test binary's -parallel when its command
// line does not: for packages whose parallel tests mostly wait (on etcd,
// on a scenario's settling, on a child process), so that more of them
// overlap than the machine has cores.
package testparallel

import "flag"

// Default sets -test.parallel to n unless the command line set it. It
// parses the command line first; call it from TestMain, before m.Run.
func Default(n string) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", n)
	}
}
