package delivery

import (
	"errors"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
)

// TestToken: the forge's token is the value of tokenEnv's variable; an
// unset or empty one is an error at delivery.forge.tokenEnv naming it.
func TestToken(t *testing.T) {
	cfg := &config.Project{Delivery: config.Delivery{Mode: config.DeliveryPullRequest, Remote: "origin",
		Forge: &config.Forge{Kind: "github", APIURL: "https://api.github.com", TokenEnv: "MY_FORGE_TOKEN"}}}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, v := range []*string{nil, new(string)} {
		delete(env, "MY_FORGE_TOKEN")
		if v != nil {
			env["MY_FORGE_TOKEN"] = *v
		}
		_, err := Token(cfg, lookup)
		var fe *config.FieldError
		if !errors.As(err, &fe) || strings.Join(fe.Path, ".") != "delivery.forge.tokenEnv" || !strings.Contains(fe.Msg, "$MY_FORGE_TOKEN") {
			t.Errorf("token %v: %v, want an error at delivery.forge.tokenEnv naming $MY_FORGE_TOKEN", v, err)
		}
	}
	env["MY_FORGE_TOKEN"] = "ghp_x"
	if tok, err := Token(cfg, lookup); err != nil || tok != "ghp_x" {
		t.Errorf("Token = %q, %v", tok, err)
	}
}
