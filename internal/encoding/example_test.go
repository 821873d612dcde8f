package encoding_test

import (
	"fmt"

	"github.com/adkskills/adkskills/internal/encoding"
)

func ExampleDecode() {
	// Declared utf-8: taken as is, even though it is valid base64.
	raw, _ := encoding.Decode("note.txt", []byte("aGVsbG8="), encoding.UTF8)
	fmt.Printf("%s\n", raw)
	// Declared base64: decoded once, whitespace and padding tolerated.
	raw, _ = encoding.Decode("note.txt", []byte("aGVsbG8\n"), encoding.Base64)
	fmt.Printf("%s\n", raw)
	_, err := encoding.Decode("dist/x.bin", []byte("!!"), encoding.Base64)
	fmt.Println(err)
	// Output:
	// aGVsbG8=
	// hello
	// encoding: invalid base64: file "dist/x.bin": illegal base64 data at input byte 0
}

func ExampleMIMEType() {
	fmt.Println(encoding.MIMEType("dist/report.MD", nil))
	fmt.Println(encoding.MIMEType("build/app.skill", nil))
	fmt.Println(encoding.MIMEType("out/chart", []byte("\x89PNG\r\n\x1a\n")))
	fmt.Println(encoding.MIMEType("Makefile", []byte("all:\n")))
	// Output:
	// text/markdown
	// application/zip
	// image/png
	// text/plain
}
