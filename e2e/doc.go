// Package e2e holds engram's end-to-end tests: they run the real Claude
// Code client offline against internal/anthropicstub, with engram's hooks
// installed in a throw-away HOME, and check what ends up in the store.
//
// The client binary is found through ENGRAM_CLAUDE_BIN, else at
// <repo root>/node_modules/@anthropic-ai/claude-code-linux-x64/claude
// (`npm install @anthropic-ai/claude-code@2.1.330` in the repository root);
// without it the tests skip.
package e2e
