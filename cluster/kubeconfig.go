package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigError is the error Open returns when the kubeconfig names no
// cluster it can use: there is no kubeconfig, it does not parse, it has
// no current context and none was given, or no context by the name given.
// Nothing has been reached then: the mistake is in the input, and a
// command says so as it says a bad flag (cachelab exits 2 for it).
type KubeconfigError struct{ Err error }

func (e *KubeconfigError) Error() string { return e.Err.Error() }
func (e *KubeconfigError) Unwrap() error { return e.Err }

func kubeconfigErrorf(format string, a ...any) error {
	return &KubeconfigError{Err: fmt.Errorf(format, a...)}
}

// howToGive is how a kubeconfig is given, for the messages of a missing
// one.
const howToGive = "give one with --kubeconfig PATH, or set $KUBECONFIG (kind and minikube write ~/.kube/config when they make a cluster)"

// loadKubeconfig reads the kubeconfig opts names, or kubectl's, and
// returns the client configuration of the context to use and its name.
// Every error is a KubeconfigError.
func loadKubeconfig(opts Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.MigrationRules = nil // it would move an old ~/.kube/.kubeconfig: the user's file
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	// clientcmd reads a missing file as an empty kubeconfig, whose
	// error would be "no current context": say what is missing.
	if err := kubeconfigExists(rules); err != nil {
		return nil, "", err
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, "", kubeconfigErrorf("reading the kubeconfig: %w", err)
	}
	name := opts.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return nil, "", kubeconfigErrorf("the kubeconfig (%s) has no current context: give --context%s", where(rules), contextsIn(raw.Contexts))
	}
	if _, ok := raw.Contexts[name]; !ok {
		return nil, "", kubeconfigErrorf("the kubeconfig (%s) has no context %q%s", where(rules), name, contextsIn(raw.Contexts))
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", kubeconfigErrorf("the kubeconfig's context %q: %w", name, err)
	}
	return cfg, name, nil
}

// kubeconfigExists says which kubeconfig is missing: the file
// --kubeconfig names, or every file kubectl would read.
func kubeconfigExists(rules *clientcmd.ClientConfigLoadingRules) error {
	if rules.ExplicitPath != "" {
		if _, err := os.Stat(rules.ExplicitPath); errors.Is(err, fs.ErrNotExist) {
			return kubeconfigErrorf("the kubeconfig %s does not exist: give --kubeconfig the file kubectl uses (kind and minikube write ~/.kube/config)", rules.ExplicitPath)
		}
		return nil
	}
	for _, f := range rules.Precedence {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return kubeconfigErrorf("no kubeconfig: none of the files $KUBECONFIG names exists (%s): give one with --kubeconfig PATH, or make $KUBECONFIG name it", strings.Join(rules.Precedence, ", "))
	}
	return kubeconfigErrorf("no kubeconfig: $KUBECONFIG is not set and %s does not exist: %s", where(rules), howToGive)
}

// contextsIn names the contexts a kubeconfig has, for a message that
// asks for one.
func contextsIn[T any](contexts map[string]T) string {
	if len(contexts) == 0 {
		return " (it has none)"
	}
	return " (it has " + strings.Join(slices.Sorted(maps.Keys(contexts)), ", ") + ")"
}
