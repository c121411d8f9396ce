package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// MatchingMemories lists the episodes and the beliefs that hold text, newest
// first: its words in that order, as the full-text index reads them (case,
// diacritics and word endings aside: "deploy" finds "Deploys"), or the text
// itself, case-insensitively (ASCII), anywhere in an episode's summary,
// context or the captured turns it was made from, or in a belief's
// statement. It is what forget by search removes, so it errs towards
// finding more: the caller shows the list before anything goes.
func (db *DB) MatchingMemories(ctx context.Context, text string) (episodeIDs, beliefIDs []string, err error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil, fmt.Errorf("store: match: empty text")
	}
	// One FTS5 phrase: the text's tokens in sequence; a quote inside is
	// doubled. A text with no token at all matches nothing this way.
	phrase := `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
	like := "%" + likeEscaper.Replace(text) + "%"
	err = db.read(ctx, func(tx *sql.Tx) error {
		err := eachRow(ctx, tx, `SELECT id FROM episodes WHERE seq IN (SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?)
			OR summary LIKE ? ESCAPE '\' OR context LIKE ? ESCAPE '\'
			OR id IN (SELECT episode_id FROM captures WHERE episode_id != '' AND content LIKE ? ESCAPE '\')
			ORDER BY seq DESC`, []any{phrase, like, like, like}, func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			episodeIDs = append(episodeIDs, id)
			return err
		})
		if err != nil {
			return err
		}
		return eachRow(ctx, tx, `SELECT id FROM beliefs WHERE seq IN (SELECT rowid FROM beliefs_fts WHERE beliefs_fts MATCH ?)
			OR statement LIKE ? ESCAPE '\' ORDER BY seq DESC`, []any{phrase, like}, func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			beliefIDs = append(beliefIDs, id)
			return err
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: memories matching %q: %w", text, err)
	}
	return episodeIDs, beliefIDs, nil
}

// likeEscaper makes a text match itself in LIKE … ESCAPE '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
