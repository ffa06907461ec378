package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/sim"
	simworld "github.com/cachelab/cachelab/sim/world"
)

// builtWith are the modules whose versions decide what a trace shows, as
// `cachelab version` names them: the client-go compared against,
// kube-apiserver's storage (its watch cache), and etcd.
var builtWith = []struct{ name, module string }{
	{"client-go", "k8s.io/client-go"},
	{"apiserver", "k8s.io/apiserver"},
	{"etcd", "go.etcd.io/etcd/server/v3"},
}

func (m *Main) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cachelab's version and the client-go, apiserver and etcd it was built with",
		Long: `Version prints cachelab's version, the versions of the modules it was built
against (client-go, the one compared with cachelab; k8s.io/apiserver, whose
watch cache the informers talk to; etcd, embedded), the Go toolchain that
built it, and, when the binary was built from a git checkout, the commit.
Every trace's header names the cachelab and client-go versions too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeError(m.printVersion(), "while printing the version")
		},
	}
}

func (m *Main) printVersion() error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	deps := map[string]string{}
	for _, d := range bi.Deps {
		deps[d.Path] = d.Version
		if d.Replace != nil {
			deps[d.Path] = strings.TrimSpace(d.Version + " (replaced by " + d.Replace.Path + " " + d.Replace.Version + ")")
		}
	}
	w := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "cachelab\t%s\n", sim.Version)
	for _, b := range builtWith {
		v := deps[b.module]
		switch {
		case v == "" && b.name == "apiserver" && simworld.Linked() == nil:
			v = "not in this build (it builds cachelab with -tags full when a run needs the watch cache)"
		case v == "" && b.name == "apiserver":
			// A test binary: sim/full comes in through a _test.go
			// file, which the build information does not list.
			v = "in this build, its version not in the build information"
		case v == "":
			v = "unknown (not in this binary's build information)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", b.name, v, b.module)
	}
	fmt.Fprintf(w, "go\t%s\t%s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if rev := setting(bi, "vcs.revision"); rev != "" {
		if setting(bi, "vcs.modified") == "true" {
			rev += " (with uncommitted changes)"
		}
		fmt.Fprintf(w, "commit\t%s\n", rev)
	}
	return w.Flush()
}

// setting is the build setting key, or "".
func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
