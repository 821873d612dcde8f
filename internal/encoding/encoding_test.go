package encoding

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allBytes holds every byte value, so a round trip proves binary survives.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// wrap inserts a newline every width characters, as MIME base64 does.
func wrap(s string, width int) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width])
		b.WriteString("\r\n")
		s = s[width:]
	}
	b.WriteString(s)
	return b.String()
}

func TestDecode(t *testing.T) {
	bin := allBytes()
	const path = "dist/report.bin"
	tests := []struct {
		name string
		data string
		enc  string
		want []byte
	}{
		{"raw as is", string(bin), Raw, bin},
		{"raw empty", "", Raw, []byte{}},
		{"utf-8 as is", "héllo\n", UTF8, []byte("héllo\n")},
		{"utf-8 that looks like base64 is not decoded", "aGVsbG8=", UTF8, []byte("aGVsbG8=")},
		{"utf-8 hello is not decoded", "hello", UTF8, []byte("hello")},
		{"utf8 spelling", "abcd", "utf8", []byte("abcd")},
		{"UTF-8 upper case", "abcd", "UTF-8", []byte("abcd")},
		{"base64 std", base64.StdEncoding.EncodeToString(bin), Base64, bin},
		{"base64 raw std", base64.RawStdEncoding.EncodeToString(bin), Base64, bin},
		{"base64 url", base64.URLEncoding.EncodeToString(bin), Base64, bin},
		{"base64 raw url", base64.RawURLEncoding.EncodeToString(bin), Base64, bin},
		{"base64 upper case name", base64.StdEncoding.EncodeToString(bin), "Base64", bin},
		{"base64 surrounding whitespace", " \t\n" + base64.StdEncoding.EncodeToString(bin) + "\r\n\n", Base64, bin},
		{"base64 wrapped at 76", wrap(base64.StdEncoding.EncodeToString(bin), 76) + "\n", Base64, bin},
		{"base64 decoded once, not twice", base64.StdEncoding.EncodeToString([]byte("aGVsbG8=")), Base64, []byte("aGVsbG8=")},
		{"base64 one byte padded", "YQ==", Base64, []byte("a")},
		{"base64 one byte unpadded", "YQ", Base64, []byte("a")},
		{"base64 empty", "", Base64, []byte{}},
		{"base64 only whitespace", " \n", Base64, []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(path, []byte(tc.data), tc.enc)
			require.NoError(t, err)
			assert.Equal(t, string(tc.want), string(got))
		})
	}
}

func TestDecodeAsIsReturnsTheSameSlice(t *testing.T) {
	data := []byte("aGVsbG8=")
	for _, enc := range []string{Raw, UTF8, "utf8"} {
		got, err := Decode("a.txt", data, enc)
		require.NoError(t, err)
		assert.Same(t, &data[0], &got[0], "encoding %q", enc)
	}
}

