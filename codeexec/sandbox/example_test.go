package sandbox_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/sandbox"
)

func ExampleNew() {
	// A sandbox runs the script under bubblewrap: no network, a read-only
	// system, only its workspace and a private /tmp writable, an
	// unprivileged user, no capabilities, resource limits.
	sb := sandbox.New(
		sandbox.WithMemoryLimit(512<<20),
		sandbox.WithProcessLimit(64),
	)
	ctx := context.Background()
	// At start-up: fail early, saying how to fix it, when this machine
	// cannot isolate (the error wraps codeexec.ErrSandboxUnavailable).
	if err := sb.Probe(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := sb.Execute(ctx, &codeexec.Request{
		Files: []codeexec.File{{Path: "scripts/check.py", Data: []byte(`import os, socket
print("root:", os.getuid() == 0)
try:
    socket.create_connection(("example.com", 80), timeout=2)
    print("network: yes")
except OSError:
    print("network: no")
print("cwd:", os.getcwd())
open("report.txt", "w").write("done\n")
`)}},
		Script: "scripts/check.py",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d\n", res.ExitCode)
	fmt.Print(res.Stdout.Text)
	for _, f := range res.Files {
		fmt.Printf("wrote %s: %q\n", f.Path, f.Data)
	}
	// Output:
	// exit 0
	// root: False
	// network: no
	// cwd: /workspace/skill
	// wrote report.txt: "done\n"
}

func ExampleWithEgress() {
	// Scripts may reach the package index over HTTPS, through the agent's
	// proxy, and nothing else; what they were refused comes back as a
	// warning for the model.
	sb := sandbox.New(sandbox.WithEgress("pypi.org:443", "files.pythonhosted.org:443"))
	ctx := context.Background()
	if err := sb.Probe(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := sb.Execute(ctx, &codeexec.Request{
		Files: []codeexec.File{{Path: "scripts/fetch.py", Data: []byte(`import os, urllib.request
print("proxy:", os.environ["HTTPS_PROXY"])
try:
    urllib.request.urlopen("https://example.com/", timeout=10)
except OSError as e:
    print("example.com:", e.reason)
`)}},
		Script: "scripts/fetch.py",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Stdout.Text)
	fmt.Println(res.Warnings)
	// Output:
	// proxy: http://127.0.0.1:3128
	// example.com: Tunnel connection failed: 403 Forbidden (egress: example.com:443 is not on the egress allowlist)
	// [the sandbox's network refused: example.com:443 (is not on the egress allowlist). Only the hosts on the egress allowlist are reachable; the operator can add HOST:PORT entries.]
}
