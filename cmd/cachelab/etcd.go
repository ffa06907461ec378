package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/listwatch"
)

// The flags that reach an external etcd. They are named as etcdctl's,
// with an etcd- prefix where cachelab has flags of its own, and default
// to the environment variables etcdctl reads, so that a shell set up for
// etcdctl is set up for cachelab.

// etcdEnv pairs each flag with its etcdctl environment variable. The TLS
// ones apply only with endpoints: set for etcdctl, they must not turn a
// run on the embedded etcd (which has no TLS) into a usage error.
var etcdEnv = []struct {
	flag, env string
	tls       bool
}{
	{flag: "etcd-endpoints", env: "ETCDCTL_ENDPOINTS"},
	{flag: "etcd-cacert", env: "ETCDCTL_CACERT", tls: true},
	{flag: "etcd-cert", env: "ETCDCTL_CERT", tls: true},
	{flag: "etcd-key", env: "ETCDCTL_KEY", tls: true},
	{flag: "dial-timeout", env: "ETCDCTL_DIAL_TIMEOUT"},
}

func etcdFlags(cmd *cobra.Command, o *listwatch.ClientOptions) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Endpoints, "etcd-endpoints", nil, "an external etcd's client URLs, comma-separated, "+
		"http://host:port or https://host:port (or $ETCDCTL_ENDPOINTS); the run keeps to its own key prefix and "+
		"removes it at the end. Unset: an embedded etcd")
	f.StringVar(&o.TLS.CAFile, "etcd-cacert", "", "CA certificate file for --etcd-endpoints (or $ETCDCTL_CACERT)")
	f.StringVar(&o.TLS.CertFile, "etcd-cert", "", "client certificate file for --etcd-endpoints (or $ETCDCTL_CERT)")
	f.StringVar(&o.TLS.KeyFile, "etcd-key", "", "client key file for --etcd-endpoints (or $ETCDCTL_KEY)")
	f.DurationVar(&o.DialTimeout, "dial-timeout", listwatch.DefaultDialTimeout, "how long to wait for each of "+
		"--etcd-endpoints to answer (or $ETCDCTL_DIAL_TIMEOUT)")
}

// etcdFromEnv sets each etcd flag the command line left unset from its
// environment variable, if that is set. A flag given, even empty, wins
// over its variable: an empty --etcd-cacert with $ETCDCTL_CACERT set
// means no CA file. But an empty --etcd-endpoints is refused: it would
// run on the embedded etcd without a word, where the user named an etcd
// of their own and left out its address.
func (m *Main) etcdFromEnv(cmd *cobra.Command, o *listwatch.ClientOptions) error {
	f := cmd.Flags()
	if f.Changed("etcd-endpoints") && len(o.Endpoints) == 0 {
		return errors.New("--etcd-endpoints '': no endpoint given; to run on the embedded etcd, leave the flag out (and $ETCDCTL_ENDPOINTS unset)")
	}
	for _, e := range etcdEnv {
		v := m.Getenv(e.env)
		if v == "" || f.Changed(e.flag) || e.tls && len(o.Endpoints) == 0 {
			continue
		}
		if err := f.Set(e.flag, v); err != nil {
			return fmt.Errorf("$%s=%q: %w", e.env, v, err)
		}
	}
	for i, ep := range o.Endpoints { // "a, b" splits into "a" and " b"
		o.Endpoints[i] = strings.TrimSpace(ep)
	}
	return nil
}

// checkEtcd rejects etcd options that cannot work, before anything is
// dialed: they are bad input, not a failed run.
func checkEtcd(o listwatch.ClientOptions) error {
	switch {
	case o.DialTimeout <= 0:
		return fmt.Errorf("--dial-timeout %v: want a positive duration such as 5s", o.DialTimeout)
	case len(o.Endpoints) == 0 && o.TLS != (listwatch.TLSFiles{}):
		return errors.New("--etcd-cacert, --etcd-cert and --etcd-key need --etcd-endpoints (the embedded etcd has no TLS)")
	case len(o.Endpoints) == 0:
		return nil
	}
	return o.Check()
}
