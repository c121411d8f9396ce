package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/engram-memory/engram/internal/inject"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/review"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolReview lists the beliefs waiting for review and decides on them.
const ToolReview = "memory_review"

// maxReviewIDs bounds the beliefs one call decides on.
const maxReviewIDs = 20

// ReviewInput is memory_review's arguments.
type ReviewInput struct {
	Action string   `json:"action"`
	IDs    []string `json:"ids,omitempty"`
	Target string   `json:"target,omitempty"`
}

const reviewSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "approve", "deny", "pin"],
      "description": "list: the beliefs waiting for review, best first. approve: move each to its next level (pending to long-term memory, long-term to core memory: the project's CLAUDE.md or AGENTS.md). deny: never show it again, and never form it again. pin: keep it shown for good."},
    "ids": {"type": "array", "maxItems": 20, "items": {"type": "string", "pattern": "^bl_[A-Za-z0-9_-]+$", "maxLength": 64},
      "description": "The beliefs to decide on (bl_…, as list shows them); not for list."},
    "target": {"type": "string", "enum": ["claude", "agents", "both"],
      "description": "For approve to core memory or pin: write the belief to the project's CLAUDE.md, AGENTS.md or both. A global belief has no AGENTS.md: it goes to the user's global CLAUDE.md. Default: the user's setting."}
  },
  "required": ["action"],
  "additionalProperties": false
}`

func (s *Server) addReviewTool() {
	tool(s, &mcp.Tool{Name: ToolReview, Title: "Review beliefs", Annotations: &mcp.ToolAnnotations{
		DestructiveHint: new(false), OpenWorldHint: new(false)}, Description: "List the beliefs engram learnt " +
		"that wait for the user's review before they reach long-term memory (MEMORY.md) or core memory (the project's " +
		"CLAUDE.md or AGENTS.md), and record the user's decisions on them. Use it when the user asks what engram has " +
		"learnt or wants to approve, reject (deny) or keep (pin) a belief, or when engram's note says beliefs wait for " +
		"review and the user wants to go through them. Decide only what the user decided: show the list, ask, then " +
		"approve, deny or pin the IDs they chose. A denied belief is never shown or formed again; a pinned one is never " +
		"dropped. Every decision is recorded as the model's. An unknown ID, or a decision already made, is refused and " +
		"nothing is decided."}, reviewSchema, s.review)
}

// review is memory_review.
func (s *Server) review(ctx context.Context, in ReviewInput) (string, error) {
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	now := s.opts.Now()
	if in.Action == "list" {
		if len(in.IDs) > 0 || in.Target != "" {
			return "", errors.New("list takes no ids or target")
		}
		q, err := review.Queue(ctx, db, s.cfg.Review, now)
		if err != nil {
			return "", err
		}
		if len(q) == 0 {
			return inject.Wrap("Nothing waits for review."), nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d beliefs wait for review, best first:\n", len(q))
		for _, it := range q {
			where := "global"
			if it.ProjectPath != "" {
				where = "project " + it.ProjectPath
			}
			fmt.Fprintf(&b, "- %s: %s (%s -> %s; confidence %.2f, evidence %d, %s)\n", it.ID, clipLine(it.Statement),
				review.LevelName(it.Level), review.LevelName(it.Proposed), it.Confidence(), it.EvidenceCount, where)
		}
		return inject.Wrap(strings.TrimRight(b.String(), "\n")), nil
	}
	switch in.Action {
	case review.Approve, review.Deny, review.Pin:
	default:
		return "", fmt.Errorf("action %q: want list, approve, deny or pin", in.Action)
	}
	if len(in.IDs) == 0 || len(in.IDs) > maxReviewIDs {
		return "", fmt.Errorf("%s wants 1 to %d belief IDs (bl_…), got %d", in.Action, maxReviewIDs, len(in.IDs))
	}
	var reqs []review.Request
	for _, raw := range in.IDs {
		id, err := checkID(raw)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(id, "bl_") {
			return "", fmt.Errorf("id %q: want a belief ID (bl_…); nothing was decided", raw)
		}
		reqs = append(reqs, review.Request{ID: id, Action: in.Action, Target: in.Target})
	}
	co := review.CoreOptions{Locations: promote.LocationsFrom(s.cfg), Target: s.cfg.CoreTarget, Write: s.cfg.Promote}
	ds, err := review.DecideAndWrite(ctx, db, co, review.ByModel, reqs, now)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was decided", err)
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s: %s, %s -> %s", d.BeliefID, d.Decision, review.LevelName(d.Before), review.LevelName(d.After))
		if note, err := review.CoreNote(ctx, db, co, d); err == nil && note != "" {
			fmt.Fprintf(&b, " (%s)", note)
		}
		b.WriteString("\n")
	}
	return inject.Wrap(strings.TrimRight(b.String(), "\n")), nil
}
