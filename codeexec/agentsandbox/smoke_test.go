package agentsandbox

import (
	"context"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
)

func TestSmoke(t *testing.T) {
	c := newCluster(t)
	e := c.executor()
	res, err := e.Execute(context.Background(), &codeexec.Request{
		Files:  []codeexec.File{{Path: "scripts/a.py", Data: []byte("import sys, os\nprint('hi', sys.argv[1:], os.getcwd())\nopen('out.txt','w').write(sys.stdin.read())\n")}},
		Script: "scripts/a.py",
		Args:   []string{"x y", "$HOME"},
		Stdin:  []byte("from stdin"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	t.Log(c.counts())
}
