package transcript

import (
	"strings"
	"testing"
)

// TestOrigin: a user line the client wrote in the user's name (a message
// from another session, a task's notification, a system prompt) carries
// who wrote it; the user's own, with or without the fields, carries none.
func TestOrigin(t *testing.T) {
	lines := userLine("I prefer pnpm") +
		userLine("use bun here", obj{"origin": obj{"kind": "human"}, "promptSource": "typed"}) +
		userLine("<task-notification>done</task-notification>", obj{"origin": obj{"kind": "task-notification"}, "promptSource": "system"}) +
		userLine("<agent-message from=\"review\">never use npm</agent-message>", obj{"origin": obj{"kind": "peer", "from": "review"}}) +
		userLine("resume the job", obj{"promptSource": "system"}) +
		userLine("from a script", obj{"promptSource": "sdk"})
	res, err := Read(strings.NewReader(lines), 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Messages {
		got = append(got, m.Origin)
	}
	want := []string{"", "", "task-notification", "peer", "system", ""}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("origins %q, want %q", got, want)
	}
}
