package artifacttest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// Deliberately broken services: each is ADK's in-memory service with one
// bug a real implementation could have, and the suite must catch it.

// leakyList lists the artifacts of every session of the user, not just the
// session asked for: a List that scans the user's prefix.
type leakyList struct {
	artifact.Service
	mu       sync.Mutex
	sessions map[[2]string][]string // app and user -> sessions saved in
}

func (s *leakyList) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	r, err := s.Service.Save(ctx, req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	k := [2]string{req.AppName, req.UserID}
	if !slices.Contains(s.sessions[k], req.SessionID) {
		s.sessions[k] = append(s.sessions[k], req.SessionID)
	}
	s.mu.Unlock()
	return r, nil
}

func (s *leakyList) List(ctx context.Context, req *artifact.ListRequest) (*artifact.ListResponse, error) {
	r, err := s.Service.List(ctx, req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	sessions := slices.Clone(s.sessions[[2]string{req.AppName, req.UserID}])
	s.mu.Unlock()
	all := r.FileNames
	for _, session := range sessions {
		other, err := s.Service.List(ctx, &artifact.ListRequest{AppName: req.AppName, UserID: req.UserID, SessionID: session})
		if err != nil {
			return nil, err
		}
		all = append(all, other.FileNames...)
	}
	slices.Sort(all)
	return &artifact.ListResponse{FileNames: slices.Compact(all)}, nil
}

// countedVersions numbers a new version one more than the number of stored
// versions, not than the newest: once an older version is deleted, it hands
// out a number already in use.
type countedVersions struct {
	artifact.Service
	mu *sync.Mutex // one Save at a time: the count is wrong after a delete, never racy
}

func (s countedVersions) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Service.Save(ctx, req); err != nil {
		return nil, err
	}
	r, err := s.Service.Versions(ctx, &artifact.VersionsRequest{AppName: req.AppName, UserID: req.UserID, SessionID: req.SessionID, FileName: req.FileName})
	if err != nil {
		return nil, err
	}
	return &artifact.SaveResponse{Version: int64(len(r.Versions))}, nil
}

// racyVersions reads the newest version, then saves one more, with no lock
// between the two: concurrent saves get the same number.
type racyVersions struct{ artifact.Service }

func (s racyVersions) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	next := int64(1)
	r, err := s.Service.Versions(ctx, &artifact.VersionsRequest{AppName: req.AppName, UserID: req.UserID, SessionID: req.SessionID, FileName: req.FileName})
	if err == nil {
		next = r.Versions[0] + 1
	}
	time.Sleep(time.Millisecond) // the window a lock, or a create-if-absent, would close
	if _, err := s.Service.Save(ctx, req); err != nil {
		return nil, err
	}
	return &artifact.SaveResponse{Version: next}, nil
}

// renamed passes every name through to before the service it wraps sees
// it, and every name that service lists through back.
type renamed struct {
	artifact.Service
	to, back func(string) string
}

func (s renamed) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	r := *req
	r.FileName = s.to(r.FileName)
	return s.Service.Save(ctx, &r)
}

func (s renamed) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	r := *req
	r.FileName = s.to(r.FileName)
	return s.Service.Load(ctx, &r)
}

func (s renamed) Delete(ctx context.Context, req *artifact.DeleteRequest) error {
	r := *req
	r.FileName = s.to(r.FileName)
	return s.Service.Delete(ctx, &r)
}

func (s renamed) Versions(ctx context.Context, req *artifact.VersionsRequest) (*artifact.VersionsResponse, error) {
	r := *req
	r.FileName = s.to(r.FileName)
	return s.Service.Versions(ctx, &r)
}

func (s renamed) GetArtifactVersion(ctx context.Context, req *artifact.GetArtifactVersionRequest) (*artifact.GetArtifactVersionResponse, error) {
	r := *req
	r.FileName = s.to(r.FileName)
	return s.Service.GetArtifactVersion(ctx, &r)
}

func (s renamed) List(ctx context.Context, req *artifact.ListRequest) (*artifact.ListResponse, error) {
	r, err := s.Service.List(ctx, req)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range r.FileNames {
		names = append(names, s.back(n))
	}
	slices.Sort(names)
	return &artifact.ListResponse{FileNames: slices.Compact(names)}, nil
}

// noUserScope ignores the "user:" prefix: every artifact belongs to its
// session. It hides the prefix from the in-memory service, which would
// honour it.
func noUserScope(svc artifact.Service) artifact.Service {
	const hidden = "\x00session-scoped:"
	swap := func(from, to string) func(string) string {
		return func(name string) string {
			if rest, ok := strings.CutPrefix(name, from); ok {
				return to + rest
			}
			return name
		}
	}
	return renamed{svc, swap("user:", hidden), swap(hidden, "user:")}
}

// foldedCase treats names that differ only in case as one artifact, as a
// store that uses names as file names, unescaped, does on a
// case-insensitive file system (macOS, Windows).
func foldedCase(svc artifact.Service) artifact.Service {
	return renamed{svc, strings.ToLower, func(name string) string { return name }}
}

// payloadOnly keeps only a part's payload, its MIME type and which field
// held it, as a blob store that writes nothing else would: DisplayName,
// Thought, ThoughtSignature, PartMetadata, FileData and a Text beside
// InlineData are lost.
type payloadOnly struct{ artifact.Service }

func (s payloadOnly) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	r := *req
	if p := req.Part; p != nil && p.InlineData != nil {
		r.Part = &genai.Part{InlineData: &genai.Blob{Data: p.InlineData.Data, MIMEType: p.InlineData.MIMEType}}
	} else if p != nil {
		r.Part = &genai.Part{Text: p.Text}
	}
	return s.Service.Save(ctx, &r)
}

// plainNotFound reports a missing artifact with an error that does not
// match fs.ErrNotExist, so a caller cannot tell it from a failure.
type plainNotFound struct{ artifact.Service }

// plain turns a not-exist error into a plain one.
func plain(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no such artifact (%v)", err)
	}
	return err
}

func (s plainNotFound) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	r, err := s.Service.Load(ctx, req)
	return r, plain(err)
}

func (s plainNotFound) Versions(ctx context.Context, req *artifact.VersionsRequest) (*artifact.VersionsResponse, error) {
	r, err := s.Service.Versions(ctx, req)
	return r, plain(err)
}

func (s plainNotFound) GetArtifactVersion(ctx context.Context, req *artifact.GetArtifactVersionRequest) (*artifact.GetArtifactVersionResponse, error) {
	r, err := s.Service.GetArtifactVersion(ctx, req)
	return r, plain(err)
}