func TestDecodeErrors(t *testing.T) {
	const path = "out/weird name.bin"
	tests := []struct {
		name     string
		data     string
		enc      string
		sentinel error
		mentions []string
	}{
		{"not base64", "!!!!", Base64, ErrInvalidBase64, []string{path}},
		{"mixed alphabets", "ab+-", Base64, ErrInvalidBase64, []string{path}},
		{"padding inside", "YQ==YQ==", Base64, ErrInvalidBase64, []string{path}},
		{"a lone sextet", "YWJjZ", Base64, ErrInvalidBase64, []string{path}},
		{"unknown encoding", "abc", "latin1", ErrUnknownEncoding, []string{path, `"latin1"`}},
		{"hex is not known", "6869", "hex", ErrUnknownEncoding, []string{path, `"hex"`}},
		{"utf-16 is not known", "abc", "utf-16", ErrUnknownEncoding, []string{path, `"utf-16"`}},
		{"padded name is not known", "abc", " base64", ErrUnknownEncoding, []string{path, `" base64"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(path, []byte(tc.data), tc.enc)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, tc.sentinel)
			other := ErrUnknownEncoding
			if errors.Is(tc.sentinel, ErrUnknownEncoding) {
				other = ErrInvalidBase64
			}
			assert.NotErrorIs(t, err, other)
			for _, m := range tc.mentions {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestMIMEType(t *testing.T) {
	// The table, entry by entry: these are the contract.
	want := map[string]string{
		".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".ini": "text/plain",
		".cfg": "text/plain", ".conf": "text/plain",
		".md": "text/markdown", ".markdown": "text/markdown",
		".py": "text/x-python", ".sh": "text/x-shellscript", ".bash": "text/x-shellscript",
		".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
		".ts": "text/x-typescript", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
		".html": "text/html", ".htm": "text/html", ".css": "text/css",
		".json": "application/json", ".jsonl": "application/jsonl", ".ndjson": "application/jsonl",
		".ipynb": "application/x-ipynb+json", ".xml": "application/xml",
		".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
		".wasm": "application/wasm",
		".svg":  "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
		".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif", ".bmp": "image/bmp",
		".ico": "image/vnd.microsoft.icon", ".tif": "image/tiff", ".tiff": "image/tiff",
		".pdf":  "application/pdf",
		".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
		".zip":  "application/zip", ".skill": "application/zip", ".gz": "application/gzip",
		".tgz": "application/gzip", ".tar": "application/x-tar", ".bz2": "application/x-bzip2",
		".xz":  "application/x-xz",
		".mp3": "audio/mpeg", ".wav": "audio/wav", ".mp4": "video/mp4",
	}
	assert.Equal(t, want, mimeTypes, "the table")
	png := []byte("\x89PNG\r\n\x1a\n")
	for ext, typ := range want {
		// The extension decides, whatever the content, in any case.
		assert.Equal(t, typ, MIMEType("out/file"+ext, png), ext)
		assert.Equal(t, typ, MIMEType("FILE"+strings.ToUpper(ext), nil), ext)
	}
}

func TestMIMETypeSniffs(t *testing.T) {
	tests := []struct {
		name string
		path string
		data string
		want string
	}{
		{"png without extension", "image", "\x89PNG\r\n\x1a\n\x00\x00", "image/png"},
		{"pdf with unknown extension", "report.out", "%PDF-1.7\n", "application/pdf"},
		{"zip without extension", "bundle", "PK\x03\x04rest", "application/zip"},
		{"gzip with unknown extension", "x.dat", "\x1f\x8b\x08\x00", "application/gzip"},
		{"html with unknown extension", "page.tmpl", "<!DOCTYPE html><html></html>", "text/html"},
		{"text drops its charset", "Makefile", "all:\n\techo hi\n", "text/plain"},
		{"empty", "empty", "", "text/plain"},
		{"xml sniffed as the table names it", "feed", "<?xml version=\"1.0\"?><a/>", "application/xml"},
		{"wav sniffed as the table names it", "sound", "RIFF\x00\x00\x00\x00WAVEfmt ", "audio/wav"},
		{"icon sniffed as the table names it", "favicon", "\x00\x00\x01\x00\x01\x00", "image/vnd.microsoft.icon"},
		{"binary", "blob.bin", "\x00\x01\x02\x03", "application/octet-stream"},
		{"tar.gz takes the last extension", "dist/x.tar.gz", "not really", "application/gzip"},
		{"dot file", ".env", "A=1\n", "text/plain"},
		{"extension of a directory is not the file's", "v1.md/notes", "plain", "text/plain"},
		{"backslash separated", `dist\report.PDF`, "", "application/pdf"},
		{"backslash directory with a dot", `v1.md\notes`, "plain", "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MIMEType(tc.path, []byte(tc.data)))
		})
	}
}

func TestSniffedAliasesNameTableTypes(t *testing.T) {
	types := map[string]bool{}
	for _, typ := range mimeTypes {
		types[typ] = true
	}
	for sniffed, alias := range sniffedAliases {
		assert.True(t, types[alias], "%s maps to %s, which the table does not use", sniffed, alias)
		assert.False(t, types[sniffed], "%s is a table type; it needs no alias", sniffed)
	}
}
