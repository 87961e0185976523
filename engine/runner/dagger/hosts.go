package dagger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"dagger.io/dagger"

	"github.com/set-engine/set/engine/config"
)

// HostEnv is getenv as it reads for the engine at host (a runner-host
// URL of runner.dagger.hosts): _EXPERIMENTAL_DAGGER_RUNNER_HOST is host
// and no `dagger run` session is set, so that Preflight finds that engine
// and no other, through the dagger CLI getenv names.
func HostEnv(getenv func(string) string, host string) func(string) string {
	return func(k string) string {
		switch k {
		case "_EXPERIMENTAL_DAGGER_RUNNER_HOST":
			return host
		case "DAGGER_SESSION_PORT", "DAGGER_SESSION_TOKEN":
			return ""
		}
		return getenv(k)
	}
}

// HostProof is what Preflight found for one engine of runner.dagger.hosts.
type HostProof struct {
	Host   string
	Engine *Engine // nil when Err is set
	Err    error
}

// PreflightHosts proves every engine of hosts as Preflight proves the
// environment's, all at once (within ProbeTimeout and the CLI's grace),
// and returns what it found, sorted by host.
func PreflightHosts(ctx context.Context, hosts []string, getenv func(string) string) []HostProof {
	out := make([]HostProof, len(hosts))
	var wg sync.WaitGroup
	for i, h := range slices.Sorted(slices.Values(hosts)) {
		wg.Go(func() {
			e, err := hostPreflight(ctx, HostEnv(getenv, h))
			out[i] = HostProof{Host: h, Engine: e, Err: err}
		})
	}
	wg.Wait()
	return out
}

// hostPreflight is Preflight for an engine of runner.dagger.hosts: its
// error's fix points at runner.dagger.hosts, where the engine's address
// comes from, not at the variable set passed it in, and asks that engine
// its version with the variable set, since the person's environment names
// another engine or none.
func hostPreflight(ctx context.Context, env func(string) string) (*Engine, error) {
	e, err := Preflight(ctx, env)
	var pe *PreflightError
	if errors.As(err, &pe) {
		pe.Fix = strings.ReplaceAll(pe.Fix, "_EXPERIMENTAL_DAGGER_RUNNER_HOST", "runner.dagger.hosts")
		pe.Fix = strings.ReplaceAll(pe.Fix, "`dagger core version`",
			"`_EXPERIMENTAL_DAGGER_RUNNER_HOST="+env("_EXPERIMENTAL_DAGGER_RUNNER_HOST")+" dagger core version`")
	}
	return e, err
}

// PoolEngines proves the engines of hosts (PreflightHosts) and returns
// them as NewPool takes them, with their parallelism. log gets, for each,
// the versions that answered and any mismatch, or why it does not answer:
// such an engine starts down, and its Connect proves it again before it
// opens a session, so that it takes gates once it answers. It is an error
// when no engine answers.
func PoolEngines(ctx context.Context, hosts map[string]config.DaggerHost, getenv func(string) string, log io.Writer) ([]PoolEngine, error) {
	proofs := PreflightHosts(ctx, slices.Collect(maps.Keys(hosts)), getenv)
	var engines []PoolEngine
	var errs []string
	for _, pr := range proofs {
		pe := PoolEngine{Name: pr.Host, Parallelism: hosts[pr.Host].Parallelism}
		if pr.Err != nil {
			fmt.Fprintf(log, "setctl: %s does not answer, so it takes no gate until it does: %s\n", pr.Host, oneLine(pr.Err))
			env := HostEnv(getenv, pr.Host)
			pe.Connect = func(ctx context.Context) (*dagger.Client, error) {
				e, err := hostPreflight(ctx, env)
				if err != nil {
					return nil, errors.New(oneLine(err))
				}
				logProof(log, pr.Host, e, pe.Parallelism)
				return Connector(e, log)(ctx)
			}
			pe.Down = errors.New(oneLine(pr.Err))
			errs = append(errs, pr.Host+": "+strings.ReplaceAll(pr.Err.Error(), "\n", "\n  "))
		} else {
			logProof(log, pr.Host, pr.Engine, pe.Parallelism)
			pe.Connect = Connector(pr.Engine, log)
		}
		engines = append(engines, pe)
	}
	if len(errs) == len(proofs) {
		return nil, fmt.Errorf("none of the Dagger engines of runner.dagger.hosts answers:\n  %s", strings.Join(errs, "\n  "))
	}
	return engines, nil
}

// logProof writes to log that the engine at host answers, its versions,
// how many gates it runs at once, and its warnings.
func logProof(log io.Writer, host string, e *Engine, parallelism int) {
	fmt.Fprintf(log, "setctl: %s answers: %s; it runs up to %d gates at once\n", host, e.Versions(), max(parallelism, 1))
	for _, w := range e.Warnings() {
		fmt.Fprintf(log, "setctl: warning: %s: %s\n", host, w)
	}
}

// oneLine is err's message on one line: a PreflightError's fix follows
// its cause after "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n  ", "; ")
}
