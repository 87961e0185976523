package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/runner/dagger"
)

// TestDoctorDaggerHosts: doctor proves every engine of runner.dagger.hosts
// and reports each; one that does not answer is a warning while another
// does, since the run's gates go to the one that answers.
func TestDoctorDaggerHosts(t *testing.T) {
	v := "v" + dagger.SDKEngineVersion
	engine := engineServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":{"version":%q}}`, v)
	}))
	up := "tcp://" + engine.Listener.Addr().String()
	down := "tcp://127.0.0.1:9"

	port := engine.Listener.Addr().(*net.TCPAddr).Port
	// `dagger session` opens a session whose API is the fake engine; the
	// environment's engine is one set must not ask.
	session := fmt.Sprintf("echo '{\"port\":%d,\"session_token\":\"tok\"}'\ncat > /dev/null", port)
	dir := daggerProject(t, session, "tcp://the-environments-engine:1234",
		fmt.Sprintf("\trunner: dagger: hosts: %q: parallelism: 3\n\trunner: dagger: hosts: %q: {}\n", up, down))

	var stdout, stderr strings.Builder
	code := Main([]string{"-C", dir, "doctor"}, testProcess(&stdout, &stderr))
	if code != exitOK {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitOK, stderr.String())
	}
	want := "ok    runner   dagger: " + up + " answers: engine " + v + ", CLI " + v + "; up to 3 gates at once\n" +
		"warn  runner   dagger: " + down + " does not answer, so its gates go to the others until it does: no Dagger engine: the engine at " + down +
		": dial tcp 127.0.0.1:9: connect: connection refused; fix: start the engine at " + down + ", or fix runner.dagger.hosts; or run the gates on the host: runner: kind: \"host\"\n"
	if !strings.Contains(stdout.String(), "\n"+want) || !strings.HasSuffix(stdout.String(), "This project can run here.\n") {
		t.Errorf("stdout:\n%s\nwant the lines\n%s", stdout.String(), want)
	}
}
