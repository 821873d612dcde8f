package local_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
)

func ExampleNew() {
	// A Local runs the script as a host subprocess: no isolation.
	exec := local.New()
	res, err := exec.Execute(context.Background(), &codeexec.Request{
		Files: []codeexec.File{
			{Path: "scripts/greet.sh", Data: []byte("echo \"hello, $1\"\necho report > report.txt\n")},
			{Path: "references/notes.md", Data: []byte("# notes\n")},
		},
		Script: "scripts/greet.sh", // bash, chosen by extension
		Args:   []string{"world"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d, timed out %v\n", res.ExitCode, res.TimedOut)
	fmt.Print(res.Stdout.Text)
	for _, f := range res.Files {
		fmt.Printf("wrote %s: %q\n", f.Path, f.Data)
	}
	// Output:
	// exit 0, timed out false
	// hello, world
	// wrote report.txt: "report\n"
}
