package listwatch

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TLSFiles names the PEM files of a TLS setup, as real etcd clusters use
// them: the CA that signed the peer's certificate, and this side's own
// certificate and key (for client-certificate authentication).
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

func (f TLSFiles) empty() bool { return f == TLSFiles{} }

// ClientOptions says how to reach an etcd cluster.
type ClientOptions struct {
	// Endpoints are the cluster's client URLs (https:// for TLS).
	Endpoints []string
	// TLS, if set, secures the connection.
	TLS TLSFiles
	// DialTimeout bounds the first connection (5s if 0).
	DialTimeout time.Duration
}

// Connect returns a client of the etcd cluster at opts.Endpoints (a real
// cluster, or an Embedded one reached only by its endpoints), after
// checking within ctx that the first endpoint answers. The Writer and
// ListerWatcher work the same over any of them.
func Connect(ctx context.Context, opts ClientOptions) (*clientv3.Client, error) {
	if len(opts.Endpoints) == 0 {
		return nil, fmt.Errorf("listwatch: connect: no etcd endpoints given")
	}
	cfg := clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: opts.DialTimeout,
		Logger:      zap.NewNop(),
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if !opts.TLS.empty() {
		info := transport.TLSInfo{TrustedCAFile: opts.TLS.CAFile, CertFile: opts.TLS.CertFile, KeyFile: opts.TLS.KeyFile}
		tlsCfg, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("listwatch: connect: TLS files: %w", err)
		}
		cfg.TLS = tlsCfg
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("listwatch: connect to %v: %w", opts.Endpoints, err)
	}
	// Fail now, with the endpoint named, rather than at the first list.
	// ctx and the dial timeout bound only this check: the client lives
	// until Close. (Without the timeout, an endpoint that accepts the
	// connection but never answers, such as a TLS server asked in plain
	// text, would hang here.)
	cctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := client.Status(cctx, opts.Endpoints[0]); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("listwatch: etcd at %s is not answering: %w", opts.Endpoints[0], err)
	}
	return client, nil
}
