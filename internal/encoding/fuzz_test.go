package encoding

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	pathpkg "path"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; as-is encodings return the input;
// whatever base64 dialect encodes data, Decode recovers it, once.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello"), "base64")
	f.Add([]byte("aGVsbG8="), "utf-8")
	f.Add([]byte(" YQ==\n"), "BASE64")
	f.Add([]byte("\x00\xff"), "")
	f.Add([]byte("ab+-"), "base64")
	f.Add([]byte("x"), "latin1")
	f.Fuzz(func(t *testing.T, data []byte, enc string) {
		got, err := Decode("f.bin", data, enc)
		switch strings.ToLower(enc) {
		case Raw, UTF8, "utf8":
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Decode(%q, %q) = %q, %v; want the input", data, enc, got, err)
			}
		case Base64:
			if err != nil && !errors.Is(err, ErrInvalidBase64) {
				t.Fatalf("Decode(%q, base64) error %v does not wrap ErrInvalidBase64", data, err)
			}
			if err == nil && len(got) > len(data)*3/4 {
				t.Fatalf("Decode(%q, base64) = %d bytes, more than base64 can hold", data, len(got))
			}
		default:
			if !errors.Is(err, ErrUnknownEncoding) || got != nil {
				t.Fatalf("Decode(%q, %q) = %q, %v; want ErrUnknownEncoding", data, enc, got, err)
			}
		}
		for _, e := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			enc := []byte(e.EncodeToString(data) + "\n")
			got, err := Decode("f.bin", enc, Base64)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Decode(%q) = %q, %v; want %q", enc, got, err, data)
			}
		}
	})
}

// FuzzMIMEType: MIMEType never panics and always answers a bare, lower-case
// media type; a known extension decides regardless of content, and anything
// else is what http.DetectContentType sniffs.
func FuzzMIMEType(f *testing.F) {
	f.Add("report.md", []byte("# hi"))
	f.Add("x", []byte("\x89PNG\r\n\x1a\n"))
	f.Add(`a\b.PDF`, []byte{})
	f.Add("a.tar.gz", []byte("\x1f\x8b"))
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		got := MIMEType(path, data)
		if got == "" || strings.ContainsAny(got, "; ") || got != strings.ToLower(got) || strings.Count(got, "/") != 1 {
			t.Fatalf("MIMEType(%q) = %q, not a bare lower-case media type", path, got)
		}
		if again := MIMEType(path, data); again != got {
			t.Fatalf("MIMEType(%q) is not deterministic: %q then %q", path, got, again)
		}
		if typ, ok := mimeTypes[strings.ToLower(pathpkg.Ext(path))]; ok {
			if got != typ {
				t.Fatalf("MIMEType(%q) = %q, the table says %q", path, got, typ)
			}
			return
		}
		sniffed, _, _ := strings.Cut(http.DetectContentType(data), ";")
		if alias, ok := sniffedAliases[sniffed]; ok {
			sniffed = alias
		}
		if got != sniffed {
			t.Fatalf("MIMEType(%q) = %q, sniffed %q", path, got, sniffed)
		}
	})
}
