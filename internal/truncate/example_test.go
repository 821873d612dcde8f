package truncate_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/adkskills/adkskills/internal/truncate"
)

func ExampleString() {
	fmt.Println(truncate.String("short", 10))
	fmt.Println(truncate.String("0123456789abcdef", 10))
	// Output:
	// short
	// 0123
	// ... [truncated 6 of 16 characters: over the 10-character cap; head and tail kept] ...
	// abcdef
}

func ExampleNewCapper() {
	c := truncate.NewCapper(10)
	// Copy a stream of any size: the Capper keeps only 10 characters.
	_, _ = io.Copy(c, strings.NewReader("step 1 ok\nstep 2 ok\nstep 3 FAILED\n"))
	fmt.Println(c.TotalChars(), c.Truncated())
	fmt.Print(c.String())
	// Output:
	// 34 true
	// step
	// ... [truncated 24 of 34 characters: over the 10-character cap; head and tail kept] ...
	// AILED
}
