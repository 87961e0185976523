// Command set turns a product spec into merged code: it plans the spec into
// changes, has coding agents implement them, checks them with gates and
// merges them through a serial queue. Run `setctl help` for the commands.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], osProcess())) }

// osProcess is this process's standard streams and environment.
func osProcess() Process {
	return Process{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}
}
