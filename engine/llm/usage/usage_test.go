package usage

import (
	"encoding/json"
	"testing"
)

// TestTokensJSON: the tokens object of the journal's events, byte for
// byte, cache counts left out when zero.
func TestTokensJSON(t *testing.T) {
	for _, tc := range []struct {
		tokens Tokens
		want   string
	}{
		{Tokens{Input: 10, Output: 5}, `{"input":10,"output":5}`},
		{Tokens{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}, `{"input":1,"output":2,"cacheRead":3,"cacheWrite":4}`},
	} {
		got, err := json.Marshal(tc.tokens)
		if err != nil || string(got) != tc.want {
			t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.tokens, got, err, tc.want)
		}
	}
}

func TestTokensAddAndTotal(t *testing.T) {
	sum := Tokens{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}.Add(Tokens{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40})
	if want := (Tokens{11, 22, 33, 44}); sum != want {
		t.Errorf("Add = %+v, want %+v", sum, want)
	}
	if sum.Total() != 110 {
		t.Errorf("Total = %d, want 110", sum.Total())
	}
}
