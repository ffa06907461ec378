package sim

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A restore or a wipe changes what exists, and Parse follows it: a file
// is refused where a step would fail on the restored or wiped etcd, and
// a restore of a snapshot never taken is refused with its line.
func TestEtcdLeversParse(t *testing.T) {
	refused := []struct{ name, src, want string }{
		{"restore never taken", "# s\n\netcd-restore s1\n----\n",
			`x.txt:3: etcd-restore s1: no snapshot named "s1" was taken before this line (etcd-snapshot s1 takes one)`},
		{"restore taken later", "# s\n\netcd-restore s1\n----\n\netcd-snapshot s1\n----\n", `x.txt:3: etcd-restore s1: no snapshot named "s1"`},
		{"bad name", "# s\n\netcd-snapshot s/1\n----\n", "x.txt:3: etcd-snapshot s/1: want a snapshot name of 1 to 32 ASCII letters"},
		{"no name", "# s\n\netcd-snapshot\n----\n", "x.txt:3: etcd-snapshot takes 1"},
		{"wipe takes none", "# s\n\netcd-wipe now\n----\n", "x.txt:3: etcd-wipe takes no positional arguments"},
		{"restored away", "# s\n\netcd-snapshot s1\n----\n\ncreate ns0/a\n----\n\netcd-restore s1\n----\n\nupdate ns0/a image=v2\n----\n",
			`x.txt:12: update ns0/a: pods "a" not found`},
		{"restored back", "# s\n\ncreate ns0/a\n----\n\netcd-snapshot s1\n----\n\ndelete ns0/a\n----\n\netcd-restore s1\n----\n\ncreate ns0/a\n----\n",
			`x.txt:15: create ns0/a: pods "a" already exists: ns0/a was created at line 3`},
		{"wiped", "# s\n\ncreate ns0/a\n----\n\netcd-wipe\n----\n\ndelete ns0/a\n----\n", `x.txt:9: delete ns0/a: pods "a" not found`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse("x.txt", []byte(c.src))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v, want %q...", err, c.want)
			}
		})
	}
	accepted := "# s\n\ncreate ns0/a\n----\n\netcd-snapshot s1\n----\n\netcd-wipe\n----\n\ncreate ns0/a\n----\n\n" +
		"etcd-restore s1\n----\n\nupdate ns0/a image=v2\n----\n"
	if _, err := scenario.Parse("x.txt", []byte(accepted)); err != nil {
		t.Errorf("a re-create after a wipe, an update after a restore: %v", err)
	}
}

// The levers need the embedded etcd, and what they leave on disk goes
// with the run's data directory.
func TestEtcdLeversEmbeddedOnly(t *testing.T) {
	ctx := testdeadline.Context(t)
	ses, err := Open(ctx, mustParse(t, "# s\n\netcd-snapshot s1\n----\n\netcd-restore s1\n----\n\netcd-wipe\n----\n"), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := ses.r.storage().etcd.Dir()
	for _, st := range ses.r.sc.Steps {
		if _, err := ses.Step(st); err != nil {
			t.Fatal(err)
		}
	}
	ses.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the run, its etcd directory %s: %v; want it gone, snapshots and all", dir, err)
	}

	server, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	etcd := server.ClientOptions()
	for _, cmd := range []string{"etcd-snapshot s1", "etcd-wipe"} {
		_, err := Run(ctx, mustParse(t, "# s\n\n"+cmd+"\n----\n"), Options{Etcd: etcd})
		name, _, _ := strings.Cut(cmd, " ")
		if err == nil || !strings.Contains(err.Error(), "inline.txt:3: "+name+" needs the embedded etcd") {
			t.Errorf("%s on an external etcd: got %v", cmd, err)
		}
	}
}
