package transcript

import "strings"

// Turns splits msgs into turns, each starting at a prompt. Messages before
// the first prompt continue a turn whose prompt an earlier read consumed;
// they form the first group on their own.
func Turns(msgs []Message) [][]Message {
	var turns [][]Message
	start := 0
	for i, m := range msgs {
		if m.Prompt && i > start {
			turns = append(turns, msgs[start:i:i])
			start = i
		}
	}
	if start < len(msgs) {
		turns = append(turns, msgs[start:])
	}
	return turns
}

// Render returns the conversation text of msgs, one paragraph per block, in
// the form the rest of engram stores and reads:
//
//	User: …
//	Assistant: …
//	Assistant used Bash: ls -la — List files
//	Tool result (Bash): …
func Render(msgs []Message) string {
	tools := map[string]string{} // tool_use id → tool name, of calls seen so far
	var b strings.Builder
	para := func(label, text string) {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(label)
		if text != "" {
			b.WriteString(": ")
			b.WriteString(text)
		}
	}
	for _, m := range msgs {
		for _, bl := range m.Blocks {
			switch bl.Kind {
			case KindText:
				who := "Assistant"
				if m.Role == "user" {
					who = "User"
				}
				para(who, bl.Text)
			case KindToolUse:
				if bl.ToolUseID != "" {
					tools[bl.ToolUseID] = bl.Tool
				}
				tool := bl.Tool
				if tool == "" {
					tool = "a tool"
				}
				para("Assistant used "+tool, bl.Text)
			case KindToolResult:
				label := "Tool result"
				if bl.IsError {
					label = "Tool error"
				}
				if name := tools[bl.ToolUseID]; name != "" {
					label += " (" + name + ")"
				}
				para(label, strings.TrimRight(bl.Text, " \t\r\n"))
			}
		}
	}
	return b.String()
}
