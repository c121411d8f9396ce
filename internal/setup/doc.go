// Package setup owns engram's installation: the two hooks in Claude Code's
// settings.json, the MCP server in its user configuration file, the
// CLAUDE.md line that imports engram's MEMORY.md, the scheduler that runs
// `engram-worker run` (a systemd user timer, a launchd agent, or an entry
// in the user's crontab), and the reading of the worker's env file.
// `engram-worker setup` and `uninstall` call Install and Uninstall; the
// pieces are exported for `doctor` and tests.
//
// # The user's files stay theirs, byte for byte
//
// settings.json and CLAUDE.md are edited as text, guided by a real parse
// (encoding/json decides validity and reports the position of an error; a
// small positional parser then gives the byte offsets of every value).
// Setup splices in only its own entries, laid out like their neighbours
// (indentation unit, key/value spacing, CRLF), so every other byte — key
// order, formatting, escapes, numbers — is unchanged. Re-encoding with
// encoding/json was ruled out: it reorders keys and reformats the file.
//
// Uninstall must give back the original bytes. Setup's edit is a
// deterministic function of the original, so no state file is needed: each
// change of an existing file first copies it to
// <file>.engram-backup-<UTC time> (0600), and uninstall looks, newest first,
// for a backup without engram's entries from which setup's edit reproduces
// the current file exactly (or, failing that, for "no file at all", when
// setup had created it). Found, the file has not been touched since setup:
// the backup's bytes are put back (or the file removed). Not found, the user
// edited the file since: only engram's entries are cut out, together with
// the containers that held nothing else, and the separator that came with
// them (for the CLAUDE.md line, a blank line that would otherwise open the
// file or double another); the user's edits stay. Appending an item and
// removing the last item are exact inverses, so in the common case even
// this path restores the original text. Cutting makes no backup, and once
// a file holds none of engram's entries uninstall deletes the backups setup
// made of it: engram leaves no file of its own behind.
//
// Engram's hook entries are recognised by the base name of the program their
// command runs (engram-hook-userprompt under UserPromptSubmit,
// engram-hook-stop under Stop), so a reinstall at another prefix updates the
// command in place instead of adding a second entry. Other hooks, even in
// the same matcher group, are never touched. A symlinked settings.json or
// CLAUDE.md is written through only when its target lies inside the same
// directory.
//
// engram's MCP server (`engram-worker mcp`) is registered the same way as a
// user-scope server in the file Claude Code reads those from (~/.claude.json,
// or $CLAUDE_CONFIG_DIR/.claude.json; see UserConfigFile): appendItem on
// "mcpServers" (created like "hooks"), the entry recognised by its key
// "engram" and a command whose base name is engram-worker, with the same
// backup-and-reproduce rule for removal. The client rewrites that file
// itself (start-up counters, per-project state), so uninstall usually takes
// the cut-out path there. An "engram" server that is not engram-worker is
// the user's and is left alone.
//
// # Scheduling
//
// Linux: engram-worker.service (oneshot) and engram-worker.timer in
// $XDG_CONFIG_HOME/systemd/user, enabled with `systemctl --user`, when
// `systemctl --user is-system-running` answers. macOS: a launchd agent in
// ~/Library/LaunchAgents, loaded with `launchctl bootstrap gui/<uid>`
// (falling back to `launchctl load -w`). Elsewhere, or with no user
// manager (a container), a crontab entry; with no crontab command either,
// Install schedules nothing and says what runs the worker instead (the
// Stop hook's fallback) rather than failing.
// systemd reads ENGRAM_HOME/env with EnvironmentFile=; launchd and cron
// cannot, so the worker must call LoadEnvFile itself at start.
package setup
