// Package scripted holds two model.LLM implementations that need no key and
// no network, for tests and demos of agents that use skills:
//
//   - Model answers from a script of steps (call this tool, then say that),
//     and records every request it is sent: a stand-in for Gemini in tests
//     through ADK's real runner;
//   - Demo turns a user's message into the script tools' calls, word for
//     word ("run SKILL SCRIPT [ARGS...]"; see ParseMessage), answers any
//     other message with the skills it was given and how to ask, and sums
//     up each tool response. adkskills web --demo and chat --demo use it.
//
// Both are driven by ADK's own flow: the calls, their responses, the
// confirmation of an inline script and the artifacts a run saves show
// exactly as they do with a real model.
package scripted

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// Step answers one model call; an error surfaces from runner.Run.
type Step func(req *model.LLMRequest) (*genai.Content, error)

// Model answers its n-th call with its n-th step. A call past the last step
// is an error. It is safe for concurrent use.
type Model struct {
	name string

	mu       sync.Mutex
	steps    []Step
	requests []*model.LLMRequest
}

// New returns a Model called name that answers with steps.
func New(name string, steps ...Step) *Model {
	return &Model{name: name, steps: steps}
}

// Name implements model.LLM.
func (m *Model) Name() string { return m.name }

// GenerateContent implements model.LLM: it records req and answers with the
// next step.
func (m *Model) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		i := len(m.requests)
		m.requests = append(m.requests, req)
		var step Step
		if i < len(m.steps) {
			step = m.steps[i]
		}
		n := len(m.steps)
		m.mu.Unlock()
		if step == nil {
			yield(nil, fmt.Errorf("scripted model %s: unexpected call %d (only %d steps)", m.name, i+1, n))
			return
		}
		c, err := step(req)
		if err != nil {
			yield(nil, err)
			return
		}
		yield(&model.LLMResponse{Content: c}, nil)
	}
}

// Append adds steps after the last one, for a further turn.
func (m *Model) Append(steps ...Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// Requests returns the requests received so far, in order.
func (m *Model) Requests() []*model.LLMRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Call is a step that calls the tool name with args.
func Call(name string, args map[string]any) Step {
	return func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromFunctionCall(name, args, genai.RoleModel), nil
	}
}

// Say is a step that ends the turn with text.
func Say(text string) Step {
	return func(*model.LLMRequest) (*genai.Content, error) {
		return genai.NewContentFromText(text, genai.RoleModel), nil
	}
}
