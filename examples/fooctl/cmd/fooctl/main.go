// Command fooctl runs package fooctl's operator against the cluster of a
// kubeconfig, as any operator's binary does: it knows nothing of
// cachelab. It is the controller in another process of
// controllertest.Command and of `cachelab explore --serve`.
//
//	fooctl [-kubeconfig FILE] [-mistaken]
//
// The kubeconfig is -kubeconfig's, else $KUBECONFIG's. SIGINT or SIGTERM
// stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/examples/fooctl"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the kubeconfig of the cluster to run in")
	mistaken := flag.Bool("mistaken", false, "run the reconcile with its mistakes (fooctl.Mistaken)")
	flag.Parse()
	if err := run(*kubeconfig, *mistaken); err != nil {
		fmt.Fprintln(os.Stderr, "fooctl:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, mistaken bool) error {
	if kubeconfig == "" {
		return fmt.Errorf("no kubeconfig: give -kubeconfig or set KUBECONFIG")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := fooctl.Operator(fooctl.Options{Config: cfg}, mistaken)
	if err != nil {
		return err
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
