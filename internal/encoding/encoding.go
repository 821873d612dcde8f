// Package encoding normalizes the content of a file an executor returns to
// raw bytes, from the encoding the executor declared, and names its MIME
// type. Both answers are the same on every machine: nothing here reads the
// host's MIME databases.
package encoding

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	pathpkg "path"
	"strings"
)

// Encodings a file may declare for its content (codeexec.File.Encoding
// re-exports them).
const (
	// Raw (the zero value): the content is the file's bytes.
	Raw = ""
	// UTF8: the content is the bytes of UTF-8 text, taken as is.
	UTF8 = "utf-8"
	// Base64: the content is base64 of the file's bytes (remote executors
	// that return files inside JSON use this).
	Base64 = "base64"
)

// Sentinel errors returned (wrapped) by Decode.
var (
	// ErrInvalidBase64: content declared base64 does not decode.
	ErrInvalidBase64 = errors.New("encoding: invalid base64")
	// ErrUnknownEncoding: the declared encoding is none Decode knows.
	ErrUnknownEncoding = errors.New("encoding: unknown encoding")
)

// Decode returns the raw bytes of the file at path (used only in errors)
// whose content data is in the declared encoding enc:
//
//   - [Raw] (""): data is returned as is.
//   - [UTF8] ("utf-8", also "utf8"): data is returned as is,
//     never base64-decoded even when it happens to be valid base64.
//   - [Base64] ("base64"): data is decoded exactly once. The
//     standard and URL-safe alphabets are accepted, padded or not, and ASCII
//     whitespace anywhere (line wrapping, a trailing newline) is ignored.
//
// Encoding names match case-insensitively. When data is returned as is, it
// is the same slice, not a copy. Bad base64 yields an error wrapping
// [ErrInvalidBase64] that names path; an unknown encoding yields an error
// wrapping [ErrUnknownEncoding] that names it and path.
func Decode(path string, data []byte, enc string) ([]byte, error) {
	switch strings.ToLower(enc) {
	case Raw, UTF8, "utf8":
		return data, nil
	case Base64:
		out, err := decodeBase64(data)
		if err != nil {
			return nil, fmt.Errorf("%w: file %q: %w", ErrInvalidBase64, path, err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w %q for file %q", ErrUnknownEncoding, enc, path)
	}
}

// decodeBase64 decodes data in whichever base64 dialect it is written in.
func decodeBase64(data []byte) ([]byte, error) {
	clean := make([]byte, 0, len(data))
	url := false
	for _, b := range data {
		switch b {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			continue
		case '-', '_':
			url = true
		}
		clean = append(clean, b)
	}
	// Padding is optional: strip it and decode without. A '=' anywhere
	// else is left in and rejected by the decoder.
	clean = bytes.TrimRight(clean, "=")
	enc := base64.RawStdEncoding
	if url {
		enc = base64.RawURLEncoding
	}
	out := make([]byte, enc.DecodedLen(len(clean)))
	n, err := enc.Decode(out, clean)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}

// mimeTypes maps a lower-case file extension to its MIME type. It includes
// every entry of Go's built-in mime table, so that consulting
// mime.TypeByExtension (whose answer depends on the host's /etc/mime.types)
// is never needed.
var mimeTypes = map[string]string{
	// Text and source.
	".txt":      "text/plain",
	".text":     "text/plain",
	".log":      "text/plain",
	".ini":      "text/plain",
	".cfg":      "text/plain",
	".conf":     "text/plain",
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".py":       "text/x-python",
	".sh":       "text/x-shellscript",
	".bash":     "text/x-shellscript",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".cjs":      "text/javascript",
	".ts":       "text/x-typescript",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	// Structured data.
	".json":   "application/json",
	".jsonl":  "application/jsonl",
	".ndjson": "application/jsonl",
	".ipynb":  "application/x-ipynb+json",
	".xml":    "application/xml",
	".yaml":   "application/yaml",
	".yml":    "application/yaml",
	".toml":   "application/toml",
	".wasm":   "application/wasm",
	// Images.
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".avif": "image/avif",
	".bmp":  "image/bmp",
	".ico":  "image/vnd.microsoft.icon",
	".tif":  "image/tiff",
	".tiff": "image/tiff",
	// Documents.
	".pdf":  "application/pdf",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	// Archives (a packaged .skill is a zip).
	".zip":   "application/zip",
	".skill": "application/zip",
	".gz":    "application/gzip",
	".tgz":   "application/gzip",
	".tar":   "application/x-tar",
	".bz2":   "application/x-bzip2",
	".xz":    "application/x-xz",
	// Audio and video.
	".mp3": "audio/mpeg",
	".wav": "audio/wav",
	".mp4": "video/mp4",
}

// MIMEType returns the MIME type of the file at path (relative, "/"
// separated) with content data. It looks the extension up, case-insensitively,
// in a fixed table of the types skills produce; for any other file it sniffs
// data with http.DetectContentType, mapping the few types that function
// names differently to the table's names (e.g. "application/gzip"). The
// answer is a bare media type, lower case and without parameters
// ("text/markdown", "text/plain", never "text/plain; charset=utf-8"), and
// depends only on path and data, never on the machine.
func MIMEType(path string, data []byte) string {
	if t, ok := mimeTypes[strings.ToLower(pathpkg.Ext(path))]; ok {
		return t
	}
	t, _, _ := strings.Cut(http.DetectContentType(data), ";")
	t = strings.TrimSpace(t)
	if alias, ok := sniffedAliases[t]; ok {
		return alias
	}
	return t
}

// sniffedAliases maps the types http.DetectContentType answers with to the
// ones the table uses for the same content, so a file gets one type whether
// its extension or its content names it.
var sniffedAliases = map[string]string{
	"application/x-gzip": "application/gzip",
	"text/xml":           "application/xml",
	"audio/wave":         "audio/wav",
	"image/x-icon":       "image/vnd.microsoft.icon",
}
