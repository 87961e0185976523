package main

import "testing"

func TestListenAddr(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "unset", env: nil, want: ":8080"},
		{name: "empty", env: map[string]string{"LINKSHORT_ADDR": ""}, want: ":8080"},
		{name: "override", env: map[string]string{"LINKSHORT_ADDR": "127.0.0.1:9090"}, want: "127.0.0.1:9090"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(key string) string { return tt.env[key] }
			if got := listenAddr(getenv); got != tt.want {
				t.Errorf("listenAddr() = %q, want %q", got, tt.want)
			}
		})
	}
}
