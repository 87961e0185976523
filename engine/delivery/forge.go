package delivery

import (
	"github.com/set-engine/set/engine/config"
)

// Token is the forge's API token of pull-request mode: the value of the
// environment variable delivery.forge.tokenEnv names, looked up with
// lookup (os.LookupEnv). An unset or empty variable is a
// *config.FieldError at delivery.forge.tokenEnv that names it: the run
// stops before any work, never half-way at its first pull request.
func Token(cfg *config.Project, lookup func(string) (string, bool)) (string, error) {
	f := cfg.Delivery.Forge
	if f == nil {
		return "", cfg.FieldError([]string{"delivery", "forge"}, "pull-request delivery needs a forge")
	}
	if v, ok := lookup(f.TokenEnv); ok && v != "" {
		return v, nil
	}
	return "", cfg.FieldError([]string{"delivery", "forge", "tokenEnv"},
		"the forge's token is read from $%s, which is not set or empty; set it to an API token that may open pull requests and post commit statuses (set never writes its value anywhere)", f.TokenEnv)
}
