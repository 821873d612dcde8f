package scripted

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// answer runs one model call and returns its content or error.
func answer(m *Model, req *model.LLMRequest) (*genai.Content, error) {
	for resp, err := range m.GenerateContent(context.Background(), req, false) {
		if err != nil {
			return nil, err
		}
		return resp.Content, nil
	}
	return nil, errors.New("no answer")
}

func TestModelFollowsItsSteps(t *testing.T) {
	boom := errors.New("boom")
	m := New("m", Call("tool", map[string]any{"a": 1.0}), func(*model.LLMRequest) (*genai.Content, error) { return nil, boom })
	assert.Equal(t, "m", m.Name())
	reqs := []*model.LLMRequest{{Model: "1"}, {Model: "2"}, {Model: "3"}, {Model: "4"}}

	c, err := answer(m, reqs[0])
	require.NoError(t, err)
	assert.Equal(t, "tool", c.Parts[0].FunctionCall.Name)
	assert.Equal(t, map[string]any{"a": 1.0}, c.Parts[0].FunctionCall.Args)
	_, err = answer(m, reqs[1])
	assert.ErrorIs(t, err, boom)

	m.Append(Say("later"))
	c, err = answer(m, reqs[2])
	require.NoError(t, err)
	assert.Equal(t, "later", c.Parts[0].Text)
	assert.Equal(t, genai.RoleModel, c.Role)
	_, err = answer(m, reqs[3])
	assert.ErrorContains(t, err, "unexpected call 4 (only 3 steps)")
	assert.Equal(t, reqs, m.Requests(), "every request is recorded, failed ones too")
}
